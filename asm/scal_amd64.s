//go:build !purego

#include "textflag.h"

// func scalUnitaryAVX2(alpha float64, x []float64)
TEXT ·scalUnitaryAVX2(SB), NOSPLIT, $0-32
	VBROADCASTSD alpha+0(FP), Y0
	MOVQ         x_base+8(FP), SI
	MOVQ         x_len+16(FP), CX
	XORQ         AX, AX
	MOVQ         CX, DX
	ANDQ         $-16, DX
	JZ           quad

loop16:
	VMULPD  (SI)(AX*8), Y0, Y1
	VMULPD  32(SI)(AX*8), Y0, Y2
	VMULPD  64(SI)(AX*8), Y0, Y3
	VMULPD  96(SI)(AX*8), Y0, Y4
	VMOVUPD Y1, (SI)(AX*8)
	VMOVUPD Y2, 32(SI)(AX*8)
	VMOVUPD Y3, 64(SI)(AX*8)
	VMOVUPD Y4, 96(SI)(AX*8)
	ADDQ    $16, AX
	CMPQ    AX, DX
	JL      loop16

quad:
	MOVQ CX, DX
	ANDQ $-4, DX
	CMPQ AX, DX
	JGE  tail

loop4:
	VMULPD  (SI)(AX*8), Y0, Y1
	VMOVUPD Y1, (SI)(AX*8)
	ADDQ    $4, AX
	CMPQ    AX, DX
	JL      loop4

tail:
	CMPQ AX, CX
	JGE  done

loop1:
	VMULSD (SI)(AX*8), X0, X1
	VMOVSD X1, (SI)(AX*8)
	INCQ   AX
	CMPQ   AX, CX
	JL     loop1

done:
	VZEROUPPER
	RET

// func scalIncAVX2(alpha float64, x []float64, n, incX uintptr)
TEXT ·scalIncAVX2(SB), NOSPLIT, $0-48
	VMOVSD alpha+0(FP), X0
	MOVQ   x_base+8(FP), SI
	MOVQ   n+32(FP), CX
	MOVQ   incX+40(FP), R8
	SHLQ   $3, R8
	MOVQ   CX, DX
	SHRQ   $2, DX
	JZ     tail

loop4:
	VMULSD (SI), X0, X1
	VMOVSD X1, (SI)
	ADDQ   R8, SI
	VMULSD (SI), X0, X2
	VMOVSD X2, (SI)
	ADDQ   R8, SI
	VMULSD (SI), X0, X3
	VMOVSD X3, (SI)
	ADDQ   R8, SI
	VMULSD (SI), X0, X4
	VMOVSD X4, (SI)
	ADDQ   R8, SI
	DECQ   DX
	JNZ    loop4

tail:
	ANDQ $3, CX
	JZ   done

loop1:
	VMULSD (SI), X0, X1
	VMOVSD X1, (SI)
	ADDQ   R8, SI
	DECQ   CX
	JNZ    loop1

done:
	RET

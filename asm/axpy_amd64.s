//go:build !purego

#include "textflag.h"

// func axpyUnitaryAVX2(alpha float64, x, y []float64)
//
// y += alpha*x with one FMA per element; x and y may be the same slice
// because each block is loaded completely before it is stored.
TEXT ·axpyUnitaryAVX2(SB), NOSPLIT, $0-56
	VBROADCASTSD alpha+0(FP), Y0
	MOVQ         x_base+8(FP), SI
	MOVQ         x_len+16(FP), CX
	MOVQ         y_base+32(FP), DI
	XORQ         AX, AX
	MOVQ         CX, DX
	ANDQ         $-16, DX
	JZ           quad

loop16:
	VMOVUPD     (SI)(AX*8), Y1
	VMOVUPD     32(SI)(AX*8), Y2
	VMOVUPD     64(SI)(AX*8), Y3
	VMOVUPD     96(SI)(AX*8), Y4
	VFMADD213PD (DI)(AX*8), Y0, Y1
	VFMADD213PD 32(DI)(AX*8), Y0, Y2
	VFMADD213PD 64(DI)(AX*8), Y0, Y3
	VFMADD213PD 96(DI)(AX*8), Y0, Y4
	VMOVUPD     Y1, (DI)(AX*8)
	VMOVUPD     Y2, 32(DI)(AX*8)
	VMOVUPD     Y3, 64(DI)(AX*8)
	VMOVUPD     Y4, 96(DI)(AX*8)
	ADDQ        $16, AX
	CMPQ        AX, DX
	JL          loop16

quad:
	MOVQ CX, DX
	ANDQ $-4, DX
	CMPQ AX, DX
	JGE  tail

loop4:
	VMOVUPD     (SI)(AX*8), Y1
	VFMADD213PD (DI)(AX*8), Y0, Y1
	VMOVUPD     Y1, (DI)(AX*8)
	ADDQ        $4, AX
	CMPQ        AX, DX
	JL          loop4

tail:
	CMPQ AX, CX
	JGE  done

loop1:
	VMOVSD      (SI)(AX*8), X1
	VFMADD213SD (DI)(AX*8), X0, X1
	VMOVSD      X1, (DI)(AX*8)
	INCQ        AX
	CMPQ        AX, CX
	JL          loop1

done:
	VZEROUPPER
	RET

// func axpyIncAVX2(alpha float64, x, y []float64, n, incX, incY, ix, iy uintptr)
TEXT ·axpyIncAVX2(SB), NOSPLIT, $0-96
	VMOVSD alpha+0(FP), X0
	MOVQ   x_base+8(FP), SI
	MOVQ   y_base+32(FP), DI
	MOVQ   n+56(FP), CX
	MOVQ   incX+64(FP), R8
	MOVQ   incY+72(FP), R9
	MOVQ   ix+80(FP), AX
	MOVQ   iy+88(FP), BX
	LEAQ   (SI)(AX*8), SI
	LEAQ   (DI)(BX*8), DI
	SHLQ   $3, R8
	SHLQ   $3, R9
	MOVQ   CX, DX
	SHRQ   $2, DX
	JZ     tail

loop4:
	VMOVSD      (SI), X1
	VFMADD213SD (DI), X0, X1
	VMOVSD      X1, (DI)
	ADDQ        R8, SI
	ADDQ        R9, DI
	VMOVSD      (SI), X2
	VFMADD213SD (DI), X0, X2
	VMOVSD      X2, (DI)
	ADDQ        R8, SI
	ADDQ        R9, DI
	VMOVSD      (SI), X3
	VFMADD213SD (DI), X0, X3
	VMOVSD      X3, (DI)
	ADDQ        R8, SI
	ADDQ        R9, DI
	VMOVSD      (SI), X4
	VFMADD213SD (DI), X0, X4
	VMOVSD      X4, (DI)
	ADDQ        R8, SI
	ADDQ        R9, DI
	DECQ        DX
	JNZ         loop4

tail:
	ANDQ $3, CX
	JZ   done

loop1:
	VMOVSD      (SI), X1
	VFMADD213SD (DI), X0, X1
	VMOVSD      X1, (DI)
	ADDQ        R8, SI
	ADDQ        R9, DI
	DECQ        CX
	JNZ         loop1

done:
	RET

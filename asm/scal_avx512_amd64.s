//go:build !purego

#include "textflag.h"

// func scalUnitaryAVX512(alpha float64, x []float64)
//
// x *= alpha, 32 elements per iteration, then 8, then the last 1..7 by a
// masked load and a masked store.
TEXT ·scalUnitaryAVX512(SB), NOSPLIT, $0-32
	VBROADCASTSD alpha+0(FP), Z0
	MOVQ         x_base+8(FP), SI
	MOVQ         x_len+16(FP), CX
	XORQ         AX, AX
	MOVQ         CX, DX
	ANDQ         $-32, DX
	JZ           oct

loop32:
	VMULPD  (SI)(AX*8), Z0, Z1
	VMULPD  64(SI)(AX*8), Z0, Z2
	VMULPD  128(SI)(AX*8), Z0, Z3
	VMULPD  192(SI)(AX*8), Z0, Z4
	VMOVUPD Z1, (SI)(AX*8)
	VMOVUPD Z2, 64(SI)(AX*8)
	VMOVUPD Z3, 128(SI)(AX*8)
	VMOVUPD Z4, 192(SI)(AX*8)
	ADDQ    $32, AX
	CMPQ    AX, DX
	JL      loop32

oct:
	MOVQ CX, DX
	ANDQ $-8, DX
	CMPQ AX, DX
	JGE  tail

loop8:
	VMULPD  (SI)(AX*8), Z0, Z1
	VMOVUPD Z1, (SI)(AX*8)
	ADDQ    $8, AX
	CMPQ    AX, DX
	JL      loop8

tail:
	SUBQ AX, CX          // 0..7 elements left at AX
	JZ   done
	MOVL $1, BX
	SHLL CX, BX
	DECL BX
	KMOVW BX, K1
	VMULPD.Z (SI)(AX*8), Z0, K1, Z1
	VMOVUPD  Z1, K1, (SI)(AX*8)

done:
	VZEROUPPER
	RET

//go:build !purego

#include "textflag.h"

// func axpyUnitaryAVX512(alpha float64, x, y []float64)
//
// y += alpha*x with one FMA per element, 32 elements per iteration, then 8,
// then the last 1..7 by masked loads and a masked store (no element outside
// x[:n] or y[:n] is touched). x and y may be the same slice because each
// block is loaded completely before it is stored.
TEXT ·axpyUnitaryAVX512(SB), NOSPLIT, $0-56
	VBROADCASTSD alpha+0(FP), Z0
	MOVQ         x_base+8(FP), SI
	MOVQ         x_len+16(FP), CX
	MOVQ         y_base+32(FP), DI
	XORQ         AX, AX
	MOVQ         CX, DX
	ANDQ         $-32, DX
	JZ           oct

loop32:
	VMOVUPD     (SI)(AX*8), Z1
	VMOVUPD     64(SI)(AX*8), Z2
	VMOVUPD     128(SI)(AX*8), Z3
	VMOVUPD     192(SI)(AX*8), Z4
	VFMADD213PD (DI)(AX*8), Z0, Z1
	VFMADD213PD 64(DI)(AX*8), Z0, Z2
	VFMADD213PD 128(DI)(AX*8), Z0, Z3
	VFMADD213PD 192(DI)(AX*8), Z0, Z4
	VMOVUPD     Z1, (DI)(AX*8)
	VMOVUPD     Z2, 64(DI)(AX*8)
	VMOVUPD     Z3, 128(DI)(AX*8)
	VMOVUPD     Z4, 192(DI)(AX*8)
	ADDQ        $32, AX
	CMPQ        AX, DX
	JL          loop32

oct:
	MOVQ CX, DX
	ANDQ $-8, DX
	CMPQ AX, DX
	JGE  tail

loop8:
	VMOVUPD     (SI)(AX*8), Z1
	VFMADD213PD (DI)(AX*8), Z0, Z1
	VMOVUPD     Z1, (DI)(AX*8)
	ADDQ        $8, AX
	CMPQ        AX, DX
	JL          loop8

tail:
	SUBQ AX, CX          // 0..7 elements left at AX
	JZ   done
	MOVL $1, BX
	SHLL CX, BX
	DECL BX
	KMOVW BX, K1
	VMOVUPD.Z   (SI)(AX*8), K1, Z1
	VFMADD213PD (DI)(AX*8), Z0, K1, Z1
	VMOVUPD     Z1, K1, (DI)(AX*8)

done:
	VZEROUPPER
	RET

//go:build !purego

#include "textflag.h"

// func sqdistRowAVX512(dst, a, bT []float64, scale float64)
//
// dst[j] = scale * sum_k (a[k] - bT[k*w+j])^2 for j < w = len(dst), d =
// len(a) >= 1 features, bT holding d rows of w (a block of b transposed).
// Each output is accumulated over k in order with one FMA per feature, as
// in the generic twin, so results agree bit for bit. 32 columns per
// iteration (four 8-wide accumulators, the features two at a time), then 8,
// then the last 1..7 columns by masked loads and a masked store.
TEXT ·sqdistRowAVX512(SB), NOSPLIT, $0-80
	MOVQ         dst_base+0(FP), DI
	MOVQ         dst_len+8(FP), CX
	MOVQ         a_base+24(FP), SI
	MOVQ         a_len+32(FP), R8
	MOVQ         bT_base+48(FP), DX
	VBROADCASTSD scale+72(FP), Z31
	LEAQ         (CX*8), R9 // bytes between features in bT
	MOVQ         R8, R12
	ANDQ         $-2, R12   // features done in pairs
	XORQ         AX, AX
	MOVQ         CX, R10
	ANDQ         $-32, R10
	JZ           oct

loop32:
	VXORPD Z0, Z0, Z0
	VXORPD Z1, Z1, Z1
	VXORPD Z2, Z2, Z2
	VXORPD Z3, Z3, Z3
	LEAQ   (DX)(AX*8), BX
	XORQ   R11, R11
	TESTQ  R12, R12
	JZ     odd32

pair32:
	VBROADCASTSD (SI)(R11*8), Z4
	VBROADCASTSD 8(SI)(R11*8), Z5
	VSUBPD       (BX), Z4, Z6
	VSUBPD       64(BX), Z4, Z7
	VSUBPD       128(BX), Z4, Z8
	VSUBPD       192(BX), Z4, Z9
	VSUBPD       (BX)(R9*1), Z5, Z10
	VSUBPD       64(BX)(R9*1), Z5, Z11
	VSUBPD       128(BX)(R9*1), Z5, Z12
	VSUBPD       192(BX)(R9*1), Z5, Z13
	VFMADD231PD  Z6, Z6, Z0
	VFMADD231PD  Z7, Z7, Z1
	VFMADD231PD  Z8, Z8, Z2
	VFMADD231PD  Z9, Z9, Z3
	VFMADD231PD  Z10, Z10, Z0
	VFMADD231PD  Z11, Z11, Z1
	VFMADD231PD  Z12, Z12, Z2
	VFMADD231PD  Z13, Z13, Z3
	LEAQ         (BX)(R9*2), BX
	ADDQ         $2, R11
	CMPQ         R11, R12
	JL           pair32

odd32:
	CMPQ R11, R8
	JGE  store32
	VBROADCASTSD (SI)(R11*8), Z4
	VSUBPD       (BX), Z4, Z6
	VSUBPD       64(BX), Z4, Z7
	VSUBPD       128(BX), Z4, Z8
	VSUBPD       192(BX), Z4, Z9
	VFMADD231PD  Z6, Z6, Z0
	VFMADD231PD  Z7, Z7, Z1
	VFMADD231PD  Z8, Z8, Z2
	VFMADD231PD  Z9, Z9, Z3

store32:
	VMULPD  Z31, Z0, Z0
	VMULPD  Z31, Z1, Z1
	VMULPD  Z31, Z2, Z2
	VMULPD  Z31, Z3, Z3
	VMOVUPD Z0, (DI)(AX*8)
	VMOVUPD Z1, 64(DI)(AX*8)
	VMOVUPD Z2, 128(DI)(AX*8)
	VMOVUPD Z3, 192(DI)(AX*8)
	ADDQ    $32, AX
	CMPQ    AX, R10
	JL      loop32

oct:
	MOVQ CX, R10
	ANDQ $-8, R10
	CMPQ AX, R10
	JGE  tail

loop8:
	VXORPD Z0, Z0, Z0
	LEAQ   (DX)(AX*8), BX
	XORQ   R11, R11

feat8:
	VBROADCASTSD (SI)(R11*8), Z4
	VSUBPD       (BX), Z4, Z5
	VFMADD231PD  Z5, Z5, Z0
	ADDQ         R9, BX
	INCQ         R11
	CMPQ         R11, R8
	JL           feat8

	VMULPD  Z31, Z0, Z0
	VMOVUPD Z0, (DI)(AX*8)
	ADDQ    $8, AX
	CMPQ    AX, R10
	JL      loop8

tail:
	SUBQ  AX, CX // 0..7 columns left at AX
	JZ    done
	MOVL  $1, R13
	SHLL  CX, R13
	DECL  R13
	KMOVW R13, K1
	VXORPD Z0, Z0, Z0
	LEAQ   (DX)(AX*8), BX
	XORQ   R11, R11

feat1:
	VBROADCASTSD (SI)(R11*8), Z4
	VSUBPD.Z     (BX), Z4, K1, Z5
	VFMADD231PD  Z5, Z5, Z0
	ADDQ         R9, BX
	INCQ         R11
	CMPQ         R11, R8
	JL           feat1

	VMULPD  Z31, Z0, Z0
	VMOVUPD Z0, K1, (DI)(AX*8)

done:
	VZEROUPPER
	RET

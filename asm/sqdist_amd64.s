//go:build !purego

#include "textflag.h"

// func sqdistRowAVX2(dst, a, bT []float64, scale float64)
//
// dst[j] = scale * sum_k (a[k] - bT[k*w+j])^2 for j < w = len(dst), d =
// len(a) >= 1 features, bT holding d rows of w (a block of b transposed).
// Each output is accumulated over k in order with one FMA per feature, as
// in the generic twin, so results agree bit for bit. 16 columns per
// iteration (four 4-wide accumulators), then 4, then one.
TEXT ·sqdistRowAVX2(SB), NOSPLIT, $0-80
	MOVQ         dst_base+0(FP), DI
	MOVQ         dst_len+8(FP), CX
	MOVQ         a_base+24(FP), SI
	MOVQ         a_len+32(FP), R8
	MOVQ         bT_base+48(FP), DX
	VBROADCASTSD scale+72(FP), Y15
	LEAQ         (CX*8), R9 // bytes between features in bT
	XORQ         AX, AX
	MOVQ         CX, R10
	ANDQ         $-16, R10
	JZ           quad

loop16:
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	LEAQ   (DX)(AX*8), BX
	XORQ   R11, R11

feat16:
	VBROADCASTSD (SI)(R11*8), Y4
	VSUBPD       (BX), Y4, Y5
	VSUBPD       32(BX), Y4, Y6
	VSUBPD       64(BX), Y4, Y7
	VSUBPD       96(BX), Y4, Y8
	VFMADD231PD  Y5, Y5, Y0
	VFMADD231PD  Y6, Y6, Y1
	VFMADD231PD  Y7, Y7, Y2
	VFMADD231PD  Y8, Y8, Y3
	ADDQ         R9, BX
	INCQ         R11
	CMPQ         R11, R8
	JL           feat16

	VMULPD  Y15, Y0, Y0
	VMULPD  Y15, Y1, Y1
	VMULPD  Y15, Y2, Y2
	VMULPD  Y15, Y3, Y3
	VMOVUPD Y0, (DI)(AX*8)
	VMOVUPD Y1, 32(DI)(AX*8)
	VMOVUPD Y2, 64(DI)(AX*8)
	VMOVUPD Y3, 96(DI)(AX*8)
	ADDQ    $16, AX
	CMPQ    AX, R10
	JL      loop16

quad:
	MOVQ CX, R10
	ANDQ $-4, R10
	CMPQ AX, R10
	JGE  tail

loop4:
	VXORPD Y0, Y0, Y0
	LEAQ   (DX)(AX*8), BX
	XORQ   R11, R11

feat4:
	VBROADCASTSD (SI)(R11*8), Y4
	VSUBPD       (BX), Y4, Y5
	VFMADD231PD  Y5, Y5, Y0
	ADDQ         R9, BX
	INCQ         R11
	CMPQ         R11, R8
	JL           feat4

	VMULPD  Y15, Y0, Y0
	VMOVUPD Y0, (DI)(AX*8)
	ADDQ    $4, AX
	CMPQ    AX, R10
	JL      loop4

tail:
	CMPQ AX, CX
	JGE  done

loop1:
	VXORPD X0, X0, X0
	LEAQ   (DX)(AX*8), BX
	XORQ   R11, R11

feat1:
	VMOVSD      (SI)(R11*8), X4
	VSUBSD      (BX), X4, X5
	VFMADD231SD X5, X5, X0
	ADDQ        R9, BX
	INCQ        R11
	CMPQ        R11, R8
	JL          feat1

	VMULSD X15, X0, X0
	VMOVSD X0, (DI)(AX*8)
	INCQ   AX
	CMPQ   AX, CX
	JL     loop1

done:
	VZEROUPPER
	RET

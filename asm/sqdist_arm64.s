//go:build !purego

#include "textflag.h"

// func sqdistRowNEON(dst, a, bT []float64, scale float64)
//
// dst[j] = scale * sum_k (a[k] - bT[k*w+j])^2 for j < w = len(dst), d =
// len(a) >= 1 features, bT holding d rows of w (a block of b transposed).
// Each output is accumulated over k in order with one fused multiply-add
// per feature (FMLA), as in the generic twin, so results agree bit for bit.
// 8 columns per iteration (four 2-wide accumulators), then 2, then one.
// Vector FP subtract/multiply are WORD-encoded (no Go mnemonics; encodings
// from llvm-mc).
TEXT ·sqdistRowNEON(SB), NOSPLIT, $0-80
	MOVD dst_base+0(FP), R0
	MOVD dst_len+8(FP), R2
	MOVD a_base+24(FP), R1
	MOVD a_len+32(FP), R3
	MOVD bT_base+48(FP), R4
	MOVD scale+72(FP), R5
	VDUP R5, V31.D2
	LSL  $3, R2, R9        // bytes between features in bT
	MOVD $0, R10           // j
	AND  $~7, R2, R11
	CBZ  R11, pairs

loop8:
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16
	ADD  R10<<3, R4, R12
	MOVD R1, R13
	MOVD R3, R14

feat8:
	VLD1R.P 8(R13), [V4.D2]
	VLD1    (R12), [V0.D2, V1.D2, V2.D2, V3.D2]
	WORD    $0x4ee0d480                         // fsub v0.2d, v4.2d, v0.2d
	WORD    $0x4ee1d481                         // fsub v1.2d, v4.2d, v1.2d
	WORD    $0x4ee2d482                         // fsub v2.2d, v4.2d, v2.2d
	WORD    $0x4ee3d483                         // fsub v3.2d, v4.2d, v3.2d
	VFMLA   V0.D2, V0.D2, V16.D2
	VFMLA   V1.D2, V1.D2, V17.D2
	VFMLA   V2.D2, V2.D2, V18.D2
	VFMLA   V3.D2, V3.D2, V19.D2
	ADD     R9, R12, R12
	SUB     $1, R14
	CBNZ    R14, feat8

	WORD   $0x6e7fde10                               // fmul v16.2d, v16.2d, v31.2d
	WORD   $0x6e7fde31                               // fmul v17.2d, v17.2d, v31.2d
	WORD   $0x6e7fde52                               // fmul v18.2d, v18.2d, v31.2d
	WORD   $0x6e7fde73                               // fmul v19.2d, v19.2d, v31.2d
	VST1.P [V16.D2, V17.D2, V18.D2, V19.D2], 64(R0)
	ADD    $8, R10
	CMP    R11, R10
	BLT    loop8

pairs:
	AND $~1, R2, R11
	CMP R11, R10
	BGE tail

loop2:
	VEOR V16.B16, V16.B16, V16.B16
	ADD  R10<<3, R4, R12
	MOVD R1, R13
	MOVD R3, R14

feat2:
	VLD1R.P 8(R13), [V4.D2]
	VLD1    (R12), [V0.D2]
	WORD    $0x4ee0d480          // fsub v0.2d, v4.2d, v0.2d
	VFMLA   V0.D2, V0.D2, V16.D2
	ADD     R9, R12, R12
	SUB     $1, R14
	CBNZ    R14, feat2

	WORD   $0x6e7fde10      // fmul v16.2d, v16.2d, v31.2d
	VST1.P [V16.D2], 16(R0)
	ADD    $2, R10
	CMP    R11, R10
	BLT    loop2

tail:
	CMP  R2, R10
	BGE  done
	VEOR V16.B16, V16.B16, V16.B16
	ADD  R10<<3, R4, R12
	MOVD R1, R13
	MOVD R3, R14

feat1:
	FMOVD.P 8(R13), F4
	FMOVD   (R12), F0
	FSUBD   F0, F4, F0
	FMADDD  F0, F16, F0, F16 // F16 += F0*F0
	ADD     R9, R12, R12
	SUB     $1, R14
	CBNZ    R14, feat1

	FMULD F31, F16, F16
	FMOVD F16, (R0)

done:
	RET

//go:build !purego

#include "textflag.h"

// func expNEON(dst, x []float64) int
//
// Computes dst[i] = exp(x[i]) two at a time, by the method described in
// exp_generic.go and with the same operations in the same order (FMLA/FMLS
// are single-rounding like math.FMA), so results equal the generic twin's
// bit for bit. Returns how many elements it did: it stops before a final
// odd element and before any pair holding a NaN or an |x| > expFastMax,
// which the Go caller (expBlocks) finishes. NEON has no gather: the two
// table entries are loaded through general registers. Vector FP add/mul/
// compare have no Go mnemonics and are WORD-encoded (encodings from llvm-mc).
//
// expConsts rows (32 bytes each): 0 |x| mask, 1 expFastMax, 2 64/ln2,
// 3 shift, 4 ln2hi/64, 5 ln2lo/64, 6 j mask, 7..10 c2..c5.
TEXT ·expNEON(SB), NOSPLIT, $0-56
	MOVD   dst_base+0(FP), R0
	MOVD   x_base+24(FP), R1
	MOVD   x_len+32(FP), R2
	MOVD   $·expTab(SB), R8
	MOVD   $·expConsts(SB), R9
	VLD1   (R9), [V26.D2] // |x| mask (unused: FACGE compares magnitudes)
	ADD    $32, R9
	VLD1   (R9), [V16.D2] // expFastMax
	ADD    $32, R9
	VLD1   (R9), [V17.D2] // 64/ln2
	ADD    $32, R9
	VLD1   (R9), [V18.D2] // shift
	ADD    $32, R9
	VLD1   (R9), [V19.D2] // ln2hi/64
	ADD    $32, R9
	VLD1   (R9), [V20.D2] // ln2lo/64
	ADD    $32, R9
	VLD1   (R9), [V21.D2] // 63
	ADD    $32, R9
	VLD1   (R9), [V22.D2] // c2
	ADD    $32, R9
	VLD1   (R9), [V23.D2] // c3
	ADD    $32, R9
	VLD1   (R9), [V24.D2] // c4
	ADD    $32, R9
	VLD1   (R9), [V25.D2] // c5
	ADD    $32, R9
	AND    $~1, R2
	MOVD   $0, R3
	CBZ    R2, done

loop:
	VLD1 (R1), [V0.D2]
	WORD $0x6e60ee01   // facge v1.2d, v16.2d, v0.2d: |x| <= expFastMax (false for NaN)
	VMOV V1.D[0], R4
	VMOV V1.D[1], R5
	AND  R4, R5, R4
	CMN  $1, R4
	BNE  done

	VMOV  V18.B16, V2.B16
	VFMLA V17.D2, V0.D2, V2.D2 // z = x*64/ln2 + shift
	WORD  $0x4ef2d443          // fsub v3.2d, v2.2d, v18.2d: kd = z - shift
	VMOV  V0.B16, V4.B16
	VFMLS V19.D2, V3.D2, V4.D2 // r = x - kd*ln2hi/64
	VFMLS V20.D2, V3.D2, V4.D2 // r -= kd*ln2lo/64

	VAND V21.B16, V2.B16, V5.B16 // j = bits(z) & 63
	VMOV V5.D[0], R6
	VMOV V5.D[1], R7
	MOVD (R8)(R6<<3), R6
	MOVD (R8)(R7<<3), R7
	VMOV R6, V6.D[0]
	VMOV R7, V6.D[1]
	VSHL $46, V2.D2, V7.D2
	VADD V7.D2, V6.D2, V6.D2     // s = 2^(k>>6) * 2^(j/64)

	VMOV  V24.B16, V1.B16
	VFMLA V25.D2, V4.D2, V1.D2   // q = c5*r + c4
	VMOV  V23.B16, V9.B16
	VFMLA V1.D2, V4.D2, V9.D2    // q = q*r + c3
	VMOV  V22.B16, V1.B16
	VFMLA V9.D2, V4.D2, V1.D2    // q = q*r + c2
	WORD  $0x6e64dc8a            // fmul v10.2d, v4.2d, v4.2d: r2
	VMOV  V4.B16, V11.B16
	VFMLA V1.D2, V10.D2, V11.D2  // p = q*r2 + r
	VMOV  V6.B16, V12.B16
	VFMLA V6.D2, V11.D2, V12.D2  // s*p + s
	VST1  [V12.D2], (R0)

	ADD $16, R0
	ADD $16, R1
	ADD $2, R3
	CMP R2, R3
	BLT loop

done:
	MOVD R3, ret+48(FP)
	RET

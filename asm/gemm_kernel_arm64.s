//go:build !purego

#include "textflag.h"

// func gemmKernel6x8NEON(k int, a, b, c *float64, ldc int, alpha, beta float64)
//
// C[0:6, 0:8] = beta*C + alpha*A·B on packed panels: a holds k columns of 6
// doubles, b holds k rows of 8 doubles (the same layout as the amd64 6×8
// kernel). The 6×8 tile lives in 24 accumulators V0..V23 (row r in
// V4r..V4r+3); per k step one load of A (V24..V26, 3×2 doubles), one of B
// (V28..V31) and 24 FMLAs by element (fmla vd.2d, vB.2d, vA.d[lane]). Go's
// assembler has no by-element FMLA, so those are WORD-encoded (generated:
// 0x4fc01000 | m<<16 | lane<<11 | n<<5 | d); FMUL likewise
// (0x6e60dc00 | m<<16 | n<<5 | d). beta == 0 never reads C.
//
// The 24 FMLAs of one k step, row by row (d = 4r+c, n = 28+c, m = 24+r/2,
// lane = r%2):
//   row 0: 4fd81380, 4fd813a1, 4fd813c2, 4fd813e3
//   row 1: 4fd81b84, 4fd81ba5, 4fd81bc6, 4fd81be7
//   row 2: 4fd91388, 4fd913a9, 4fd913ca, 4fd913eb
//   row 3: 4fd91b8c, 4fd91bad, 4fd91bce, 4fd91bef
//   row 4: 4fda1390, 4fda13b1, 4fda13d2, 4fda13f3
//   row 5: 4fda1b94, 4fda1bb5, 4fda1bd6, 4fda1bf7

#define KSTEP \
	VLD1.P 48(R0), [V24.D2, V25.D2, V26.D2] \
	VLD1.P 64(R1), [V28.D2, V29.D2, V30.D2, V31.D2] \
	WORD $0x4fd81380 \
	WORD $0x4fd813a1 \
	WORD $0x4fd813c2 \
	WORD $0x4fd813e3 \
	WORD $0x4fd81b84 \
	WORD $0x4fd81ba5 \
	WORD $0x4fd81bc6 \
	WORD $0x4fd81be7 \
	WORD $0x4fd91388 \
	WORD $0x4fd913a9 \
	WORD $0x4fd913ca \
	WORD $0x4fd913eb \
	WORD $0x4fd91b8c \
	WORD $0x4fd91bad \
	WORD $0x4fd91bce \
	WORD $0x4fd91bef \
	WORD $0x4fda1390 \
	WORD $0x4fda13b1 \
	WORD $0x4fda13d2 \
	WORD $0x4fda13f3 \
	WORD $0x4fda1b94 \
	WORD $0x4fda1bb5 \
	WORD $0x4fda1bd6 \
	WORD $0x4fda1bf7

// Multiply the 24 accumulators by alpha (in V24): fmul vi.2d, vi.2d, v24.2d.
#define SCALE_ALPHA \
	WORD $0x6e78dc00 \
	WORD $0x6e78dc21 \
	WORD $0x6e78dc42 \
	WORD $0x6e78dc63 \
	WORD $0x6e78dc84 \
	WORD $0x6e78dca5 \
	WORD $0x6e78dcc6 \
	WORD $0x6e78dce7 \
	WORD $0x6e78dd08 \
	WORD $0x6e78dd29 \
	WORD $0x6e78dd4a \
	WORD $0x6e78dd6b \
	WORD $0x6e78dd8c \
	WORD $0x6e78ddad \
	WORD $0x6e78ddce \
	WORD $0x6e78ddef \
	WORD $0x6e78de10 \
	WORD $0x6e78de31 \
	WORD $0x6e78de52 \
	WORD $0x6e78de73 \
	WORD $0x6e78de94 \
	WORD $0x6e78deb5 \
	WORD $0x6e78ded6 \
	WORD $0x6e78def7

TEXT ·gemmKernel6x8NEON(SB), NOSPLIT, $0-56
	MOVD k+0(FP), R3
	MOVD a+8(FP), R0
	MOVD b+16(FP), R1
	MOVD c+24(FP), R2
	MOVD ldc+32(FP), R4
	LSL  $3, R4, R4

	VEOR V0.B16, V0.B16, V0.B16
	VEOR V1.B16, V1.B16, V1.B16
	VEOR V2.B16, V2.B16, V2.B16
	VEOR V3.B16, V3.B16, V3.B16
	VEOR V4.B16, V4.B16, V4.B16
	VEOR V5.B16, V5.B16, V5.B16
	VEOR V6.B16, V6.B16, V6.B16
	VEOR V7.B16, V7.B16, V7.B16
	VEOR V8.B16, V8.B16, V8.B16
	VEOR V9.B16, V9.B16, V9.B16
	VEOR V10.B16, V10.B16, V10.B16
	VEOR V11.B16, V11.B16, V11.B16
	VEOR V12.B16, V12.B16, V12.B16
	VEOR V13.B16, V13.B16, V13.B16
	VEOR V14.B16, V14.B16, V14.B16
	VEOR V15.B16, V15.B16, V15.B16
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16
	VEOR V20.B16, V20.B16, V20.B16
	VEOR V21.B16, V21.B16, V21.B16
	VEOR V22.B16, V22.B16, V22.B16
	VEOR V23.B16, V23.B16, V23.B16

	LSR $2, R3, R5
	CBZ R5, tail

loop4:
	PRFM 384(R0), PLDL1KEEP
	PRFM 512(R1), PLDL1KEEP
	KSTEP
	KSTEP
	KSTEP
	KSTEP
	SUB  $1, R5
	CBNZ R5, loop4

tail:
	AND $3, R3, R5
	CBZ R5, done

loop1:
	KSTEP
	SUB  $1, R5
	CBNZ R5, loop1

done:
	MOVD  alpha+40(FP), R6
	VDUP  R6, V24.D2
	SCALE_ALPHA
	FMOVD beta+48(FP), F25
	FCMPD $(0.0), F25
	BNE   withbeta

	VST1 [V0.D2, V1.D2, V2.D2, V3.D2], (R2)
	ADD  R4, R2, R2
	VST1 [V4.D2, V5.D2, V6.D2, V7.D2], (R2)
	ADD  R4, R2, R2
	VST1 [V8.D2, V9.D2, V10.D2, V11.D2], (R2)
	ADD  R4, R2, R2
	VST1 [V12.D2, V13.D2, V14.D2, V15.D2], (R2)
	ADD  R4, R2, R2
	VST1 [V16.D2, V17.D2, V18.D2, V19.D2], (R2)
	ADD  R4, R2, R2
	VST1 [V20.D2, V21.D2, V22.D2, V23.D2], (R2)
	RET

withbeta:
	MOVD beta+48(FP), R6
	VDUP R6, V25.D2
	VLD1 (R2), [V28.D2, V29.D2, V30.D2, V31.D2]
	VFMLA V25.D2, V28.D2, V0.D2
	VFMLA V25.D2, V29.D2, V1.D2
	VFMLA V25.D2, V30.D2, V2.D2
	VFMLA V25.D2, V31.D2, V3.D2
	VST1 [V0.D2, V1.D2, V2.D2, V3.D2], (R2)
	ADD  R4, R2, R2
	VLD1 (R2), [V28.D2, V29.D2, V30.D2, V31.D2]
	VFMLA V25.D2, V28.D2, V4.D2
	VFMLA V25.D2, V29.D2, V5.D2
	VFMLA V25.D2, V30.D2, V6.D2
	VFMLA V25.D2, V31.D2, V7.D2
	VST1 [V4.D2, V5.D2, V6.D2, V7.D2], (R2)
	ADD  R4, R2, R2
	VLD1 (R2), [V28.D2, V29.D2, V30.D2, V31.D2]
	VFMLA V25.D2, V28.D2, V8.D2
	VFMLA V25.D2, V29.D2, V9.D2
	VFMLA V25.D2, V30.D2, V10.D2
	VFMLA V25.D2, V31.D2, V11.D2
	VST1 [V8.D2, V9.D2, V10.D2, V11.D2], (R2)
	ADD  R4, R2, R2
	VLD1 (R2), [V28.D2, V29.D2, V30.D2, V31.D2]
	VFMLA V25.D2, V28.D2, V12.D2
	VFMLA V25.D2, V29.D2, V13.D2
	VFMLA V25.D2, V30.D2, V14.D2
	VFMLA V25.D2, V31.D2, V15.D2
	VST1 [V12.D2, V13.D2, V14.D2, V15.D2], (R2)
	ADD  R4, R2, R2
	VLD1 (R2), [V28.D2, V29.D2, V30.D2, V31.D2]
	VFMLA V25.D2, V28.D2, V16.D2
	VFMLA V25.D2, V29.D2, V17.D2
	VFMLA V25.D2, V30.D2, V18.D2
	VFMLA V25.D2, V31.D2, V19.D2
	VST1 [V16.D2, V17.D2, V18.D2, V19.D2], (R2)
	ADD  R4, R2, R2
	VLD1 (R2), [V28.D2, V29.D2, V30.D2, V31.D2]
	VFMLA V25.D2, V28.D2, V20.D2
	VFMLA V25.D2, V29.D2, V21.D2
	VFMLA V25.D2, V30.D2, V22.D2
	VFMLA V25.D2, V31.D2, V23.D2
	VST1 [V20.D2, V21.D2, V22.D2, V23.D2], (R2)
	RET

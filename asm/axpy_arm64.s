//go:build !purego

#include "textflag.h"

// func axpyUnitaryNEON(alpha float64, x, y []float64)
//
// y += alpha*x with FMLA, 8 elements per iteration; every block of y is
// loaded before it is stored, so x and y may be the same slice.
TEXT ·axpyUnitaryNEON(SB), NOSPLIT, $0-56
	MOVD alpha+0(FP), R4
	VDUP R4, V31.D2
	MOVD x_base+8(FP), R0
	MOVD x_len+16(FP), R2
	MOVD y_base+32(FP), R1
	MOVD R1, R5
	LSR  $3, R2, R3
	CBZ  R3, pairs

loop8:
	VLD1.P 64(R0), [V0.D2, V1.D2, V2.D2, V3.D2]
	VLD1.P 64(R1), [V4.D2, V5.D2, V6.D2, V7.D2]
	VFMLA  V31.D2, V0.D2, V4.D2
	VFMLA  V31.D2, V1.D2, V5.D2
	VFMLA  V31.D2, V2.D2, V6.D2
	VFMLA  V31.D2, V3.D2, V7.D2
	VST1.P [V4.D2, V5.D2, V6.D2, V7.D2], 64(R5)
	SUB    $1, R3
	CBNZ   R3, loop8

pairs:
	AND $7, R2, R3
	LSR $1, R3
	CBZ R3, tail

loop2:
	VLD1.P 16(R0), [V0.D2]
	VLD1.P 16(R1), [V4.D2]
	VFMLA  V31.D2, V0.D2, V4.D2
	VST1.P [V4.D2], 16(R5)
	SUB    $1, R3
	CBNZ   R3, loop2

tail:
	TBZ    $0, R2, done
	FMOVD  (R0), F1
	FMOVD  (R1), F2
	FMADDD F1, F2, F31, F2 // F2 += alpha*F1
	FMOVD  F2, (R1)

done:
	RET

// func axpyIncNEON(alpha float64, x, y []float64, n, incX, incY, ix, iy uintptr)
TEXT ·axpyIncNEON(SB), NOSPLIT, $0-96
	FMOVD alpha+0(FP), F31
	MOVD  x_base+8(FP), R0
	MOVD  y_base+32(FP), R1
	MOVD  n+56(FP), R2
	MOVD  incX+64(FP), R3
	MOVD  incY+72(FP), R4
	MOVD  ix+80(FP), R5
	MOVD  iy+88(FP), R6
	ADD   R5<<3, R0, R0
	ADD   R6<<3, R1, R1
	LSL   $3, R3, R3
	LSL   $3, R4, R4
	LSR   $1, R2, R7
	CBZ   R7, tail

loop2:
	FMOVD  (R0), F1
	FMOVD  (R1), F2
	ADD    R3, R0, R0
	FMADDD F1, F2, F31, F2
	FMOVD  F2, (R1)
	ADD    R4, R1, R1
	FMOVD  (R0), F3
	FMOVD  (R1), F4
	ADD    R3, R0, R0
	FMADDD F3, F4, F31, F4
	FMOVD  F4, (R1)
	ADD    R4, R1, R1
	SUB    $1, R7
	CBNZ   R7, loop2

tail:
	TBZ    $0, R2, done
	FMOVD  (R0), F1
	FMOVD  (R1), F2
	FMADDD F1, F2, F31, F2
	FMOVD  F2, (R1)

done:
	RET

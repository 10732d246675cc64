//go:build !purego

#include "textflag.h"

// The Go assembler has no mnemonics for vector floating-point add, multiply
// or pairwise add on arm64; those instructions are emitted as WORDs, each
// with the instruction it encodes beside it (encodings from llvm-mc).

// func dotUnitaryNEON(x, y []float64) float64
//
// Four 2-wide FMLA accumulators (8 elements per iteration), then pairs,
// then one scalar FMADD.
TEXT ·dotUnitaryNEON(SB), NOSPLIT, $0-56
	MOVD x_base+0(FP), R0
	MOVD x_len+8(FP), R2
	MOVD y_base+24(FP), R1
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16
	LSR  $3, R2, R3
	CBZ  R3, pairs

loop8:
	VLD1.P 64(R0), [V0.D2, V1.D2, V2.D2, V3.D2]
	VLD1.P 64(R1), [V4.D2, V5.D2, V6.D2, V7.D2]
	VFMLA  V0.D2, V4.D2, V16.D2
	VFMLA  V1.D2, V5.D2, V17.D2
	VFMLA  V2.D2, V6.D2, V18.D2
	VFMLA  V3.D2, V7.D2, V19.D2
	SUB    $1, R3
	CBNZ   R3, loop8

pairs:
	AND $7, R2, R3
	LSR $1, R3
	CBZ R3, reduce

loop2:
	VLD1.P 16(R0), [V0.D2]
	VLD1.P 16(R1), [V4.D2]
	VFMLA  V0.D2, V4.D2, V16.D2
	SUB    $1, R3
	CBNZ   R3, loop2

reduce:
	WORD $0x4e71d610 // fadd v16.2d, v16.2d, v17.2d
	WORD $0x4e73d652 // fadd v18.2d, v18.2d, v19.2d
	WORD $0x4e72d610 // fadd v16.2d, v16.2d, v18.2d
	WORD $0x7e70da00 // faddp d0, v16.2d
	TBZ  $0, R2, done
	FMOVD  (R0), F1
	FMOVD  (R1), F2
	FMADDD F1, F0, F2, F0 // F0 += F2*F1

done:
	FMOVD F0, ret+48(FP)
	RET

// func dotIncNEON(x, y []float64, n, incX, incY, ix, iy uintptr) float64
//
// Scalar FMADD into two accumulators; increments are byte-scaled with
// wrap-around, so negative ones (passed as uintptr) work unchanged.
TEXT ·dotIncNEON(SB), NOSPLIT, $0-96
	MOVD x_base+0(FP), R0
	MOVD y_base+24(FP), R1
	MOVD n+48(FP), R2
	MOVD incX+56(FP), R3
	MOVD incY+64(FP), R4
	MOVD ix+72(FP), R5
	MOVD iy+80(FP), R6
	ADD  R5<<3, R0, R0
	ADD  R6<<3, R1, R1
	LSL  $3, R3, R3
	LSL  $3, R4, R4
	VEOR V0.B16, V0.B16, V0.B16
	VEOR V1.B16, V1.B16, V1.B16
	LSR  $1, R2, R7
	CBZ  R7, tail

loop2:
	FMOVD  (R0), F2
	FMOVD  (R1), F3
	ADD    R3, R0, R0
	ADD    R4, R1, R1
	FMADDD F2, F0, F3, F0
	FMOVD  (R0), F4
	FMOVD  (R1), F5
	ADD    R3, R0, R0
	ADD    R4, R1, R1
	FMADDD F4, F1, F5, F1
	SUB    $1, R7
	CBNZ   R7, loop2

tail:
	TBZ    $0, R2, done
	FMOVD  (R0), F2
	FMOVD  (R1), F3
	FMADDD F2, F0, F3, F0

done:
	FADDD F1, F0, F0
	FMOVD F0, ret+88(FP)
	RET

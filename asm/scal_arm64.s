//go:build !purego

#include "textflag.h"

// func scalUnitaryNEON(alpha float64, x []float64)
TEXT ·scalUnitaryNEON(SB), NOSPLIT, $0-32
	MOVD alpha+0(FP), R4
	VDUP R4, V31.D2
	MOVD x_base+8(FP), R0
	MOVD x_len+16(FP), R2
	MOVD R0, R5
	LSR  $3, R2, R3
	CBZ  R3, pairs

loop8:
	VLD1.P 64(R0), [V0.D2, V1.D2, V2.D2, V3.D2]
	WORD   $0x6e7fdc00                           // fmul v0.2d, v0.2d, v31.2d
	WORD   $0x6e7fdc21                           // fmul v1.2d, v1.2d, v31.2d
	WORD   $0x6e7fdc42                           // fmul v2.2d, v2.2d, v31.2d
	WORD   $0x6e7fdc63                           // fmul v3.2d, v3.2d, v31.2d
	VST1.P [V0.D2, V1.D2, V2.D2, V3.D2], 64(R5)
	SUB    $1, R3
	CBNZ   R3, loop8

pairs:
	AND $7, R2, R3
	LSR $1, R3
	CBZ R3, tail

loop2:
	VLD1.P 16(R0), [V0.D2]
	WORD   $0x6e7fdc00     // fmul v0.2d, v0.2d, v31.2d
	VST1.P [V0.D2], 16(R5)
	SUB    $1, R3
	CBNZ   R3, loop2

tail:
	TBZ   $0, R2, done
	FMOVD (R0), F1
	FMULD F31, F1, F1
	FMOVD F1, (R0)

done:
	RET

// func scalIncNEON(alpha float64, x []float64, n, incX uintptr)
TEXT ·scalIncNEON(SB), NOSPLIT, $0-48
	FMOVD alpha+0(FP), F31
	MOVD  x_base+8(FP), R0
	MOVD  n+32(FP), R2
	MOVD  incX+40(FP), R3
	LSL   $3, R3, R3
	CBZ   R2, done

loop:
	FMOVD (R0), F1
	FMULD F31, F1, F1
	FMOVD F1, (R0)
	ADD   R3, R0, R0
	SUB   $1, R2
	CBNZ  R2, loop

done:
	RET

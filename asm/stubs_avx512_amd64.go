//go:build !purego

package asm

import "math"

// AVX-512F kernels, implemented in the *_avx512_amd64.s files. Level AVX512
// runs them where they measured faster than the AVX2 ones on an AVX-512 CPU,
// and the AVX2 kernels elsewhere (every AVX-512 CPU has AVX2+FMA).

//go:noescape
func dotUnitaryAVX512(x, y []float64) float64

//go:noescape
func axpyUnitaryAVX512(alpha float64, x, y []float64)

//go:noescape
func scalUnitaryAVX512(alpha float64, x []float64)

// expAVX512 is in exp_avx512_amd64.s: every element, eight lanes at a time,
// the last 1..7 masked; it returns len(x).
//
//go:noescape
func expAVX512(dst, x []float64) int

// expSpecialConsts holds the constants expAVX512 needs beyond expConsts, to
// take expSpecial's route on a block with a NaN or an |x| > expFastMax, and
// the two bits that select among the four 16-entry quarters of expTab.
var expSpecialConsts = [...]uint64{
	math.Float64bits(1.0 / 64),
	math.Float64bits(expOverflow),
	math.Float64bits(expUnderflow),
	math.Float64bits(math.Inf(1)),
	16,
	32,
}

//go:noescape
func sqdistRowAVX512(dst, a, bT []float64, scale float64)

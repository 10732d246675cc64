//go:build !purego

package asm

// AVX-512F kernels, implemented in the *_avx512_amd64.s files. Level AVX512
// runs them where they measured faster than the AVX2 ones on an AVX-512 CPU,
// and the AVX2 kernels elsewhere (every AVX-512 CPU has AVX2+FMA).

//go:noescape
func dotUnitaryAVX512(x, y []float64) float64

//go:noescape
func axpyUnitaryAVX512(alpha float64, x, y []float64)

//go:noescape
func scalUnitaryAVX512(alpha float64, x []float64)

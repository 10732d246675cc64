//go:build !purego

package asm

// gemmKernel6x8AVX2 is in gemm_kernel_amd64.s. Pointers, not slices: GemmKernel.Run
// has checked the lengths.
//
//go:noescape
func gemmKernel6x8AVX2(k int, a, b, c *float64, ldc int, alpha, beta float64)

// gemmKernel4x12AVX2 is in gemm_kernel_amd64.s.
//
//go:noescape
func gemmKernel4x12AVX2(k int, a, b, c *float64, ldc int, alpha, beta float64)

var gemmAVX2x12 = GemmKernel{MR: 4, NR: 12, Level: AVX2,
	fn: func(k int, a, b, c []float64, ldc int, alpha, beta float64) {
		gemmKernel4x12AVX2(k, unsafeData(a), unsafeData(b), &c[0], ldc, alpha, beta)
	}}

// gemmKernel12x16AVX512 is in gemm_kernel_avx512_amd64.s.
//
//go:noescape
func gemmKernel12x16AVX512(k int, a, b, c *float64, ldc int, alpha, beta float64)

var gemmAVX512 = GemmKernel{MR: 12, NR: 16, Level: AVX512,
	fn: func(k int, a, b, c []float64, ldc int, alpha, beta float64) {
		gemmKernel12x16AVX512(k, unsafeData(a), unsafeData(b), &c[0], ldc, alpha, beta)
	}}

var gemmAVX2 = GemmKernel{MR: 6, NR: 8, Level: AVX2, fn: func(k int, a, b, c []float64, ldc int, alpha, beta float64) {
	gemmKernel6x8AVX2(k, unsafeData(a), unsafeData(b), &c[0], ldc, alpha, beta)
}}

// gemmKernelsAsm returns the assembly micro-kernels for level l, the one to
// use first (nil: none). Level AVX512 uses the 12×16 zmm kernel and also
// compiles (and tests) the AVX2 ones, which every AVX-512 CPU can run.
func gemmKernelsAsm(l Level) []*GemmKernel {
	switch l {
	case AVX512:
		return []*GemmKernel{&gemmAVX512, &gemmAVX2, &gemmAVX2x12}
	case AVX2:
		if gemmUse4x12 {
			return []*GemmKernel{&gemmAVX2x12, &gemmAVX2}
		}
		return []*GemmKernel{&gemmAVX2, &gemmAVX2x12}
	}
	return nil
}

// gemmUse4x12 picks the 4×12 kernel first. Measured on Zen 3: alone, k =
// 64..384 alternated, both shapes run at the same rate (about 50 GFLOP/s per
// core); in a whole 1200³ DGEMM on one core (thread CPU time, 3 runs) 4×12
// with MC=128 was 0.5–1.7% faster than 6×8 with MC=126, inside the noise of
// the shared machine. 6×8 stays the default: its k×8 B micro-panel leaves
// more of L1 free and it matches the NEON kernel's packing.
const gemmUse4x12 = false

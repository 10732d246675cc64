//go:build !purego

package asm

// gemmKernel6x8AVX2 is in gemm_kernel_amd64.s. Pointers, not slices: GemmKernel.Run
// has checked the lengths.
//
//go:noescape
func gemmKernel6x8AVX2(k int, a, b, c *float64, ldc int, alpha, beta float64)

var gemmAVX2 = GemmKernel{MR: 6, NR: 8, Level: AVX2, fn: func(k int, a, b, c []float64, ldc int, alpha, beta float64) {
	gemmKernel6x8AVX2(k, unsafeData(a), unsafeData(b), &c[0], ldc, alpha, beta)
}}

// gemmKernelAsm returns the assembly micro-kernel for level l, or nil. There
// is no AVX-512 kernel (it could not be tested on the development machines);
// every AVX-512 CPU has AVX2+FMA, so AVX512 runs the AVX2 kernel.
func gemmKernelAsm(l Level) *GemmKernel {
	switch l {
	case AVX2, AVX512:
		return &gemmAVX2
	}
	return nil
}

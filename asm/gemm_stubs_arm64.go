//go:build !purego

package asm

// gemmKernel6x8NEON is in gemm_kernel_arm64.s. Pointers, not slices:
// GemmKernel.Run has checked the lengths.
//
//go:noescape
func gemmKernel6x8NEON(k int, a, b, c *float64, ldc int, alpha, beta float64)

var gemmNEON = GemmKernel{MR: 6, NR: 8, Level: NEON, fn: func(k int, a, b, c []float64, ldc int, alpha, beta float64) {
	gemmKernel6x8NEON(k, unsafeData(a), unsafeData(b), &c[0], ldc, alpha, beta)
}}

// gemmKernelsAsm returns the assembly micro-kernels for level l, the one to
// use first (nil: none).
func gemmKernelsAsm(l Level) []*GemmKernel {
	if l == NEON {
		return []*GemmKernel{&gemmNEON}
	}
	return nil
}

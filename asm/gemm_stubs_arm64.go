//go:build !purego

package asm

// gemmKernelsAsm: no assembly kernels here; the generic kernel is used.
func gemmKernelsAsm(Level) []*GemmKernel { return nil }

//go:build !purego

package asm

// gemmKernelAsm returns the assembly micro-kernel for level l, or nil.
func gemmKernelAsm(l Level) *GemmKernel { return nil }

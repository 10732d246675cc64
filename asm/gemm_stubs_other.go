//go:build purego || !(amd64 || arm64)

package asm

// gemmKernelAsm: no assembly in this build; the generic kernel is used.
func gemmKernelAsm(Level) *GemmKernel { return nil }

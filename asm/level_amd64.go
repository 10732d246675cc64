//go:build !purego

package asm

import "github.com/klauspost/cpuid/v2"

// detect lists the levels this amd64 CPU supports, best first. AVX-512 is
// used only together with AVX2+FMA (every AVX-512 CPU has them) and only when
// the OS saves the ZMM state, which cpuid's feature flags already account for.
func detect() []Level {
	c := cpuid.CPU
	levels := []Level{}
	avx2 := c.Supports(cpuid.AVX, cpuid.AVX2, cpuid.FMA3)
	if avx2 && c.Supports(cpuid.AVX512F) {
		levels = append(levels, AVX512)
	}
	if avx2 {
		levels = append(levels, AVX2)
	}
	return append(levels, Generic)
}

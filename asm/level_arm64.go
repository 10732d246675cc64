//go:build !purego

package asm

// detect: Advanced SIMD (NEON) is mandatory in ARMv8-A, so every arm64 CPU
// Go runs on has it.
func detect() []Level { return []Level{NEON, Generic} }

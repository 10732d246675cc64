//go:build purego || !(amd64 || arm64)

package asm

// detect: without assembly only the pure-Go kernels exist.
func detect() []Level { return []Level{Generic} }

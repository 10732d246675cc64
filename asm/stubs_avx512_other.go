//go:build purego || !amd64

package asm

// Without the amd64 assembly every AVX-512 name runs the pure-Go twin;
// Current() never reports AVX512 in such builds, so these are never reached.

func dotUnitaryAVX512(x, y []float64) float64         { return DotUnitaryGeneric(x, y) }
func axpyUnitaryAVX512(alpha float64, x, y []float64) { AxpyUnitaryGeneric(alpha, x, y) }
func scalUnitaryAVX512(alpha float64, x []float64)    { ScalUnitaryGeneric(alpha, x) }

func sqdistRowAVX512(dst, a, bT []float64, scale float64) { sqdistRowGo(dst, a, bT, scale) }

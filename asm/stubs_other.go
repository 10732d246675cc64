//go:build purego || !(amd64 || arm64)

package asm

// Without assembly every SIMD name runs the pure-Go twin; Current() reports
// only Generic in such builds, so these are never reached in practice.

func dotUnitaryAVX2(x, y []float64) float64 { return DotUnitaryGeneric(x, y) }
func dotIncAVX2(x, y []float64, n, incX, incY, ix, iy uintptr) float64 {
	return DotIncGeneric(x, y, n, incX, incY, ix, iy)
}
func axpyUnitaryAVX2(alpha float64, x, y []float64) { AxpyUnitaryGeneric(alpha, x, y) }
func axpyIncAVX2(alpha float64, x, y []float64, n, incX, incY, ix, iy uintptr) {
	AxpyIncGeneric(alpha, x, y, n, incX, incY, ix, iy)
}
func scalUnitaryAVX2(alpha float64, x []float64)              { ScalUnitaryGeneric(alpha, x) }
func scalIncAVX2(alpha float64, x []float64, n, incX uintptr) { ScalIncGeneric(alpha, x, n, incX) }

func dotUnitaryNEON(x, y []float64) float64 { return DotUnitaryGeneric(x, y) }
func dotIncNEON(x, y []float64, n, incX, incY, ix, iy uintptr) float64 {
	return DotIncGeneric(x, y, n, incX, incY, ix, iy)
}
func axpyUnitaryNEON(alpha float64, x, y []float64) { AxpyUnitaryGeneric(alpha, x, y) }
func axpyIncNEON(alpha float64, x, y []float64, n, incX, incY, ix, iy uintptr) {
	AxpyIncGeneric(alpha, x, y, n, incX, incY, ix, iy)
}
func scalUnitaryNEON(alpha float64, x []float64)              { ScalUnitaryGeneric(alpha, x) }
func scalIncNEON(alpha float64, x []float64, n, incX uintptr) { ScalIncGeneric(alpha, x, n, incX) }

// The exp kernels do no elements; expBlocks then computes every one in Go.

func expAVX2(dst, x []float64) int { return 0 }

func expAVX512(dst, x []float64) int { return 0 }
func expNEON(dst, x []float64) int   { return 0 }

func sqdistRowAVX2(dst, a, bT []float64, scale float64) { sqdistRowGo(dst, a, bT, scale) }
func sqdistRowNEON(dst, a, bT []float64, scale float64) { sqdistRowGo(dst, a, bT, scale) }

func packPanelsAVX2(dst, src []float64, off, ld, np, kb, w int) {
	PackPanelsGeneric(dst, src, off, ld, np, kb, w)
}

func packTransposedAVX2(dst, src []float64, off, ld, w, kb4 int) {
	packTransposedGo(dst, src, off, ld, w, 0, kb4)
}

//go:build !purego

package asm

// NEON kernels, implemented in the *_arm64.s files.

//go:noescape
func dotUnitaryNEON(x, y []float64) float64

//go:noescape
func dotIncNEON(x, y []float64, n, incX, incY, ix, iy uintptr) float64

//go:noescape
func axpyUnitaryNEON(alpha float64, x, y []float64)

//go:noescape
func axpyIncNEON(alpha float64, x, y []float64, n, incX, incY, ix, iy uintptr)

//go:noescape
func scalUnitaryNEON(alpha float64, x []float64)

//go:noescape
func scalIncNEON(alpha float64, x []float64, n, incX uintptr)

// The AVX2 names exist on arm64 only so that dispatch.go compiles on every
// architecture; Current() never reports AVX2 or AVX512 here.

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

//go:noescape
func expNEON(dst, x []float64) int

func expAVX2(dst, x []float64) int { return 0 }

func expAVX512(dst, x []float64) int { return 0 }

//go:noescape
func sqdistRowNEON(dst, a, bT []float64, scale float64)

func sqdistRowAVX2(dst, a, bT []float64, scale float64) { sqdistRowGo(dst, a, bT, scale) }

func packPanelsAVX2(dst, src []float64, off, ld, np, kb, w int) {
	PackPanelsGeneric(dst, src, off, ld, np, kb, w)
}

func packTransposedAVX2(dst, src []float64, off, ld, w, kb4 int) {
	packTransposedGo(dst, src, off, ld, w, 0, kb4)
}

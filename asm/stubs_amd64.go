//go:build !purego

package asm

// AVX2+FMA kernels, implemented in the *_amd64.s files.

//go:noescape
func dotUnitaryAVX2(x, y []float64) float64

//go:noescape
func dotIncAVX2(x, y []float64, n, incX, incY, ix, iy uintptr) float64

//go:noescape
func axpyUnitaryAVX2(alpha float64, x, y []float64)

//go:noescape
func axpyIncAVX2(alpha float64, x, y []float64, n, incX, incY, ix, iy uintptr)

//go:noescape
func scalUnitaryAVX2(alpha float64, x []float64)

//go:noescape
func scalIncAVX2(alpha float64, x []float64, n, incX uintptr)

// The NEON names exist on amd64 only so that dispatch.go compiles on every
// architecture; Current() never reports NEON here, so they are unreachable.

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

//go:noescape
func expAVX2(dst, x []float64) int

func expNEON(dst, x []float64) int { return 0 }

//go:noescape
func sqdistRowAVX2(dst, a, bT []float64, scale float64)

func sqdistRowNEON(dst, a, bT []float64, scale float64) { sqdistRowGo(dst, a, bT, scale) }

//go:noescape
func packPanelsAVX2(dst, src []float64, off, ld, np, kb, w int)

//go:noescape
func packTransposedAVX2(dst, src []float64, off, ld, w, kb4 int)

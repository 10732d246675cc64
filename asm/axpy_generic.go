package asm

// AxpyUnitaryGeneric is the pure-Go twin of AxpyUnitary:
// y[i] += alpha*x[i] for i < len(x).
func AxpyUnitaryGeneric(alpha float64, x, y []float64) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += alpha * v
	}
}

// AxpyIncGeneric is the pure-Go twin of AxpyInc: y[iy+i*incY] +=
// alpha*x[ix+i*incX] for i < n (gonum f64.AxpyInc semantics; negative
// increments wrap as uintptr and start at ix, iy).
func AxpyIncGeneric(alpha float64, x, y []float64, n, incX, incY, ix, iy uintptr) {
	for i := 0; i < int(n); i++ {
		y[iy] += alpha * x[ix]
		ix += incX
		iy += incY
	}
}

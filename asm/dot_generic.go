package asm

// DotUnitaryGeneric is the pure-Go twin of DotUnitary: the sum of x[i]*y[i]
// for i < len(x). y must be at least as long as x.
func DotUnitaryGeneric(x, y []float64) float64 {
	var sum float64
	y = y[:len(x)]
	for i, v := range x {
		sum += v * y[i]
	}
	return sum
}

// DotIncGeneric is the pure-Go twin of DotInc: the sum over i < n of
// x[ix+i*incX]*y[iy+i*incY]. Negative increments are passed as uintptr
// (uintptr(inc) wraps) together with start offsets ix, iy at the far end,
// as in gonum's internal/asm/f64.DotInc.
func DotIncGeneric(x, y []float64, n, incX, incY, ix, iy uintptr) float64 {
	var sum float64
	for i := 0; i < int(n); i++ {
		sum += x[ix] * y[iy]
		ix += incX
		iy += incY
	}
	return sum
}

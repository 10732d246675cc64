package asm

// ScalUnitaryGeneric is the pure-Go twin of ScalUnitary: x[i] *= alpha.
func ScalUnitaryGeneric(alpha float64, x []float64) {
	for i := range x {
		x[i] *= alpha
	}
}

// ScalIncGeneric is the pure-Go twin of ScalInc: x[i*incX] *= alpha for
// i < n (incX > 0, as for BLAS dscal).
func ScalIncGeneric(alpha float64, x []float64, n, incX uintptr) {
	var ix uintptr
	for i := 0; i < int(n); i++ {
		x[ix] *= alpha
		ix += incX
	}
}

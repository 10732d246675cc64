package cholesky_test

import (
	"errors"
	"fmt"

	"github.com/pacpfl/pacpfl/cholesky"
)

// Factorize a kernel matrix (with jitter, in case it is numerically
// singular), solve a system and take the log-determinant.
func ExampleFactor() {
	a := []float64{ // 3×3 symmetric positive definite, row-major
		4, 2, 0,
		2, 5, 1,
		0, 1, 3,
	}
	var f cholesky.Factor
	if err := f.FactorizeWithJitter(a, 3, 3); err != nil {
		fmt.Println(err)
		return
	}
	x := make([]float64, 3)
	if err := f.SolveVec(x, []float64{6, 8, 4}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("x = [%.4f %.4f %.4f]\n", x[0], x[1], x[2])
	fmt.Printf("ln det A = %.4f, jitter %g\n", f.LogDet(), f.Jitter())
	// Output:
	// x = [1.0000 1.0000 1.0000]
	// ln det A = 3.7842, jitter 0
}

// A matrix that is not positive definite is an error that says where the
// factorization broke down; errors.As gives the details.
func ExampleNotPDError() {
	a := []float64{
		1, 2,
		2, 1,
	}
	var f cholesky.Factor
	err := f.Factorize(a, 2, 2)
	fmt.Println(errors.Is(err, cholesky.ErrNotPositiveDefinite))
	var npd *cholesky.NotPDError
	if errors.As(err, &npd) {
		fmt.Printf("column %d, pivot %g\n", npd.Column, npd.Pivot)
	}
	// Output:
	// true
	// column 1, pivot -3
}

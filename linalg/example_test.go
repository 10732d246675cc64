package linalg_test

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/pacpfl/pacpfl/linalg"
)

// Choose a backend by name, as the CLI's --backend flag does. An unknown
// name is an error that lists the valid ones.
func ExampleBackend() {
	b, err := linalg.Backend("native")
	fmt.Println(b != nil, err)
	_, err = linalg.Backend("mkl")
	fmt.Println(err)
	// Output:
	// true <nil>
	// linalg: unknown BLAS backend "mkl" (valid: native, gonum, openblas)
}

// A Dgemm through the blas.Float64 interface: C = α·A·B + β·C, row-major.
func ExampleNative_Dgemm() {
	nat := linalg.NewNative(0)       // 0: one thread per core
	a := []float64{1, 2, 3, 4, 5, 6} // 2×3
	b := []float64{1, 0, 0, 1, 1, 1} // 3×2
	c := []float64{10, 10, 10, 10}   // 2×2
	nat.Dgemm(blas.NoTrans, blas.NoTrans, 2, 2, 3, 1, a, 3, b, 2, 1, c, 2)
	fmt.Println(c)
	// Output:
	// [14 15 20 21]
}

// blas64.Use makes every gonum mat operation run on pacpfl's native BLAS:
// a drop-in acceleration for existing gonum code.
func Example_gonumDropIn() {
	blas64.Use(linalg.DefaultNative)
	defer blas64.Use(linalg.DefaultNative.Implementation) // restore gonum's own (pure Go) BLAS

	a := mat.NewDense(2, 2, []float64{1, 2, 3, 4})
	var p mat.Dense
	p.Mul(a, a) // runs linalg.Native.Dgemm
	fmt.Println(mat.Formatted(&p))
	// Output:
	// ⎡ 7  10⎤
	// ⎣15  22⎦
}

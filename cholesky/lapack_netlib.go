//go:build netlib

package cholesky

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/netlib/lapack/lapacke"
)

// With -tags netlib the system LAPACKE (on OpenBLAS) is reachable through cgo.
func init() {
	lapackRegistry["openblas"] = func() Lapack { return openblasLapack{} }
}

// openblasLapack calls row-major LAPACKE directly after gonum's argument
// checks, so bad arguments panic exactly as with the other backends.
type openblasLapack struct{}

func (openblasLapack) Dpotrf(ul blas.Uplo, n int, a []float64, lda int) bool {
	if !checkSquare(ul, n, a, lda) {
		return true
	}
	return lapacke.Dpotrf(byte(ul), n, a, lda)
}

func (openblasLapack) Dpotrs(ul blas.Uplo, n, nrhs int, a []float64, lda int, b []float64, ldb int) {
	if !checkPotrs(ul, n, nrhs, a, lda, b, ldb) {
		return
	}
	lapacke.Dpotrs(byte(ul), n, nrhs, a, lda, b, ldb)
}

func (openblasLapack) Dpotri(ul blas.Uplo, n int, a []float64, lda int) bool {
	if !checkSquare(ul, n, a, lda) {
		return true
	}
	return lapacke.Dpotri(byte(ul), n, a, lda)
}

func (openblasLapack) Dtrtri(ul blas.Uplo, d blas.Diag, n int, a []float64, lda int) bool {
	switch {
	case ul != blas.Upper && ul != blas.Lower:
		panic(badUplo)
	case d != blas.NonUnit && d != blas.Unit:
		panic(badDiag)
	}
	if !checkSquare(ul, n, a, lda) {
		return true
	}
	return lapacke.Dtrtri(byte(ul), byte(d), n, a, lda)
}

//go:build netlib

package linalg

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/netlib/blas/netlib"
)

// With -tags netlib the system OpenBLAS is reachable through cgo.
func init() {
	register("openblas", func() blas.Float64 { return netlib.Implementation{} })
}

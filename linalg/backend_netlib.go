//go:build netlib

package linalg

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/netlib/blas/netlib"
)

// With -tags netlib the system OpenBLAS is reachable through cgo. Its
// kernels are chosen inside the library from the CPU, and some of them break
// the reference semantics of α = 0; referenceScalars restores them.
func init() {
	register("openblas", func() blas.Float64 { return withReferenceScalars(netlib.Implementation{}) })
}

package linalg

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
)

// Benchmarks of the accelerated routines on every compiled-in backend
// (go test -bench . ./linalg/; add -tags netlib for OpenBLAS). Each reports
// GFLOP/s.

func benchBackends(b *testing.B) []namedBLAS {
	var out []namedBLAS
	for _, name := range Backends() {
		impl, err := Backend(name)
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, namedBLAS{name, impl})
	}
	return out
}

func benchSizes(b *testing.B, name string) []int {
	if testing.Short() || name == "gonum" {
		return []int{100, 500}
	}
	return []int{100, 500, 1000, 2000}
}

func reportGFLOPS(b *testing.B, flops float64) {
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func BenchmarkDgemm(b *testing.B) {
	for _, be := range benchBackends(b) {
		for _, n := range benchSizes(b, be.name) {
			b.Run(fmt.Sprintf("%s/n=%d", be.name, n), func(b *testing.B) {
				rnd := rand.New(rand.NewPCG(1, 1))
				x, y, z := randMat(rnd, n, n, n), randMat(rnd, n, n, n), randMat(rnd, n, n, n)
				for b.Loop() {
					be.impl.Dgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, x, n, y, n, 0, z, n)
				}
				reportGFLOPS(b, 2*float64(n)*float64(n)*float64(n))
			})
		}
	}
}

func BenchmarkDsyrk(b *testing.B) {
	for _, be := range benchBackends(b) {
		for _, n := range benchSizes(b, be.name) {
			b.Run(fmt.Sprintf("%s/n=%d", be.name, n), func(b *testing.B) {
				rnd := rand.New(rand.NewPCG(1, 1))
				x, z := randMat(rnd, n, n, n), randMat(rnd, n, n, n)
				for b.Loop() {
					be.impl.Dsyrk(blas.Lower, blas.NoTrans, n, n, 1, x, n, 0, z, n)
				}
				reportGFLOPS(b, float64(n)*float64(n)*float64(n))
			})
		}
	}
}

func BenchmarkDtrsm(b *testing.B) {
	for _, be := range benchBackends(b) {
		for _, n := range benchSizes(b, be.name) {
			b.Run(fmt.Sprintf("%s/n=%d", be.name, n), func(b *testing.B) {
				rnd := rand.New(rand.NewPCG(1, 1))
				x, z := randMat(rnd, n, n, n), randMat(rnd, n, n, n)
				for i := 0; i < n; i++ {
					x[i*n+i] = float64(n)
				}
				for b.Loop() {
					be.impl.Dtrsm(blas.Left, blas.Lower, blas.NoTrans, blas.NonUnit, n, n, 1, x, n, z, n)
				}
				reportGFLOPS(b, float64(n)*float64(n)*float64(n))
			})
		}
	}
}

func BenchmarkDgemv(b *testing.B) {
	for _, be := range benchBackends(b) {
		for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			for _, n := range []int{100, 1000, 4000} {
				b.Run(fmt.Sprintf("%s/%s/n=%d", be.name, transName(tA), n), func(b *testing.B) {
					rnd := rand.New(rand.NewPCG(1, 1))
					x, v, w := randMat(rnd, n, n, n), randMat(rnd, 1, n, n), randMat(rnd, 1, n, n)
					for b.Loop() {
						be.impl.Dgemv(tA, n, n, 1, x, n, v, 1, 0, w, 1)
					}
					reportGFLOPS(b, 2*float64(n)*float64(n))
				})
			}
		}
	}
}

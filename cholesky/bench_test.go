package cholesky

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
)

// Go benchmarks of the LAPACK entry points on every compiled backend.
// GFLOP/s: n³/3 for Dpotrf, 2n³/3 for Dpotri (Dtrtri n³/3 + Dlauum n³/3).
func benchLapack(b *testing.B, op string) {
	backends := map[string]Lapack{}
	for _, name := range knownBackends {
		if l, err := Backend(name); err == nil {
			backends[name] = l
		}
	}
	for _, n := range []int{250, 500, 1000, 2000} {
		a := randSPD(rand.New(rand.NewPCG(1, 1)), n, n)
		fact := append([]float64(nil), a...)
		backends["gonum"].Dpotrf(blas.Lower, n, fact, n)
		w := make([]float64, n*n)
		for _, name := range []string{"native", "gonum", "openblas"} {
			impl, ok := backends[name]
			if !ok || (name == "gonum" && n > 1000) {
				continue
			}
			b.Run(fmt.Sprintf("%s/n=%d", name, n), func(b *testing.B) {
				flops := float64(n) * float64(n) * float64(n) / 3
				src := a
				if op == "potri" {
					flops *= 2
					src = fact
				}
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					copy(w, src)
					b.StartTimer()
					if op == "potrf" {
						impl.Dpotrf(blas.Lower, n, w, n)
					} else {
						impl.Dpotri(blas.Lower, n, w, n)
					}
				}
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

func BenchmarkDpotrf(b *testing.B) { benchLapack(b, "potrf") }
func BenchmarkDpotri(b *testing.B) { benchLapack(b, "potri") }

// BenchmarkFactor measures the model-facing path: Factorize, LogDet,
// SolveVec and Inverse with a reused Factor (no allocations).
func BenchmarkFactor(b *testing.B) {
	for _, n := range []int{50, 200, 1000} {
		a := randSPD(rand.New(rand.NewPCG(2, 2)), n, n)
		x := make([]float64, n)
		inv := make([]float64, n*n)
		var f Factor
		if err := f.Factorize(a, n, n); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("Factorize/n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if err := f.Factorize(a, n, n); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(n)*float64(n)/3*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		b.Run(fmt.Sprintf("SolveVec/n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if err := f.SolveVec(x, a[:n]); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("Inverse/n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if err := f.Inverse(inv, n); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(2*float64(n)*float64(n)*float64(n)/3*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

package linalg

import (
	"fmt"
	"github.com/pacpfl/pacpfl/bench"
	"math/rand/v2"
	"os"
	"strings"
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

// BenchmarkGemmSchedules alternates the grid and shared-B GEMM schedules
// (2 goroutines) in one process per shape, minimum of reps runs each, and
// reports both times and grid/shared (run with -benchtime 1x; the shapes
// from PACPFL_GEMM_SHAPES as MxNxK,... or a default set).
func BenchmarkGemmSchedules(b *testing.B) {
	shapes := [][3]int{{256, 256, 2000}, {512, 512, 2000}, {2000, 256, 256}, {256, 2000, 256}, {1000, 1000, 256},
		{500, 500, 500}, {1000, 1000, 1000}, {2000, 2000, 2000}, {96, 2000, 2000}, {2000, 96, 2000}}
	if env := os.Getenv("PACPFL_GEMM_SHAPES"); env != "" {
		shapes = nil
		for _, f := range strings.Split(env, ",") {
			var s [3]int
			if _, err := fmt.Sscanf(f, "%dx%dx%d", &s[0], &s[1], &s[2]); err != nil {
				b.Fatalf("PACPFL_GEMM_SHAPES: %q: %v", f, err)
			}
			shapes = append(shapes, s)
		}
	}
	for _, s := range shapes {
		m, n, k := s[0], s[1], s[2]
		// About 2 s per contender at 50 GFLOP/s, 10 to 500 runs.
		reps := max(10, min(500, int(2/(2*float64(m)*float64(n)*float64(k)/50e9))))
		b.Run(fmt.Sprintf("%dx%dx%d", m, n, k), func(b *testing.B) {
			rnd := rand.New(rand.NewPCG(1, 1))
			x, y, z := randMat(rnd, m, k, k), randMat(rnd, k, n, n), randMat(rnd, m, n, n)
			grid, shared := NewNative(2), NewNative(2)
			grid.schedule.Store(int32(scheduleGrid))
			shared.schedule.Store(int32(scheduleShared))
			run := func(nat *Native) func() error {
				return func() error {
					nat.Dgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, x, k, y, n, 0, z, n)
					return nil
				}
			}
			for b.Loop() {
				best, _ := bench.Alternate(reps,
					[]bench.Contender{{Name: "grid", Run: run(grid)}, {Name: "shared", Run: run(shared)}})
				fl := 2 * float64(m) * float64(n) * float64(k) / 1e9
				b.ReportMetric(fl/best[0], "grid-GFLOP/s")
				b.ReportMetric(fl/best[1], "shared-GFLOP/s")
				b.ReportMetric(best[0]/best[1], "shared-speedup")
			}
		})
	}
}

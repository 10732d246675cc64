package lml

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"
)

// sparseBenchProblem is a DefaultModel(15) particle drawn from the
// hyper-prior shape, m Gaussian inputs with smooth targets, and M inducing
// inputs from SelectInducing.
func sparseBenchProblem(b testing.TB, m, M int) (md Model, phi, X, y, Z []float64) {
	md = DefaultModel(15)
	rng := rand.New(rand.NewPCG(uint64(m), uint64(M)))
	phi, X, y = testProblem(rng, md, m, 0.5)
	Z, err := SelectInducing(X, md.D, M, 1)
	if err != nil {
		b.Fatal(err)
	}
	return md, phi, X, y, Z
}

// processCPU returns the CPU time of the process (all threads) so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSparseBound times one particle's Titsias bound + gradient
// (k = 1) with SparseOptions{} (every core; run with -cpu 2 for two).
// GFLOP/s counts the nominal 4·m·M² flops of the two passes' dense
// products per second of wall time (not the kernel, the networks or the M³
// work); cpu-s/op is the process's CPU time per evaluation, which other
// jobs on the machine inflate less than the wall time.
func BenchmarkSparseBound(b *testing.B) {
	for _, m := range []int{10000, 100000} {
		for _, M := range []int{256, 512} {
			b.Run(fmt.Sprintf("m=%d/M=%d", m, M), func(b *testing.B) {
				md, phi, X, y, Z := sparseBenchProblem(b, m, M)
				sw, err := NewSparseWorkspace(md, SparseOptions{})
				if err != nil {
					b.Fatal(err)
				}
				defer sw.Close()
				g := make([]float64, md.NumParams())
				c0 := processCPU()
				for b.Loop() {
					if _, err := sw.Bound(phi, X, y, Z, g); err != nil {
						b.Fatal(err)
					}
				}
				n := float64(b.N)
				s := b.Elapsed().Seconds() / n
				b.ReportMetric(4*float64(m)*float64(M)*float64(M)/1e9/s, "GFLOP/s")
				b.ReportMetric((processCPU()-c0).Seconds()/n, "cpu-s/op")
			})
		}
	}
}

// BenchmarkSparseChunk: m = 100,000, M = 512 with chunks of 256 to 4096
// rows (the result is the same to the bit; only the speed and the memory
// differ).
func BenchmarkSparseChunk(b *testing.B) {
	md, phi, X, y, Z := sparseBenchProblem(b, 100000, 512)
	g := make([]float64, md.NumParams())
	for _, chunk := range []int{256, 1024, 2048, 4096} {
		sw, err := NewSparseWorkspace(md, SparseOptions{Chunk: chunk})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("chunk=%d", chunk), func(b *testing.B) {
			c0 := processCPU()
			for b.Loop() {
				if _, err := sw.Bound(phi, X, y, Z, g); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric((processCPU()-c0).Seconds()/float64(b.N), "cpu-s/op")
		})
		sw.Close()
	}
}

// BenchmarkSelectInducing: k-means++ seeding of M = 512 among m rows of
// D = 15 Gaussian inputs (the worst case for its triangle-inequality skip).
func BenchmarkSelectInducing(b *testing.B) {
	for _, m := range []int{100000} {
		rng := rand.New(rand.NewPCG(1, 1))
		X := make([]float64, m*15)
		for i := range X {
			X[i] = rng.NormFloat64()
		}
		b.Run(fmt.Sprintf("m=%d/M=512", m), func(b *testing.B) {
			for b.Loop() {
				if _, err := SelectInducing(X, 15, 512, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

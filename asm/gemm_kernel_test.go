package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"
)

// Every micro-kernel this CPU/build can run is compared with the pure-Go twin
// of its shape: many k (0..67 and a large one), alpha/beta variants, beta == 0
// over NaN, and NaN guards around the tile that must stay untouched.
func TestGemmKernelsMatchGeneric(t *testing.T) {
	ks := []int{}
	for k := 0; k <= 67; k++ {
		ks = append(ks, k)
	}
	ks = append(ks, 256, 1001)
	rnd := rand.New(rand.NewPCG(1, 1))
	for _, l := range ArchLevels() {
		if why := Unsupported(l); why != "" {
			t.Run(l.String(), func(t *testing.T) { t.Skip(why) })
			continue
		}
		for _, kern := range gemmKernelsFor(l) {
			ref := GemmKernelGenericFor(kern)
			t.Run(fmt.Sprintf("%s/%dx%d", l, kern.MR, kern.NR), func(t *testing.T) {
				mr, nr := kern.MR, kern.NR
				for _, k := range ks {
					for _, ab := range [][2]float64{{1, 0}, {1, 1}, {-1.5, 0.5}, {2, 0}, {0.25, -1}} {
						alpha, beta := ab[0], ab[1]
						a := make([]float64, k*mr)
						b := make([]float64, k*nr)
						for i := range a {
							a[i] = rnd.Float64()*2 - 1
						}
						for i := range b {
							b[i] = rnd.Float64()*2 - 1
						}
						// C tile inside a larger, NaN-guarded array: ldc > nr and
						// guard cells before, after and between the rows.
						ldc := nr + 3
						const pad = 5
						c := make([]float64, pad+(mr-1)*ldc+nr+pad)
						for i := range c {
							c[i] = math.NaN()
						}
						for r := 0; r < mr; r++ {
							for j := 0; j < nr; j++ {
								if beta != 0 {
									c[pad+r*ldc+j] = rnd.Float64()
								}
							}
						}
						want := append([]float64(nil), c...)
						kern.Run(k, a, b, c[pad:], ldc, alpha, beta)
						ref.Run(k, a, b, want[pad:], ldc, alpha, beta)
						for i := range c {
							r, j := (i-pad)/ldc, (i-pad)%ldc
							inTile := i >= pad && r < mr && j < nr
							if !inTile {
								if !math.IsNaN(c[i]) {
									t.Fatalf("k=%d: guard cell %d overwritten with %v", k, i, c[i])
								}
								continue
							}
							if math.IsNaN(c[i]) || math.Abs(c[i]-want[i]) > 1e-13*float64(k+1) {
								t.Fatalf("k=%d alpha=%v beta=%v: C[%d][%d] = %v, want %v", k, alpha, beta, r, j, c[i],
									want[i])
							}
						}
					}
				}
			})
		}
	}
}

// The generic 4×4 kernel agrees with GemmGeneric (its reference).
func TestGemmGeneric4x4(t *testing.T) {
	rnd := rand.New(rand.NewPCG(2, 2))
	for k := 0; k < 20; k++ {
		a, b := make([]float64, 4*k), make([]float64, 4*k)
		for i := range a {
			a[i], b[i] = rnd.NormFloat64(), rnd.NormFloat64()
		}
		c1 := make([]float64, 4*6)
		for i := range c1 {
			c1[i] = rnd.NormFloat64()
		}
		c2 := append([]float64(nil), c1...)
		gemmGeneric4x4.Run(k, a, b, c1, 6, 1.5, -0.5)
		GemmGeneric(4, 4, k, a, b, c2, 6, 1.5, -0.5)
		for i := range c1 {
			if math.Abs(c1[i]-c2[i]) > 1e-13*float64(k+1) {
				t.Fatalf("k=%d: c[%d] = %v, want %v", k, i, c1[i], c2[i])
			}
		}
	}
}

func TestGemmKernelRejectsShortPanels(t *testing.T) {
	kern := GemmKernelFor(Current())
	defer func() {
		if recover() == nil {
			t.Fatal("no panic on a short A panel")
		}
	}()
	kern.Run(4, make([]float64, 4*kern.MR-1), make([]float64, 4*kern.NR), make([]float64, kern.MR*kern.NR), kern.NR, 1,
		0)
}

func BenchmarkGemmKernel(b *testing.B) {
	k := 256
	if s := os.Getenv("GEMM_K"); s != "" {
		fmt.Sscan(s, &k)
	}
	for _, l := range Supported() {
		for _, kern := range gemmKernelsFor(l) {
			b.Run(fmt.Sprintf("%s/%dx%d", l, kern.MR, kern.NR), func(b *testing.B) {
				a, bb := make([]float64, k*kern.MR), make([]float64, k*kern.NR)
				c := make([]float64, kern.MR*kern.NR)
				for i := range a {
					a[i] = 1
				}
				for i := range bb {
					bb[i] = 1
				}
				for b.Loop() {
					kern.Run(k, a, bb, c, kern.NR, 1, 1)
				}
				b.ReportMetric(float64(2*k*kern.MR*kern.NR)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

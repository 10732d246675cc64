package cholesky

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	lgonum "gonum.org/v1/gonum/lapack/gonum"

	"github.com/pacpfl/pacpfl/asm"
	"github.com/pacpfl/pacpfl/asm/asmtest"
)

// TestRLTLeafAgainstGonum compares the micro-kernel triangular solve with
// gonum's Dtrsm on many shapes (rows not a multiple of MR, columns not a
// multiple of NR, strides) at every SIMD level this CPU supports, on one and
// several goroutines.
func TestRLTLeafAgainstGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	var leaf rltLeaf
	asmtest.ForEachLevel(t, func(t *testing.T, lvl asm.Level) {
		for _, m := range []int{1, 3, 5, 6, 7, 13, 50, 301} {
			for _, n := range []int{1, 2, 3, 4, 7, 8, 9, 16, 17, 31, 63, 64, 65, 130, 256} {
				if m > 100 && n > 70 && testing.Short() {
					continue
				}
				ldl, ldb := n+1, n+3
				l := make([]float64, n*ldl)
				for i := 0; i < n; i++ {
					for j := 0; j < i; j++ {
						l[i*ldl+j] = (rng.Float64() - 0.5) / math.Sqrt(float64(n))
					}
					l[i*ldl+i] = 1 + rng.Float64()
					for j := i + 1; j < ldl; j++ {
						l[i*ldl+j] = math.NaN() // must not be read
					}
				}
				b := make([]float64, m*ldb)
				for i := range b {
					b[i] = rng.NormFloat64()
				}
				want := append([]float64(nil), b...)
				gonum.Implementation{}.Dtrsm(blas.Right, blas.Lower, blas.Trans, blas.NonUnit, m, n, 1, l, ldl, want,
					ldb)
				for _, threads := range []int{1, 2, 3} {
					got := append([]float64(nil), b...)
					leaf.solve(threads, m, n, l, ldl, got, ldb)
					for i := 0; i < m; i++ {
						for j := 0; j < ldb; j++ {
							g, w := got[i*ldb+j], want[i*ldb+j]
							if j >= n {
								if g != b[i*ldb+j] {
									t.Fatalf("%s m=%d n=%d: wrote padding (%d,%d)", lvl, m, n, i, j)
								}
								continue
							}
							if math.Abs(g-w) > 1e-12*math.Max(1, math.Abs(w)) {
								t.Fatalf("%s m=%d n=%d threads=%d: X[%d][%d] = %g, gonum %g", lvl, m, n, threads, i, j,
									g, w)
							}
						}
					}
				}
			}
		}
	})
}

// TestLeafKernels checks potf2, trti2 and lauu2 against gonum directly.
func TestLeafKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 12))
	for _, n := range []int{0, 1, 2, 3, 9, 31, 64, maxLeaf} {
		lda := n + 2
		a := randSPD(rng, n, lda)
		got := append([]float64(nil), a...)
		want := append([]float64(nil), a...)
		if col, _ := potf2(n, got, lda); col >= 0 {
			t.Fatalf("potf2 n=%d failed at %d", n, col)
		}
		if n > 0 && !gonumLapack.Dpotf2(blas.Lower, n, want, lda) {
			t.Fatal("gonum Dpotf2 failed")
		}
		if d := relDiff(got, want); d > 1e-13 {
			t.Errorf("potf2 n=%d differs by %g", n, d)
		}
		for _, unit := range []bool{false, true} {
			g, w := append([]float64(nil), got...), append([]float64(nil), got...)
			trti2(unit, n, g, lda)
			diag := blas.NonUnit
			if unit {
				diag = blas.Unit
			}
			if n > 0 {
				gonumLapack.Dtrti2(blas.Lower, diag, n, w, lda)
			}
			if d := relDiff(g, w); d > 1e-12 {
				t.Errorf("trti2 n=%d unit=%v differs by %g", n, unit, d)
			}
		}
		g, w := append([]float64(nil), got...), append([]float64(nil), got...)
		lauu2(n, g, lda)
		if n > 0 {
			gonumLapack.Dlauu2(blas.Lower, n, w, lda)
		}
		if d := relDiff(g, w); d > 1e-13 {
			t.Errorf("lauu2 n=%d differs by %g", n, d)
		}
	}
}

var gonumLapack = lgonum.Implementation{}

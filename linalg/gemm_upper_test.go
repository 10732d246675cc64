package linalg

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// GemmUpperB against Dgemm on the same U with its lower part set to zero:
// equal to the bit above Dgemm's tiny sizes (the skipped products are
// products with those zeros),
// on many shapes, strides, alpha and beta, small blocks (so that pc, jc and
// the diagonal fall anywhere in the blocks), 1 and 3 threads; the entries
// below U's diagonal hold NaN and must not matter; C's padding is left
// alone. And against gonum's Dgemm to rounding.
func TestGemmUpperBMatchesDgemm(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	var ref gonum.Implementation
	for _, blk := range []Blocking{{12, 16, 24}, {6, 5, 8}, DefaultBlocking()} {
		for _, threads := range []int{1, 3} {
			nat := NewNative(threads)
			if err := nat.SetBlocking(blk.MC, blk.KC, blk.NC); err != nil {
				t.Fatal(err)
			}
			for trial := 0; trial < 60; trial++ {
				m, n := dims[rnd.IntN(len(dims))], dims[rnd.IntN(len(dims))]
				if trial%10 == 0 {
					m, n = 100+rnd.IntN(120), 100+rnd.IntN(300)
				}
				alpha, beta := alphas[rnd.IntN(len(alphas))], betas[rnd.IntN(len(betas))]
				lda, ldb, ldc := pickLd(rnd, n), pickLd(rnd, n), pickLd(rnd, n)
				a := randMat(rnd, m, n, lda)
				u := randMat(rnd, n, n, ldb)
				z := append([]float64(nil), u...) // lower part zero, for Dgemm
				for i := 0; i < n; i++ {
					for j := 0; j < i; j++ {
						u[i*ldb+j] = math.NaN()
						z[i*ldb+j] = 0
					}
				}
				c0 := randMat(rnd, m, n, ldc)
				got := append([]float64(nil), c0...)
				want := append([]float64(nil), c0...)
				gonumC := append([]float64(nil), c0...)
				nat.GemmUpperB(m, n, alpha, a, lda, u, ldb, beta, got, ldc)
				nat.Dgemm(blas.NoTrans, blas.NoTrans, m, n, n, alpha, a, lda, z, ldb, beta, want, ldc)
				if m > 0 && n > 0 {
					ref.Dgemm(blas.NoTrans, blas.NoTrans, m, n, n, alpha, a, lda, z, ldb, beta, gonumC, ldc)
				}
				for i := range got {
					// (Dgemm's tiny sizes run plain loops, without FMA.)
					if m*n*n > tinyGemm && math.Float64bits(got[i]) != math.Float64bits(want[i]) &&
						!(got[i] == 0 && want[i] == 0) {
						t.Fatalf(
							"blocks %v, %d threads, m=%d n=%d α=%g β=%g lda=%d ldb=%d ldc=%d: c[%d] = %v, Dgemm %v",
							blk, threads, m, n, alpha, beta, lda, ldb, ldc, i, got[i], want[i])
					}
					if d := math.Abs(got[i] - gonumC[i]); !(d <= 1e-12*(1+math.Abs(gonumC[i]))) {
						t.Fatalf("m=%d n=%d: c[%d] = %v, gonum %v", m, n, i, got[i], gonumC[i])
					}
				}
			}
		}
	}
}

func TestGemmUpperBArguments(t *testing.T) {
	nat := NewNative(1)
	a, b, c := make([]float64, 12), make([]float64, 9), make([]float64, 12)
	for _, tc := range []struct {
		f    func()
		want string
	}{
		{func() { nat.GemmUpperB(-1, 3, 1, a, 3, b, 3, 0, c, 3) }, mLT0},
		{func() { nat.GemmUpperB(4, -1, 1, a, 3, b, 3, 0, c, 3) }, nLT0},
		{func() { nat.GemmUpperB(4, 3, 1, a, 2, b, 3, 0, c, 3) }, badLdA},
		{func() { nat.GemmUpperB(4, 3, 1, a, 3, b, 2, 0, c, 3) }, badLdB},
		{func() { nat.GemmUpperB(4, 3, 1, a, 3, b, 3, 0, c, 2) }, badLdC},
		{func() { nat.GemmUpperB(4, 3, 1, a[:11], 3, b, 3, 0, c, 3) }, shortA},
		{func() { nat.GemmUpperB(4, 3, 1, a, 3, b[:8], 3, 0, c, 3) }, shortB},
		{func() { nat.GemmUpperB(4, 3, 1, a, 3, b, 3, 0, c[:11], 3) }, shortC},
	} {
		if got := panicText(tc.f); got != tc.want {
			t.Errorf("panic %q, want %q", got, tc.want)
		}
	}
}

// GemmUpperB in steady state does not allocate.
func TestGemmUpperBNoAllocs(t *testing.T) {
	nat := NewNative(1)
	const m, n = 300, 200
	a, b, c := make([]float64, m*n), make([]float64, n*n), make([]float64, m*n)
	nat.GemmUpperB(m, n, 1, a, n, b, n, 0, c, n)
	if allocs := testing.AllocsPerRun(20, func() { nat.GemmUpperB(m, n, 1, a, n, b, n, 0, c, n) }); allocs != 0 {
		t.Errorf("%v allocations per call", allocs)
	}
}

package linalg

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// GemmTriangular against Dgemm on the same dense triangle (zeros in its
// other half): equal to the bit above Dgemm's tiny sizes (the skipped
// products are products with those zeros), for both sides, triangles and
// transposes, on many shapes (odd ones included), strides, alpha and beta,
// small blocks (so that pc, jc and the diagonal fall anywhere in the
// blocks), 1 and 3 threads; C's padding is left alone. And against gonum's
// Dgemm to rounding.
func TestGemmTriangularMatchesDgemm(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 8))
	var ref gonum.Implementation
	for _, blk := range []Blocking{{12, 16, 24}, {6, 5, 8}, DefaultBlocking()} {
		for _, threads := range []int{1, 3} {
			nat := NewNative(threads)
			if err := nat.SetBlocking(blk.MC, blk.KC, blk.NC); err != nil {
				t.Fatal(err)
			}
			for trial := 0; trial < 120; trial++ {
				m, n := dims[rnd.IntN(len(dims))], dims[rnd.IntN(len(dims))]
				if trial%10 == 0 {
					m, n = 100+rnd.IntN(120), 100+rnd.IntN(300)
				}
				side := []blas.Side{blas.Left, blas.Right}[rnd.IntN(2)]
				ul := []blas.Uplo{blas.Lower, blas.Upper}[rnd.IntN(2)]
				tT := []blas.Transpose{blas.NoTrans, blas.Trans}[rnd.IntN(2)]
				alpha, beta := alphas[rnd.IntN(len(alphas))], betas[rnd.IntN(len(betas))]
				k := n
				if side == blas.Left {
					k = m
				}
				ldt, ldb, ldc := pickLd(rnd, k), pickLd(rnd, n), pickLd(rnd, n)
				tri := randMat(rnd, k, k, ldt)
				for i := 0; i < k; i++ {
					for j := 0; j < k; j++ {
						if (ul == blas.Lower && j > i) || (ul == blas.Upper && j < i) {
							tri[i*ldt+j] = 0
						}
					}
				}
				b := randMat(rnd, m, n, ldb)
				c0 := randMat(rnd, m, n, ldc)
				got := append([]float64(nil), c0...)
				want := append([]float64(nil), c0...)
				gonumC := append([]float64(nil), c0...)
				nat.GemmTriangular(side, ul, tT, m, n, alpha, tri, ldt, b, ldb, beta, got, ldc)
				if side == blas.Left {
					nat.Dgemm(tT, blas.NoTrans, m, n, m, alpha, tri, ldt, b, ldb, beta, want, ldc)
					if m > 0 && n > 0 {
						ref.Dgemm(tT, blas.NoTrans, m, n, m, alpha, tri, ldt, b, ldb, beta, gonumC, ldc)
					}
				} else {
					nat.Dgemm(blas.NoTrans, tT, m, n, n, alpha, b, ldb, tri, ldt, beta, want, ldc)
					if m > 0 && n > 0 {
						ref.Dgemm(blas.NoTrans, tT, m, n, n, alpha, b, ldb, tri, ldt, beta, gonumC, ldc)
					}
				}
				for i := range got {
					// (Dgemm's tiny sizes run plain loops, without FMA.)
					if m*n*k > tinyGemm && math.Float64bits(got[i]) != math.Float64bits(want[i]) &&
						!(got[i] == 0 && want[i] == 0) {
						t.Fatalf("blocks %v, %d threads, %c %c %c m=%d n=%d α=%g β=%g ldt=%d ldb=%d ldc=%d: c[%d] = "+
							"%v, Dgemm %v",
							blk, threads, side, ul, tT, m, n, alpha, beta, ldt, ldb, ldc, i, got[i], want[i])
					}
					if d := math.Abs(got[i] - gonumC[i]); !(d <= 1e-12*(1+math.Abs(gonumC[i]))) {
						t.Fatalf("%c %c %c m=%d n=%d: c[%d] = %v, gonum %v", side, ul, tT, m, n, i, got[i], gonumC[i])
					}
				}
			}
		}
	}
}

func TestGemmTriangularArguments(t *testing.T) {
	nat := NewNative(1)
	tr, b, c := make([]float64, 16), make([]float64, 12), make([]float64, 12)
	for _, tc := range []struct {
		f    func()
		want string
	}{
		{func() { nat.GemmTriangular('X', blas.Lower, blas.NoTrans, 4, 3, 1, tr, 4, b, 3, 0, c, 3) }, badSide},
		{func() { nat.GemmTriangular(blas.Left, 'X', blas.NoTrans, 4, 3, 1, tr, 4, b, 3, 0, c, 3) }, badUplo},
		{func() { nat.GemmTriangular(blas.Left, blas.Lower, 'X', 4, 3, 1, tr, 4, b, 3, 0, c, 3) }, badTranspose},
		{func() { nat.GemmTriangular(blas.Left, blas.Lower, blas.NoTrans, -1, 3, 1, tr, 4, b, 3, 0, c, 3) }, mLT0},
		{func() { nat.GemmTriangular(blas.Left, blas.Lower, blas.NoTrans, 4, 3, 1, tr, 3, b, 3, 0, c, 3) }, badLdA},
		{func() { nat.GemmTriangular(blas.Right, blas.Lower, blas.NoTrans, 4, 3, 1, tr, 2, b, 3, 0, c, 3) }, badLdB},
		{func() { nat.GemmTriangular(blas.Left, blas.Lower, blas.NoTrans, 4, 3, 1, tr[:15], 4, b, 3, 0, c, 3) },
			shortA},
		{func() { nat.GemmTriangular(blas.Left, blas.Lower, blas.NoTrans, 4, 3, 1, tr, 4, b, 3, 0, c[:11], 3) },
			shortC},
	} {
		func() {
			defer func() {
				if r := recover(); r != tc.want {
					t.Errorf("panic %v, want %q", r, tc.want)
				}
			}()
			tc.f()
		}()
	}
}

// A warm GemmTriangular allocates nothing.
func TestGemmTriangularAllocs(t *testing.T) {
	nat := NewNative(1)
	n := 64
	tr, b, c := make([]float64, n*n), make([]float64, n*n), make([]float64, n*n)
	run := func() { nat.GemmTriangular(blas.Right, blas.Lower, blas.NoTrans, n, n, 1, tr, n, b, n, 0, c, n) }
	run()
	if a := testing.AllocsPerRun(10, run); a != 0 {
		t.Errorf("%v allocations per call", a)
	}
}

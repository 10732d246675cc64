package linalg

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
)

// GemmPacked equals, to the bit, Dgemm (or GemmUpperB for a triangular
// PackB) with the same blocking on one goroutine, for both op(B), many
// shapes and strides, blockings that put the cache-block edges anywhere,
// and one PackedB reused for several A (and repacked at other sizes).
func TestGemmPackedMatchesDgemm(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 8))
	var pb PackedB
	for _, blk := range []Blocking{{12, 16, 24}, {6, 5, 8}, DefaultBlocking()} {
		nat := NewNative(1)
		if err := nat.SetBlocking(blk.MC, blk.KC, blk.NC); err != nil {
			t.Fatal(err)
		}
		for trial := 0; trial < 80; trial++ {
			k, n := dims[rnd.IntN(len(dims))], dims[rnd.IntN(len(dims))]
			if trial%10 == 0 {
				k, n = 100+rnd.IntN(200), 100+rnd.IntN(300)
			}
			upper := trial%3 == 0
			if upper {
				k = n
			}
			tB := []blas.Transpose{blas.NoTrans, blas.Trans}[rnd.IntN(2)]
			if upper {
				tB = blas.NoTrans
			}
			ldb := pickLd(rnd, n)
			if tB == blas.Trans {
				ldb = pickLd(rnd, k)
			}
			var b []float64
			if tB == blas.Trans {
				b = randMat(rnd, n, k, ldb)
			} else {
				b = randMat(rnd, k, n, ldb)
			}
			if upper {
				for i := 0; i < n; i++ {
					for j := 0; j < i; j++ {
						b[i*ldb+j] = math.NaN() // must not be used
					}
				}
			}
			nat.PackB(&pb, tB, k, n, b, ldb, upper)
			for rep := 0; rep < 2; rep++ {
				m := dims[rnd.IntN(len(dims))] + 40*rep
				alpha, beta := alphas[rnd.IntN(len(alphas))], betas[rnd.IntN(len(betas))]
				lda, ldc := pickLd(rnd, k), pickLd(rnd, n)
				a := randMat(rnd, m, k, lda)
				c0 := randMat(rnd, m, n, ldc)
				got := append([]float64(nil), c0...)
				want := append([]float64(nil), c0...)
				nat.GemmPacked(m, alpha, a, lda, &pb, beta, got, ldc)
				if upper {
					nat.GemmUpperB(m, n, alpha, a, lda, b, ldb, beta, want, ldc)
				} else {
					nat.Dgemm(blas.NoTrans, tB, m, n, k, alpha, a, lda, b, ldb, beta, want, ldc)
				}
				for i := range got {
					same := math.Float64bits(got[i]) == math.Float64bits(want[i]) || (got[i] == 0 && want[i] == 0)
					close := math.Abs(got[i]-want[i]) <= 1e-12*(1+math.Abs(want[i]))
					if !close || (!same && m*n*k > tinyGemm) {
						t.Fatalf("blocks %v, m=%d n=%d k=%d tB=%v upper=%v α=%g β=%g: c[%d] = %v, want %v",
							blk, m, n, k, tB, upper, alpha, beta, i, got[i], want[i])
					}
				}
			}
		}
	}
}

func TestGemmPackedArguments(t *testing.T) {
	nat := NewNative(1)
	var pb PackedB
	b := make([]float64, 12)
	if got := panicText(func() { nat.GemmPacked(2, 1, b, 3, &pb, 0, b, 4) }); got != "linalg: GemmPacked: B was not "+
		"packed (PackB)" {
		t.Errorf("unpacked: %q", got)
	}
	for _, tc := range []struct {
		f    func()
		want string
	}{
		{func() { nat.PackB(&pb, 'x', 3, 4, b, 4, false) }, badTranspose},
		{func() { nat.PackB(&pb, blas.NoTrans, -1, 4, b, 4, false) }, kLT0},
		{func() { nat.PackB(&pb, blas.NoTrans, 3, -1, b, 4, false) }, nLT0},
		{func() { nat.PackB(&pb, blas.NoTrans, 3, 4, b, 4, true) },
			"linalg: PackB: an upper triangular B must be square"},
		{func() { nat.PackB(&pb, blas.NoTrans, 3, 4, b, 3, false) }, badLdB},
		{func() { nat.PackB(&pb, blas.NoTrans, 3, 4, b[:11], 4, false) }, shortB},
		{func() { nat.PackB(&pb, blas.Trans, 3, 4, b, 2, false) }, badLdB},
	} {
		if got := panicText(tc.f); got != tc.want {
			t.Errorf("panic %q, want %q", got, tc.want)
		}
	}
	nat.PackB(&pb, blas.NoTrans, 3, 4, b, 4, false)
	a, c := make([]float64, 6), make([]float64, 8)
	for _, tc := range []struct {
		f    func()
		want string
	}{
		{func() { nat.GemmPacked(-1, 1, a, 3, &pb, 0, c, 4) }, mLT0},
		{func() { nat.GemmPacked(2, 1, a, 2, &pb, 0, c, 4) }, badLdA},
		{func() { nat.GemmPacked(2, 1, a, 3, &pb, 0, c, 3) }, badLdC},
		{func() { nat.GemmPacked(2, 1, a[:5], 3, &pb, 0, c, 4) }, shortA},
		{func() { nat.GemmPacked(2, 1, a, 3, &pb, 0, c[:7], 4) }, shortC},
	} {
		if got := panicText(tc.f); got != tc.want {
			t.Errorf("panic %q, want %q", got, tc.want)
		}
	}
}

// Repacking a PackedB of the same size and multiplying do not allocate.
func TestGemmPackedNoAllocs(t *testing.T) {
	nat := NewNative(1)
	const m, n, k = 300, 257, 200
	a, b, c := make([]float64, m*k), make([]float64, k*n), make([]float64, m*n)
	var pb PackedB
	nat.PackB(&pb, blas.NoTrans, k, n, b, n, false)
	nat.GemmPacked(m, 1, a, k, &pb, 0, c, n)
	if allocs := testing.AllocsPerRun(20, func() {
		nat.PackB(&pb, blas.NoTrans, k, n, b, n, false)
		nat.GemmPacked(m, 1, a, k, &pb, 0, c, n)
	}); allocs != 0 {
		t.Errorf("%v allocations per call", allocs)
	}
}

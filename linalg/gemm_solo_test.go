package linalg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"gonum.org/v1/gonum/blas"
)

// soloShapes are products small enough for gemmSolo's own workspace, a few
// larger than soloMaxFloats (they go back to the free list), every edge of
// the 6×8 and 4×4 tiles, and the networks' shapes (a layer over 10 rows).
var soloShapes = [][3]int{{10, 32, 32}, {10, 32, 1}, {32, 32, 10}, {32, 1, 10}, {10, 2, 32}, {2, 32, 10},
	{7, 9, 5}, {13, 17, 3}, {6, 8, 4}, {5, 7, 1}, {1, 1, 65}, {37, 41, 29}, {300, 300, 300}, {250, 20, 400}}

// Several goroutines on one Native: whichever takes a workspace from
// soloSlots and whichever falls back to the free list, each product is the
// one the Native computes alone, to the bit (run with -race; it fails if a
// slot is read instead of swapped out).
func TestGemmSoloConcurrent(t *testing.T) {
	nat := NewNative(1)
	type job struct {
		tA, tB  blas.Transpose
		m, n, k int
		a, b, c []float64
		want    []float64
	}
	rnd := rand.New(rand.NewPCG(5, 6))
	var jobs []*job
	for _, s := range soloShapes {
		for _, tr := range [][2]blas.Transpose{{blas.NoTrans, blas.NoTrans}, {blas.NoTrans, blas.Trans},
			{blas.Trans, blas.NoTrans}} {
			j := &job{tA: tr[0], tB: tr[1], m: s[0], n: s[1], k: s[2]}
			j.a = randMat(rnd, s[0], s[2], s[2])[:s[0]*s[2]]
			j.b = randMat(rnd, s[2], s[1], s[1])[:s[2]*s[1]]
			j.c = randMat(rnd, s[0], s[1], s[1])[:s[0]*s[1]]
			j.want = append([]float64(nil), j.c...)
			lda, ldb := ld(j.tA, j.m, j.k), ld(j.tB, j.k, j.n)
			nat.Dgemm(j.tA, j.tB, j.m, j.n, j.k, 0.75, j.a, lda, j.b, ldb, -1, j.want, j.n)
			jobs = append(jobs, j)
		}
	}
	const workers, rounds = 6, 20
	var wg sync.WaitGroup
	errs := make(chan string, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			c := make([]float64, 300*300)
			for r := 0; r < rounds; r++ {
				j := jobs[(w*7+r*3)%len(jobs)]
				c := c[:len(j.c)]
				copy(c, j.c)
				nat.Dgemm(j.tA, j.tB, j.m, j.n, j.k, 0.75, j.a, ld(j.tA, j.m, j.k), j.b, ld(j.tB, j.k, j.n), -1, c, j.n)
				for i := range c {
					if math.Float64bits(c[i]) != math.Float64bits(j.want[i]) {
						errs <- fmt.Sprintf("%c%c %d×%d×%d, goroutine %d: C[%d] = %v, alone %v", j.tA, j.tB, j.m, j.n,
							j.k, w, i, c[i], j.want[i])
						return
					}
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// ld is the row stride of op(X) = m×n stored without padding.
func ld(tr blas.Transpose, m, n int) int {
	if tr == blas.NoTrans {
		return n
	}
	return m
}

// The edge tiles' merge: with alpha = ±1 and beta ∈ {0, 1} only the final
// sum rounds, so C + P and C − P, P the product alone (alpha 1, beta 0),
// are the results to the bit, inside tiles and on their edges alike (k up
// to KC: one accumulation per element). Other alpha and beta go through
// the scalar loop; they are checked against the sum by definition.
func TestGemmMergeEdges(t *testing.T) {
	nat := NewNative(1)
	rnd := rand.New(rand.NewPCG(7, 8))
	for _, s := range soloShapes {
		m, n, k := s[0], s[1], s[2]
		if k > 128 {
			continue
		}
		a := randMat(rnd, m, k, k)[:m*k]
		b := randMat(rnd, k, n, n)[:k*n]
		c0 := randMat(rnd, m, n, n)[:m*n]
		p := make([]float64, m*n)
		for i := range p {
			p[i] = math.NaN() // beta = 0 must not read C
		}
		nat.Dgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, a, k, b, n, 0, p, n)
		for _, alpha := range []float64{1, -1} {
			c := append([]float64(nil), c0...)
			nat.Dgemm(blas.NoTrans, blas.NoTrans, m, n, k, alpha, a, k, b, n, 1, c, n)
			for i := range c {
				if want := c0[i] + alpha*p[i]; math.Float64bits(c[i]) != math.Float64bits(want) {
					t.Fatalf("%d×%d×%d alpha %v beta 1: C[%d][%d] = %v, want C + alpha·P = %v", m, n, k, alpha,
						i/n, i%n, c[i], want)
				}
			}
		}
		for _, ab := range [][2]float64{{0.5, 0}, {-2, 0.25}, {1, 3}} {
			alpha, beta := ab[0], ab[1]
			c := append([]float64(nil), c0...)
			nat.Dgemm(blas.NoTrans, blas.NoTrans, m, n, k, alpha, a, k, b, n, beta, c, n)
			for i := range c {
				var sum float64
				for l := 0; l < k; l++ {
					sum += a[(i/n)*k+l] * b[l*n+i%n]
				}
				want := beta*c0[i] + alpha*sum
				if math.Abs(c[i]-want) > 1e-13*(1+math.Abs(want)) {
					t.Fatalf("%d×%d×%d alpha %v beta %v: C[%d][%d] = %v, want %v", m, n, k, alpha, beta, i/n, i%n,
						c[i], want)
				}
			}
		}
	}
}

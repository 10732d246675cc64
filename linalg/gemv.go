package linalg

import (
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// gemvMinParallel is the matrix size (elements) from which Dgemv splits the
// rows (NoTrans) or columns (Trans) of A across goroutines: below it the
// hand-off costs more than the memory-bound product saves.
var gemvMinParallel = 1 << 17

// Dgemv computes y = alpha * op(A) * x + beta * y with A m×n. The matrix is
// cut into bands of rows (NoTrans) or columns (Trans), each an independent
// gonum Dgemv on its own goroutine.
func (nat *Native) Dgemv(tA blas.Transpose, m, n int, alpha float64, a []float64, lda int, x []float64, incX int, beta float64, y []float64, incY int) {
	if tA != blas.NoTrans && tA != blas.Trans && tA != blas.ConjTrans {
		panic(badTranspose)
	}
	if m < 0 {
		panic(mLT0)
	}
	if n < 0 {
		panic(nLT0)
	}
	if lda < max(1, n) {
		panic(badLdA)
	}
	if incX == 0 {
		panic(zeroIncX)
	}
	if incY == 0 {
		panic(zeroIncY)
	}
	lenX, lenY := m, n
	if tA == blas.NoTrans {
		lenX, lenY = n, m
	}
	if m == 0 || n == 0 {
		return
	}
	if (incX > 0 && (lenX-1)*incX >= len(x)) || (incX < 0 && (1-lenX)*incX >= len(x)) {
		panic(shortX)
	}
	if (incY > 0 && (lenY-1)*incY >= len(y)) || (incY < 0 && (1-lenY)*incY >= len(y)) {
		panic(shortY)
	}
	if len(a) < lda*(m-1)+n {
		panic(shortA)
	}
	if alpha == 0 && beta == 1 {
		return
	}
	threads := nat.Threads()
	if threads <= 1 || m*n < gemvMinParallel || incY < 0 {
		gonum.Implementation{}.Dgemv(tA, m, n, alpha, a, lda, x, incX, beta, y, incY)
		return
	}
	g := gemvCalls.get()
	*g = gemvCall{trans: tA != blas.NoTrans, m: m, n: n, alpha: alpha, a: a, lda: lda, x: x, incX: incX, beta: beta, y: y, incY: incY}
	g.np = min(threads, lenY/64)
	if g.np <= 1 {
		g.np = 1
	}
	runParallel(g.np, g, &g.wg)
	*g = gemvCall{}
	gemvCalls.put(g)
}

type gemvCall struct {
	trans bool
	m, n  int
	alpha float64
	a     []float64
	lda   int
	x     []float64
	incX  int
	beta  float64
	y     []float64
	incY  int
	np    int
	wg    sync.WaitGroup
}

var gemvCalls freeList[gemvCall]

func (g *gemvCall) part(id int) {
	impl := gonum.Implementation{}
	if !g.trans { // rows [lo,hi) of A give y[lo:hi]; x is whole
		lo, hi := g.m*id/g.np, g.m*(id+1)/g.np
		if hi > lo {
			impl.Dgemv(blas.NoTrans, hi-lo, g.n, g.alpha, g.a[lo*g.lda:], g.lda, g.x, g.incX, g.beta, g.y[lo*g.incY:], g.incY)
		}
		return
	}
	// columns [lo,hi) of A give y[lo:hi]; x is whole (incX > 0 here)
	lo, hi := g.n*id/g.np, g.n*(id+1)/g.np
	if hi > lo {
		impl.Dgemv(blas.Trans, g.m, hi-lo, g.alpha, g.a[lo:], g.lda, g.x, g.incX, g.beta, g.y[lo*g.incY:], g.incY)
	}
}

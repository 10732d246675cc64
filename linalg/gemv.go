package linalg

import (
	"sync"

	"gonum.org/v1/gonum/blas"

	"github.com/pacpfl/pacpfl/asm"
)

// gemvMinParallel is the matrix size (elements) from which Dgemv splits the
// rows (NoTrans) or columns (Trans) of A across goroutines: below it the
// hand-off costs more than the memory-bound product saves.
var gemvMinParallel = 1 << 17

// Dgemv computes y = alpha * op(A) * x + beta * y with A m×n. Large
// matrices are cut into bands of rows (NoTrans) or columns (Trans), one per
// goroutine; the inner loops are the SIMD dot and axpy kernels of package asm.
func (nat *Native) Dgemv(tA blas.Transpose, m, n int, alpha float64, a []float64, lda int, x []float64, incX int,
	beta float64, y []float64, incY int) {
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
	if alpha == 0 {
		// y = beta*y; x is not read.
		if incY < 0 {
			incY = -incY
		}
		if beta == 0 {
			for i := 0; i < lenY; i++ {
				y[i*incY] = 0
			}
			return
		}
		nat.Dscal(lenY, beta, y, incY)
		return
	}
	g := gemvCalls.get()
	*g = gemvCall{trans: tA != blas.NoTrans, m: m, n: n, alpha: alpha, a: a, lda: lda, x: x, incX: incX, beta: beta,
		y: y, incY: incY}
	g.np = 1
	if threads := nat.Threads(); threads > 1 && m*n >= gemvMinParallel {
		g.np = max(1, min(threads, lenY/64))
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

// vecIndex is the position of element i of a vector of length n with
// stride inc (BLAS convention: a negative stride starts at the far end).
func vecIndex(i, n, inc int) int {
	if inc > 0 {
		return i * inc
	}
	return (n - 1 - i) * -inc
}

// part computes y[lo:hi] (elements, not positions), where [lo,hi) is this
// part's share of y: rows of A (NoTrans: dot products with x) or columns of
// A (Trans: axpys of the rows of A into y's segment, which stays in L1).
func (g *gemvCall) part(id int) {
	lenY, lenX := g.m, g.n
	if g.trans {
		lenY, lenX = g.n, g.m
	}
	lo, hi := lenY*id/g.np, lenY*(id+1)/g.np
	if hi <= lo {
		return
	}
	if !g.trans {
		var ix uintptr
		if g.incX < 0 {
			ix = uintptr((1 - lenX) * g.incX)
		}
		for i := lo; i < hi; i++ {
			row := g.a[i*g.lda : i*g.lda+lenX]
			var d float64
			if g.incX == 1 {
				d = asm.DotUnitary(row, g.x[:lenX])
			} else {
				d = asm.DotInc(row, g.x, uintptr(lenX), 1, uintptr(g.incX), 0, ix)
			}
			p := vecIndex(i, lenY, g.incY)
			if g.beta == 0 {
				g.y[p] = g.alpha * d
			} else {
				g.y[p] = g.beta*g.y[p] + g.alpha*d
			}
		}
		return
	}
	// Trans: y[lo:hi] = beta*y[lo:hi] + alpha * sum_l x[l] * A[l][lo:hi].
	for i := lo; i < hi; i++ {
		p := vecIndex(i, lenY, g.incY)
		if g.beta == 0 {
			g.y[p] = 0
		} else if g.beta != 1 {
			g.y[p] *= g.beta
		}
	}
	w := hi - lo
	if g.incY == 1 {
		ys := g.y[lo:hi]
		for l := 0; l < lenX; l++ {
			if xv := g.alpha * g.x[vecIndex(l, lenX, g.incX)]; xv != 0 {
				asm.AxpyUnitary(xv, g.a[l*g.lda+lo:l*g.lda+hi], ys)
			}
		}
		return
	}
	// Strided y: element lo+j sits at position vecIndex(lo) + j*incY, also
	// for a negative stride.
	iy := vecIndex(lo, lenY, g.incY)
	for l := 0; l < lenX; l++ {
		if xv := g.alpha * g.x[vecIndex(l, lenX, g.incX)]; xv != 0 {
			asm.AxpyInc(xv, g.a[l*g.lda+lo:l*g.lda+hi], g.y, uintptr(w), 1, uintptr(g.incY), 0, uintptr(iy))
		}
	}
}

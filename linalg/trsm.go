package linalg

import (
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/pacpfl/pacpfl/asm"
	"github.com/pacpfl/pacpfl/internal/hugepage"
)

// trsmBlock is the order up to which a triangular diagonal block is solved
// directly (gonum's substitution, vectorised along the rows of B); larger
// triangles are halved recursively and the off-diagonal coupling is a GEMM
// update, so most of the work runs in the GEMM kernel with a large k.
const trsmBlock = 64

// trsmMinPiece is the narrowest slab of B a goroutine solves on its own:
// narrower slabs repack the same blocks of A in every goroutine (measured:
// 64 rows × 1000, side Right, two 32-row slabs ran 1.8× slower than OpenBLAS).
const trsmMinPiece = 128

// trsmFewRows: with side Right and at most this many rows of B, gonum's
// row-by-row substitution beats packing (measured on a 1000×1000 triangle:
// 1 row 0.14 ms vs 0.53 ms; equal at 4 rows).
const trsmFewRows = 3

// Dtrsm solves op(A) * X = alpha * B (side Left) or X * op(A) = alpha * B
// (side Right) for X, overwriting B, where A is triangular (ul) with a unit
// or non-unit diagonal (d).
func (nat *Native) Dtrsm(s blas.Side, ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float64,
	a []float64, lda int, b []float64, ldb int) {
	if s != blas.Left && s != blas.Right {
		panic(badSide)
	}
	if ul != blas.Lower && ul != blas.Upper {
		panic(badUplo)
	}
	if tA != blas.NoTrans && tA != blas.Trans && tA != blas.ConjTrans {
		panic(badTranspose)
	}
	if d != blas.NonUnit && d != blas.Unit {
		panic(badDiag)
	}
	if m < 0 {
		panic(mLT0)
	}
	if n < 0 {
		panic(nLT0)
	}
	k := n
	if s == blas.Left {
		k = m
	}
	if lda < max(1, k) {
		panic(badLdA)
	}
	if ldb < max(1, n) {
		panic(badLdB)
	}
	if m == 0 || n == 0 {
		return
	}
	if len(a) < lda*(k-1)+k {
		panic(shortA)
	}
	if len(b) < ldb*(m-1)+n {
		panic(shortB)
	}
	if alpha == 0 {
		scaleRect(m, n, 0, b, ldb)
		return
	}
	if tA == blas.ConjTrans {
		tA = blas.Trans
	}
	if s == blas.Right && m <= trsmFewRows {
		gonum.Implementation{}.Dtrsm(s, ul, tA, d, m, n, alpha, a, lda, b, ldb)
		return
	}
	// The columns of B (side Left) or its rows (side Right) are independent
	// systems: cut them into slabs, one per goroutine, each solved with
	// single-goroutine GEMM updates. Too few to cut: one slab, parallel GEMMs.
	threads := nat.Threads()
	width := n
	if s == blas.Right {
		width = m
	}
	flops := float64(m) * float64(n) * float64(k)
	np := 1
	if threads > 1 && flops >= parallelMinFlops {
		np = min(threads, width/trsmMinPiece)
	}
	t := trsmCalls.get()
	*t = trsmCall{nat: nat, s: s, ul: ul, tA: tA, d: d, m: m, n: n, alpha: alpha, a: a, lda: lda, b: b, ldb: ldb}
	if np <= 1 {
		t.np, t.gemmThreads = 1, threads
		t.part(0)
	} else {
		t.np, t.gemmThreads = np, 1
		runParallel(np, t, &t.wg)
	}
	*t = trsmCall{}
	trsmCalls.put(t)
}

type trsmCall struct {
	nat         *Native
	s           blas.Side
	ul          blas.Uplo
	tA          blas.Transpose
	d           blas.Diag
	m, n        int
	alpha       float64
	a           []float64
	lda         int
	b           []float64
	ldb         int
	np          int
	gemmThreads int
	wg          sync.WaitGroup
}

var trsmCalls freeList[trsmCall]

func (t *trsmCall) part(id int) {
	m, n, b := t.m, t.n, t.b
	if t.s == blas.Left {
		lo, hi := n*id/t.np, n*(id+1)/t.np
		b, n = b[lo:], hi-lo
	} else {
		lo, hi := m*id/t.np, m*(id+1)/t.np
		b, m = b[lo*t.ldb:], hi-lo
	}
	if n == 0 || m == 0 {
		return
	}
	if t.alpha != 1 {
		scaleRect(m, n, t.alpha, b, t.ldb)
	}
	var tmp *trsmTemp
	if t.s == blas.Right {
		tmp = trsmTemps.get()
		if need := min(n, trsmBlock) * m; len(tmp.buf) < need {
			tmp.buf = hugepage.Floats(need)
		}
	}
	t.solve(m, n, t.a, b, tmp)
	if tmp != nil {
		trsmTemps.put(tmp)
	}
}

// trsmTemp is the scratch of one goroutine's Right-side diagonal solves.
type trsmTemp struct{ buf []float64 }

var trsmTemps freeList[trsmTemp]

// solve is the recursive blocked solve with alpha = 1 on the m×n block b.
func (t *trsmCall) solve(m, n int, a, b []float64, tmp *trsmTemp) {
	lda, ldb := t.lda, t.ldb
	trans := t.tA == blas.Trans
	if t.s == blas.Left {
		if m <= trsmBlock {
			trsmLeftBase((t.ul == blas.Lower) != trans, trans, t.d == blas.Unit, m, n, a, lda, b, ldb)
			return
		}
		m1 := halve(m)
		m2 := m - m1
		a11, a12, a21, a22 := a, a[m1:], a[m1*lda:], a[m1*lda+m1:]
		b1, b2 := b, b[m1*ldb:]
		if (t.ul == blas.Lower) != trans { // op(A) lower: forward
			t.solve(m1, n, a11, b1, tmp)
			if trans { // op(A)21 = A12ᵀ
				t.update(true, false, m2, n, m1, a12, lda, b1, ldb, b2, ldb)
			} else {
				t.update(false, false, m2, n, m1, a21, lda, b1, ldb, b2, ldb)
			}
			t.solve(m2, n, a22, b2, tmp)
			return
		}
		t.solve(m2, n, a22, b2, tmp)
		if trans { // op(A)12 = A21ᵀ
			t.update(true, false, m1, n, m2, a21, lda, b2, ldb, b1, ldb)
		} else {
			t.update(false, false, m1, n, m2, a12, lda, b2, ldb, b1, ldb)
		}
		t.solve(m1, n, a11, b1, tmp)
		return
	}
	if n <= trsmBlock {
		// X·op(A) = B is op(A)ᵀ·Xᵀ = Bᵀ: transpose the block into tmp
		// (rows of length m, long vector operations), solve on the left
		// with the transpose flipped, transpose back.
		bt := tmp.buf[:n*m]
		for r := 0; r < m; r++ {
			for j, v := range b[r*ldb : r*ldb+n] {
				bt[j*m+r] = v
			}
		}
		// op(A)ᵀ is lower exactly when op(A) is upper.
		trsmLeftBase((t.ul == blas.Upper) != trans, !trans, t.d == blas.Unit, n, m, a, lda, bt, m)
		for r := 0; r < m; r++ {
			row := b[r*ldb : r*ldb+n]
			for j := range row {
				row[j] = bt[j*m+r]
			}
		}
		return
	}
	n1 := halve(n)
	n2 := n - n1
	a11, a12, a21, a22 := a, a[n1:], a[n1*lda:], a[n1*lda+n1:]
	b1, b2 := b, b[n1:]
	if (t.ul == blas.Upper) != trans { // op(A) upper: X1 first
		t.solve(m, n1, a11, b1, tmp)
		if trans { // op(A)12 = A21ᵀ
			t.update(false, true, m, n2, n1, b1, ldb, a21, lda, b2, ldb)
		} else {
			t.update(false, false, m, n2, n1, b1, ldb, a12, lda, b2, ldb)
		}
		t.solve(m, n2, a22, b2, tmp)
		return
	}
	t.solve(m, n2, a22, b2, tmp)
	if trans { // op(A)21 = A12ᵀ
		t.update(false, true, m, n1, n2, b2, ldb, a12, lda, b1, ldb)
	} else {
		t.update(false, false, m, n1, n2, b2, ldb, a21, lda, b1, ldb)
	}
	t.solve(m, n1, a11, b1, tmp)
}

// update is C -= op(X)·op(Y) with the native GEMM (arguments known valid).
func (t *trsmCall) update(tx, ty bool, m, n, k int, x []float64, ldx int, y []float64, ldy int, c []float64, ldc int) {
	t.nat.gemm(gemmProblem{
		tA: tx, tB: ty, m: m, n: n, k: k, alpha: -1,
		a: x, lda: ldx, b: y, ldb: ldy, beta: 1, c: c, ldc: ldc, tri: blas.All,
	}, t.gemmThreads)
}

// trsmLeftBase solves op(A)·X = B in place for a small nb×nb triangle (nb <=
// trsmBlock) and B nb×w, by substitution along whole rows of B with the SIMD
// axpy. (Measured, 1000×1000 B, thread CPU time: working on 64- or
// 256-column chunks to stay in L1 was 25% / 10% slower than whole rows; whole
// rows beat gonum's substitution by ~8% on the left and, through the
// transposition in solve, by ~30% on the right.) lower tells whether op(A) is lower
// triangular; only that triangle of op(A) is read (and not its diagonal
// when unit). Zero entries are skipped, as reference BLAS does.
func trsmLeftBase(lower, trans, unit bool, nb, w int, a []float64, lda int, b []float64, ldb int) {
	opA := func(i, j int) float64 {
		if trans {
			return a[j*lda+i]
		}
		return a[i*lda+j]
	}
	for s := 0; s < nb; s++ {
		i := s
		if !lower {
			i = nb - 1 - s
		}
		ri := b[i*ldb : i*ldb+w]
		lo, hi := 0, i // the solved rows that feed row i
		if !lower {
			lo, hi = i+1, nb
		}
		for j := lo; j < hi; j++ {
			if v := opA(i, j); v != 0 {
				asm.AxpyUnitary(-v, b[j*ldb:j*ldb+w], ri)
			}
		}
		if !unit {
			asm.ScalUnitary(1/opA(i, i), ri)
		}
	}
}

// halve splits a dimension in two, the first part a multiple of 16 so the
// GEMM updates see whole tiles where possible.
func halve(m int) int {
	h := (m / 2) / 16 * 16
	if h == 0 {
		h = m / 2
	}
	return h
}

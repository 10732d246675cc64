package linalg

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// poisoned stands for a BLAS library whose kernels must not be trusted with
// degenerate scalars (OpenBLAS's AVX-512 DGEMM computes 0·NaN): every call
// that reaches it fails the test. The guard must answer those calls itself,
// on every machine, whatever kernel the real library would have picked.
type poisoned struct {
	t *testing.T
	blas.Float64
}

func (p poisoned) fail(name string) {
	p.t.Fatalf("%s with a degenerate scalar reached the wrapped library", name)
}

func (p poisoned) Daxpy(int, float64, []float64, int, []float64, int) { p.fail("Daxpy") }
func (p poisoned) Dscal(int, float64, []float64, int)                 { p.fail("Dscal") }
func (p poisoned) Dgemv(blas.Transpose, int, int, float64, []float64, int, []float64, int, float64, []float64, int) {
	p.fail("Dgemv")
}
func (p poisoned) Dgbmv(blas.Transpose, int, int, int, int, float64, []float64, int, []float64, int, float64, []float64,
	int) {
	p.fail("Dgbmv")
}
func (p poisoned) Dsymv(blas.Uplo, int, float64, []float64, int, []float64, int, float64, []float64, int) {
	p.fail("Dsymv")
}
func (p poisoned) Dsbmv(blas.Uplo, int, int, float64, []float64, int, []float64, int, float64, []float64, int) {
	p.fail("Dsbmv")
}
func (p poisoned) Dspmv(blas.Uplo, int, float64, []float64, []float64, int, float64, []float64, int) {
	p.fail("Dspmv")
}
func (p poisoned) Dger(int, int, float64, []float64, int, []float64, int, []float64, int) {
	p.fail("Dger")
}
func (p poisoned) Dsyr(blas.Uplo, int, float64, []float64, int, []float64, int) { p.fail("Dsyr") }
func (p poisoned) Dspr(blas.Uplo, int, float64, []float64, int, []float64)      { p.fail("Dspr") }
func (p poisoned) Dsyr2(blas.Uplo, int, float64, []float64, int, []float64, int, []float64, int) {
	p.fail("Dsyr2")
}
func (p poisoned) Dspr2(blas.Uplo, int, float64, []float64, int, []float64, int, []float64) {
	p.fail("Dspr2")
}
func (p poisoned) Dgemm(blas.Transpose, blas.Transpose, int, int, int, float64, []float64, int, []float64, int, float64,
	[]float64, int) {
	p.fail("Dgemm")
}
func (p poisoned) Dsymm(blas.Side, blas.Uplo, int, int, float64, []float64, int, []float64, int, float64, []float64,
	int) {
	p.fail("Dsymm")
}
func (p poisoned) Dsyrk(blas.Uplo, blas.Transpose, int, int, float64, []float64, int, float64, []float64, int) {
	p.fail("Dsyrk")
}
func (p poisoned) Dsyr2k(blas.Uplo, blas.Transpose, int, int, float64, []float64, int, []float64, int, float64,
	[]float64, int) {
	p.fail("Dsyr2k")
}
func (p poisoned) Dtrmm(blas.Side, blas.Uplo, blas.Transpose, blas.Diag, int, int, float64, []float64, int, []float64,
	int) {
	p.fail("Dtrmm")
}
func (p poisoned) Dtrsm(blas.Side, blas.Uplo, blas.Transpose, blas.Diag, int, int, float64, []float64, int, []float64,
	int) {
	p.fail("Dtrsm")
}

// nanMat is rows×cols with leading dimension ld, every entry NaN except the
// given finite ones; the read-only operands of a degenerate call are all NaN,
// so any read of them shows in the output.
func nanSlice(n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = math.NaN()
	}
	return s
}

// probeOutput is an output operand: finite values with a NaN at the first
// and last referenced entry (β = 0 must overwrite them).
func probeOutput(n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = 0.25 * float64(i+1)
	}
	s[0], s[n-1] = math.NaN(), math.NaN()
	return s
}

// wantScaled is reference BLAS's C ← βC on the entries in(i) (β = 0 gives
// exact zeros, NaN included); the other entries keep their value.
func checkScaled(t *testing.T, what string, got, before []float64, beta float64, in func(i int) bool) {
	t.Helper()
	for i := range got {
		want := before[i]
		if in(i) {
			if beta == 0 {
				want = 0
			} else {
				want = beta * before[i]
			}
		}
		if !(got[i] == want || math.IsNaN(got[i]) && math.IsNaN(want)) {
			t.Fatalf("%s β=%v: entry %d = %v, want %v", what, beta, i, got[i], want)
		}
	}
}

func checkUnchanged(t *testing.T, what string, got, before []float64) {
	t.Helper()
	checkScaled(t, what, got, before, 1, func(int) bool { return false })
}

// TestReferenceScalarsGuard: with α = 0 (or k = 0 in a rank-k product) no
// call reaches the wrapped library, A and B (all NaN) are not read, and the
// output follows reference BLAS (C ← βC, β = 0 → zeros, rank updates leave A
// alone). Fails on a wrapper that passes degenerate calls through.
func TestReferenceScalarsGuard(t *testing.T) {
	w := withReferenceScalars(poisoned{t: t})
	const m, n, k, ld = 3, 4, 2, 6
	for _, beta := range []float64{0, 0.5, 1} {
		// Dgemm: α = 0, and α ≠ 0 with k = 0.
		for _, c := range []struct {
			alpha float64
			k     int
		}{{0, k}, {1.5, 0}} {
			for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
				cm := probeOutput((m-1)*ld + n)
				c0 := append([]float64(nil), cm...)
				w.Dgemm(tA, blas.NoTrans, m, n, c.k, c.alpha, nanSlice(m*ld+ld), ld, nanSlice(m*ld+ld), ld, beta, cm,
					ld)
				checkScaled(t, "Dgemm", cm, c0, beta, func(i int) bool { return i%ld < n })
			}
			for _, ul := range []blas.Uplo{blas.Upper, blas.Lower} {
				tri := func(i int) bool {
					r, col := i/ld, i%ld
					return col < m && (ul == blas.Upper && col >= r || ul == blas.Lower && col <= r)
				}
				cm := probeOutput((m-1)*ld + m)
				c0 := append([]float64(nil), cm...)
				w.Dsyrk(ul, blas.NoTrans, m, c.k, c.alpha, nanSlice(m*ld), ld, beta, cm, ld)
				checkScaled(t, "Dsyrk", cm, c0, beta, tri)
				cm = append([]float64(nil), c0...)
				w.Dsyr2k(ul, blas.Trans, m, c.k, c.alpha, nanSlice(m*ld), ld, nanSlice(m*ld), ld, beta, cm, ld)
				checkScaled(t, "Dsyr2k", cm, c0, beta, tri)
			}
		}
		for _, s := range []blas.Side{blas.Left, blas.Right} {
			cm := probeOutput((m-1)*ld + n)
			c0 := append([]float64(nil), cm...)
			w.Dsymm(s, blas.Upper, m, n, 0, nanSlice(n*ld), ld, nanSlice(m*ld), ld, beta, cm, ld)
			checkScaled(t, "Dsymm", cm, c0, beta, func(i int) bool { return i%ld < n })
		}
		// Level 2 products: y ← βy over the referenced entries (stride 2).
		for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			ny := m
			if tA == blas.Trans {
				ny = n
			}
			y := probeOutput(2*(ny-1) + 1)
			y0 := append([]float64(nil), y...)
			w.Dgemv(tA, m, n, 0, nanSlice(m*ld), ld, nanSlice(2*n), 2, beta, y, 2)
			checkScaled(t, "Dgemv", y, y0, beta, func(i int) bool { return i%2 == 0 })
			y = append([]float64(nil), y0...)
			w.Dgbmv(tA, m, n, 1, 1, 0, nanSlice(m*ld), ld, nanSlice(2*n), 2, beta, y, 2)
			checkScaled(t, "Dgbmv", y, y0, beta, func(i int) bool { return i%2 == 0 })
		}
		y := probeOutput(2*(n-1) + 1)
		y0 := append([]float64(nil), y...)
		even := func(i int) bool { return i%2 == 0 }
		w.Dsymv(blas.Lower, n, 0, nanSlice(n*ld), ld, nanSlice(2*n), 2, beta, y, 2)
		checkScaled(t, "Dsymv", y, y0, beta, even)
		y = append([]float64(nil), y0...)
		w.Dsbmv(blas.Upper, n, 1, 0, nanSlice(n*ld), ld, nanSlice(2*n), 2, beta, y, 2)
		checkScaled(t, "Dsbmv", y, y0, beta, even)
		y = append([]float64(nil), y0...)
		w.Dspmv(blas.Upper, n, 0, nanSlice(n*(n+1)/2), nanSlice(2*n), 2, beta, y, 2)
		checkScaled(t, "Dspmv", y, y0, beta, even)
	}
	// Triangular products and solves with α = 0: B ← 0 without reading A or B.
	for _, s := range []blas.Side{blas.Left, blas.Right} {
		b := nanSlice((m-1)*ld + n)
		w.Dtrsm(s, blas.Lower, blas.NoTrans, blas.NonUnit, m, n, 0, nanSlice(n*ld), ld, b, ld)
		checkScaled(t, "Dtrsm", b, nanSlice(len(b)), 0, func(i int) bool { return i%ld < n })
		b = nanSlice((m-1)*ld + n)
		w.Dtrmm(s, blas.Upper, blas.Trans, blas.Unit, m, n, 0, nanSlice(n*ld), ld, b, ld)
		checkScaled(t, "Dtrmm", b, nanSlice(len(b)), 0, func(i int) bool { return i%ld < n })
	}
	// Rank updates and axpy with α = 0 leave the output alone, NaN operands unread.
	a := probeOutput((n-1)*ld + n)
	a0 := append([]float64(nil), a...)
	w.Dger(n, n, 0, nanSlice(n), 1, nanSlice(n), 1, a, ld)
	w.Dsyr(blas.Upper, n, 0, nanSlice(n), 1, a, ld)
	w.Dsyr2(blas.Lower, n, 0, nanSlice(n), 1, nanSlice(n), 1, a, ld)
	checkUnchanged(t, "Dger/Dsyr/Dsyr2", a, a0)
	ap := probeOutput(n * (n + 1) / 2)
	ap0 := append([]float64(nil), ap...)
	w.Dspr(blas.Upper, n, 0, nanSlice(n), 1, ap)
	w.Dspr2(blas.Lower, n, 0, nanSlice(n), 1, nanSlice(n), 1, ap)
	checkUnchanged(t, "Dspr/Dspr2", ap, ap0)
	y := probeOutput(n)
	y0 := append([]float64(nil), y...)
	w.Daxpy(n, 0, nanSlice(n), 1, y, 1)
	checkUnchanged(t, "Daxpy", y, y0)
	x := probeOutput(2*(n-1) + 1)
	x0 := append([]float64(nil), x...)
	w.Dscal(n, 0, x, 2)
	checkScaled(t, "Dscal", x, x0, 0, func(i int) bool { return i%2 == 0 })
}

// counting forwards to gonum and counts the calls that reached it.
type counting struct {
	gonum.Implementation
	calls int
}

func (c *counting) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int,
	beta float64, cc []float64, ldc int) {
	c.calls++
	c.Implementation.Dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, cc, ldc)
}

func (c *counting) Dscal(n int, alpha float64, x []float64, incX int) {
	c.calls++
	c.Implementation.Dscal(n, alpha, x, incX)
}

// TestReferenceScalarsPassThrough: ordinary calls reach the library.
func TestReferenceScalarsPassThrough(t *testing.T) {
	inner := &counting{}
	w := withReferenceScalars(inner)
	a, b, c := []float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}, make([]float64, 4)
	w.Dgemm(blas.NoTrans, blas.NoTrans, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2)
	w.Dscal(4, 2, c, 1)
	if inner.calls != 2 {
		t.Fatalf("%d of 2 ordinary calls reached the library", inner.calls)
	}
	want := []float64{2 * 19, 2 * 22, 2 * 43, 2 * 50}
	for i := range c {
		if c[i] != want[i] {
			t.Fatalf("C = %v, want %v", c, want)
		}
	}
}

// TestReferenceScalarsArgumentChecks: the degenerate path still checks its
// arguments and panics with gonum's messages, like every backend.
func TestReferenceScalarsArgumentChecks(t *testing.T) {
	w := withReferenceScalars(poisoned{t: t})
	defer func() {
		if r := recover(); r == nil || r != "blas: insufficient length of c" {
			t.Fatalf("short C with α = 0: panic %v, want gonum's short-C message", r)
		}
	}()
	w.Dgemm(blas.NoTrans, blas.NoTrans, 3, 3, 3, 0, make([]float64, 9), 3, make([]float64, 9), 3, 0, make([]float64, 5),
		3)
}

package cholesky

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/blas"

	"github.com/pacpfl/pacpfl/asm"
	"github.com/pacpfl/pacpfl/internal/hugepage"
	"github.com/pacpfl/pacpfl/linalg"
)

// defaultLadder is the jitter ladder of FactorizeWithJitter: each ε is
// multiplied by the mean of the diagonal of A.
var defaultLadder = []float64{1e-10, 1e-9, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4}

// Factor is the Cholesky factorization A (+ jitter·I) = L·Lᵀ of a symmetric
// positive-definite matrix, with the solves, log-determinant and inverse that
// use it. The zero value is ready to use; a Factor reused for matrices of the
// same size allocates nothing after the first factorization. A Factor is not
// safe for concurrent use.
type Factor struct {
	bl        blas.Float64
	ladder    []float64
	ladderSet bool

	n      int
	l      []float64 // L in the lower triangle of l, row stride ldl
	ldl    int
	own    []float64 // Factorize's copy (n×n, stride n; zeros above the diagonal)
	diag   []float64 // FactorizeInPlace: A's diagonal, to restore A for a retry
	ok     bool      // l holds a successful factorization
	jitter float64
	logdet float64
	ws     workspace
	p      params // zero: currentParams (tests set small blocks)
}

func (f *Factor) engine() engine {
	p := f.p
	if p.potrf == 0 {
		p = currentParams()
	}
	return engine{b: f.bl, p: p, ws: &f.ws}
}

// SetBLAS sets the BLAS the factorization runs on; nil selects the default
// (linalg's native BLAS). Pass linalg.NewNative(1) to keep a Factor on one
// thread, e.g. when many Factors work concurrently.
func (f *Factor) SetBLAS(b blas.Float64) { f.bl = b }

// SetJitterLadder sets the multiples of mean(diag(A)) that FactorizeWithJitter
// tries; nil restores the default 1e-10, 1e-9, …, 1e-4. The ladder is copied,
// entries that are not finite and positive are dropped, and it is climbed in
// increasing order, so the last jitter tried is the largest.
func (f *Factor) SetJitterLadder(eps []float64) {
	f.ladder = f.ladder[:0]
	for _, e := range eps {
		if e > 0 && !math.IsInf(e, 1) {
			f.ladder = append(f.ladder, e)
		}
	}
	slices.Sort(f.ladder)
	f.ladderSet = eps != nil
}

func (f *Factor) blasImpl() (blas.Float64, error) {
	if f.bl != nil {
		return f.bl, nil
	}
	b, err := defaultBLAS()
	if err != nil {
		return nil, err
	}
	f.bl = b
	return b, nil
}

// defaultBLAS is linalg's default backend (native).
func defaultBLAS() (blas.Float64, error) {
	return linalg.Backend(linalg.DefaultBackend)
}

// Factorize computes A = L·Lᵀ from the lower triangle of the n×n row-major
// matrix a with stride lda (the strict upper triangle is not read). It
// returns an error wrapping ErrNonFinite if that triangle holds a NaN or an
// infinity, and a *NotPDError if A is not numerically positive definite.
func (f *Factor) Factorize(a []float64, n, lda int) error {
	f.ok = false
	if err := checkInput(a, n, lda); err != nil {
		return err
	}
	if err := f.prepare(n); err != nil {
		return err
	}
	col, piv, err := f.attempt(a, lda, 0)
	if err != nil {
		return err
	}
	if col >= 0 {
		return &NotPDError{Column: col, Pivot: piv}
	}
	return nil
}

// FactorizeWithJitter is Factorize, except that when A is not positive
// definite it retries with jitter = ε·mean(diag(A)) added to the diagonal for
// each ε of the jitter ladder in turn, and keeps the first that succeeds
// (Jitter reports it). If all fail it returns a *NotPDError from the largest
// jitter. A non-positive mean diagonal cannot be helped by jitter; the error
// of the plain attempt is returned. Success allocates nothing.
func (f *Factor) FactorizeWithJitter(a []float64, n, lda int) error {
	f.ok = false
	if err := checkInput(a, n, lda); err != nil {
		return err
	}
	if err := f.prepare(n); err != nil {
		return err
	}
	col, piv, err := f.attempt(a, lda, 0)
	if err != nil || col < 0 {
		return err
	}
	mean := 0.0
	for i := 0; i < n; i++ {
		mean += a[i*lda+i]
	}
	mean /= float64(n)
	jitter := 0.0
	if mean > 0 {
		ladder := defaultLadder
		if f.ladderSet {
			ladder = f.ladder
		}
		for _, eps := range ladder {
			jitter = eps * mean
			if col, piv, err = f.attempt(a, lda, jitter); err != nil || col < 0 {
				return err
			}
		}
	}
	return &NotPDError{Column: col, Pivot: piv, Jitter: jitter}
}

// checkInput validates the shape of a and that its lower triangle is finite.
func checkInput(a []float64, n, lda int) error {
	switch {
	case n < 0:
		return fmt.Errorf("cholesky: negative order n=%d", n)
	case n == 0:
		return nil
	case lda < n:
		return fmt.Errorf("cholesky: stride lda=%d < n=%d", lda, n)
	case len(a) < (n-1)*lda+n:
		return fmt.Errorf("cholesky: len(a)=%d too short for a %d×%d matrix with stride %d (need %d)",
			len(a), n, n, lda, (n-1)*lda+n)
	}
	for i := 0; i < n; i++ {
		row := a[i*lda : i*lda+i+1]
		if asm.AllFinite(row) {
			continue
		}
		for j, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: A[%d][%d] = %v", ErrNonFinite, i, j, v)
			}
		}
	}
	return nil
}

func (f *Factor) prepare(n int) error {
	if _, err := f.blasImpl(); err != nil {
		return err
	}
	if cap(f.own) < n*n {
		f.own = hugepage.Floats(n * n)
	}
	f.l, f.ldl, f.n = f.own[:n*n], n, n
	return nil
}

// attempt copies the lower triangle of a plus jitter on the diagonal into
// f.l, zeroes the upper triangle and factors it. It returns col = −1 on
// success, else the failing column and its pivot; err reports an overflow.
func (f *Factor) attempt(a []float64, lda int, jitter float64) (col int, pivot float64, err error) {
	n := f.n
	l := f.l
	for i := 0; i < n; i++ {
		row := l[i*n : i*n+n]
		copy(row[:i+1], a[i*lda:i*lda+i+1])
		row[i] += jitter
		clear(row[i+1:])
	}
	return f.run(jitter)
}

// run factors the lower triangle of f.l in place and, on success, records
// jitter and the log-determinant; results as attempt.
func (f *Factor) run(jitter float64) (col int, pivot float64, err error) {
	n, l, ldl := f.n, f.l, f.ldl
	e := f.engine()
	if col, piv := e.potrf(n, l, ldl); col >= 0 {
		if math.IsNaN(piv) || math.IsInf(piv, 0) {
			// The input was finite, so the factorization overflowed: no
			// jitter can help, and the matrix need not be indefinite.
			return col, piv, fmt.Errorf("%w: the factorization overflowed at column %d (pivot %v); rescale the matrix",
				ErrNonFinite, col, piv)
		}
		return col, piv, nil
	}
	// potrf checked every pivot, so the diagonal is finite and positive;
	// this guards against a BLAS that produced a NaN elsewhere anyway.
	ld := 0.0
	for j := 0; j < n; j++ {
		d := l[j*ldl+j]
		if !(d > 0) || math.IsInf(d, 0) {
			return j, d, fmt.Errorf("%w: the factor has L[%d][%d] = %v (overflow)", ErrNonFinite, j, j, d)
		}
		ld += math.Log(d)
	}
	f.jitter = jitter
	f.logdet = 2 * ld
	f.ok = true
	return -1, 0, nil
}

// N returns the order of the last successfully factorized matrix (0 before).
func (f *Factor) N() int {
	if !f.ok {
		return 0
	}
	return f.n
}

// L returns the factor: the lower triangle of the n×n row-major l with the
// given stride holds L. After Factorize l is owned by f, its strict upper
// triangle is zero, and the next factorization overwrites it; after
// FactorizeInPlace l is the caller's matrix, whose strict upper triangle
// still holds A's. Before a successful factorization l is nil.
func (f *Factor) L() (l []float64, stride int) {
	if !f.ok {
		return nil, 0
	}
	return f.l[:f.span()], f.ldl
}

// span is the length of the n×n matrix with stride ldl.
func (f *Factor) span() int {
	if f.n == 0 {
		return 0
	}
	return (f.n-1)*f.ldl + f.n
}

// Jitter returns what was added to the diagonal of A (0 if nothing).
func (f *Factor) Jitter() float64 {
	if !f.ok {
		return 0
	}
	return f.jitter
}

// LogDet returns ln det(A + jitter·I) = 2·Σ ln L_jj, or NaN before a
// successful factorization.
func (f *Factor) LogDet() float64 {
	if !f.ok {
		return math.NaN()
	}
	return f.logdet
}

func (f *Factor) checkVecs(dst, b []float64) error {
	if !f.ok {
		return errNotFactorized
	}
	if len(b) != f.n || len(dst) != f.n {
		return fmt.Errorf("cholesky: vector lengths dst=%d, b=%d, want n=%d", len(dst), len(b), f.n)
	}
	return nil
}

// SolveVec sets dst = (A + jitter·I)⁻¹·b. dst may be b.
func (f *Factor) SolveVec(dst, b []float64) error {
	if err := f.checkVecs(dst, b); err != nil {
		return err
	}
	if f.n == 0 {
		return nil
	}
	copy(dst, b)
	trsvLN(f.n, f.l, f.ldl, dst)
	trsvLT(f.n, f.l, f.ldl, dst)
	return nil
}

// SolveLower sets dst = L⁻¹·b. dst may be b.
func (f *Factor) SolveLower(dst, b []float64) error {
	if err := f.checkVecs(dst, b); err != nil {
		return err
	}
	if f.n == 0 {
		return nil
	}
	copy(dst, b)
	trsvLN(f.n, f.l, f.ldl, dst)
	return nil
}

// SolveUpper sets dst = L⁻ᵀ·b. dst may be b.
func (f *Factor) SolveUpper(dst, b []float64) error {
	if err := f.checkVecs(dst, b); err != nil {
		return err
	}
	if f.n == 0 {
		return nil
	}
	copy(dst, b)
	trsvLT(f.n, f.l, f.ldl, dst)
	return nil
}

// Solve sets the n×nrhs row-major matrix dst (stride ldd) to
// (A + jitter·I)⁻¹·B for the n×nrhs matrix b with stride ldb. dst may be b
// when ldd == ldb.
func (f *Factor) Solve(dst []float64, ldd int, b []float64, ldb, nrhs int) error {
	if !f.ok {
		return errNotFactorized
	}
	n := f.n
	if err := checkMat("b", b, n, nrhs, ldb); err != nil {
		return err
	}
	if err := checkMat("dst", dst, n, nrhs, ldd); err != nil {
		return err
	}
	if n == 0 || nrhs == 0 {
		return nil
	}
	if ldd != ldb || &dst[0] != &b[0] {
		for i := 0; i < n; i++ {
			copy(dst[i*ldd:i*ldd+nrhs], b[i*ldb:i*ldb+nrhs])
		}
	}
	l, ldl := f.L()
	f.bl.Dtrsm(blas.Left, blas.Lower, blas.NoTrans, blas.NonUnit, n, nrhs, 1, l, ldl, dst, ldd)
	f.bl.Dtrsm(blas.Left, blas.Lower, blas.Trans, blas.NonUnit, n, nrhs, 1, l, ldl, dst, ldd)
	return nil
}

// checkMat validates an r×c row-major matrix with stride ld.
func checkMat(name string, m []float64, r, c, ld int) error {
	switch {
	case r < 0 || c < 0:
		return fmt.Errorf("cholesky: %s: negative shape %d×%d", name, r, c)
	case ld < max(1, c):
		return fmt.Errorf("cholesky: %s: stride %d < max(1, %d columns)", name, ld, c)
	case r > 0 && c > 0 && len(m) < (r-1)*ld+c:
		return fmt.Errorf("cholesky: %s: len %d too short for %d×%d with stride %d (need %d)",
			name, len(m), r, c, ld, (r-1)*ld+c)
	}
	return nil
}

// Inverse writes (A + jitter·I)⁻¹, both triangles, into the n×n row-major
// matrix dst with stride ldd. dst must not overlap the slice returned by L.
// InverseInPlace needs no second matrix.
func (f *Factor) Inverse(dst []float64, ldd int) error {
	if !f.ok {
		return errNotFactorized
	}
	n := f.n
	if err := checkMat("dst", dst, n, n, ldd); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	for i := 0; i < n; i++ {
		copy(dst[i*ldd:i*ldd+i+1], f.l[i*f.ldl:i*f.ldl+i+1])
	}
	e := f.engine()
	e.potri(n, dst, ldd)
	mirrorLower(n, dst, ldd)
	return nil
}

// mirrorLower copies the strict lower triangle of the n×n matrix a onto its
// upper triangle, in tiles so both the rows read and the columns written stay
// in cache.
func mirrorLower(n int, a []float64, lda int) {
	const tile = 32
	for ib := 0; ib < n; ib += tile {
		ie := min(ib+tile, n)
		for jb := 0; jb <= ib; jb += tile {
			je := min(jb+tile, n)
			for i := ib; i < ie; i++ {
				for j := jb; j < min(je, i); j++ {
					a[j*lda+i] = a[i*lda+j]
				}
			}
		}
	}
}

package cholesky

import (
	"fmt"
	"strings"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack/gonum"

	"github.com/pacpfl/pacpfl/asm"
	"github.com/pacpfl/pacpfl/internal/hugepage"
)

// Lapack is the Cholesky part of gonum's lapack.Float64, with exactly its
// semantics: row-major storage, either triangle, panics on bad arguments
// (with gonum's messages) and ok = false for a matrix that is not positive
// definite (Dpotrf) or singular (Dpotri, Dtrtri).
type Lapack interface {
	Dpotrf(ul blas.Uplo, n int, a []float64, lda int) (ok bool)
	Dpotrs(ul blas.Uplo, n, nrhs int, a []float64, lda int, b []float64, ldb int)
	Dpotri(ul blas.Uplo, n int, a []float64, lda int) (ok bool)
	Dtrtri(uplo blas.Uplo, diag blas.Diag, n int, a []float64, lda int) (ok bool)
}

// knownBackends lists every LAPACK backend, compiled in or not.
var knownBackends = []string{"native", "gonum", "openblas"}

// lapackRegistry holds the backends compiled into this binary besides native.
var lapackRegistry = map[string]func() Lapack{
	"gonum": func() Lapack { return gonum.Implementation{} },
}

// lapackNotCompiled explains how to get a known backend this build lacks.
var lapackNotCompiled = map[string]string{}

// Backend returns the Cholesky LAPACK routines with the given name: "native"
// (pacpfl's, the default, also for ""), "gonum" (gonum's pure-Go LAPACK) or
// "openblas" (the system LAPACKE/OpenBLAS, only with -tags netlib).
func Backend(name string) (Lapack, error) {
	if err := asm.ConfigError(); err != nil {
		return nil, err
	}
	if name == "" || name == "native" {
		b, err := defaultBLAS()
		if err != nil {
			return nil, err
		}
		return NewNative(b), nil
	}
	if f, ok := lapackRegistry[name]; ok {
		return f(), nil
	}
	if why, ok := lapackNotCompiled[name]; ok {
		return nil, fmt.Errorf("cholesky: LAPACK backend %q is not compiled into this binary: %s", name, why)
	}
	return nil, fmt.Errorf("cholesky: unknown LAPACK backend %q (valid: %s)", name, strings.Join(knownBackends, ", "))
}

// Native is pacpfl's Lapack: the recursive algorithms of recursive.go on top
// of a BLAS. The lower triangle is worked in place; the upper one (whose
// row-major storage is the column-major lower triangle) is transposed into a
// pooled workspace, worked as lower and transposed back, which costs O(n²)
// against the O(n³) of the factorization.
type Native struct {
	b blas.Float64
	p params // zero: currentParams (tests set small blocks)
}

// NewNative returns the native Lapack on top of the BLAS b.
func NewNative(b blas.Float64) *Native {
	return &Native{b: b}
}

// wsPool recycles leaf-kernel workspaces between calls.
var wsPool = sync.Pool{New: func() any { return new(workspace) }}

// engine returns an engine with a pooled workspace; release it with done.
func (impl *Native) engine() engine {
	p := impl.p
	if p.potrf == 0 {
		p = currentParams()
	}
	return engine{b: impl.b, p: p, ws: wsPool.Get().(*workspace)}
}

func (e engine) done() { wsPool.Put(e.ws) }

// gonum's panic messages, which Native reproduces.
const (
	badDiag = "lapack: bad Diag"
	badUplo = "lapack: bad Uplo"
	nLT0    = "lapack: n < 0"
	nrhsLT0 = "lapack: nrhs < 0"
	shortA  = "lapack: insufficient length of a"
	shortB  = "lapack: insufficient length of b"
	badLdA  = "lapack: bad leading dimension of A"
	badLdB  = "lapack: bad leading dimension of B"
)

// checkSquare panics like gonum on a bad uplo, n, lda or len(a), and reports
// whether there is work to do (n > 0).
func checkSquare(ul blas.Uplo, n int, a []float64, lda int) bool {
	switch {
	case ul != blas.Upper && ul != blas.Lower:
		panic(badUplo)
	case n < 0:
		panic(nLT0)
	case lda < max(1, n):
		panic(badLdA)
	}
	if n == 0 {
		return false
	}
	if len(a) < (n-1)*lda+n {
		panic(shortA)
	}
	return true
}

// Dpotrf computes the Cholesky factorization of the symmetric positive
// definite matrix in the ul triangle of a: A = Uᵀ·U (Upper) or A = L·Lᵀ
// (Lower), stored in place. It returns false if A is not positive definite.
func (impl *Native) Dpotrf(ul blas.Uplo, n int, a []float64, lda int) (ok bool) {
	if !checkSquare(ul, n, a, lda) {
		return true
	}
	e := impl.engine()
	defer e.done()
	if ul == blas.Lower {
		col, _ := e.potrf(n, a, lda)
		return col < 0
	}
	w := getWork(n)
	defer putWork(w)
	transposeUpperToLower(n, a, lda, *w, n)
	col, _ := e.potrf(n, *w, n)
	transposeLowerToUpper(n, *w, n, a, lda)
	return col < 0
}

// Dpotrs solves A·X = B for the n×nrhs matrix B (overwritten by X), given
// the factorization of A by Dpotrf.
func (impl *Native) Dpotrs(ul blas.Uplo, n, nrhs int, a []float64, lda int, b []float64, ldb int) {
	if !checkPotrs(ul, n, nrhs, a, lda, b, ldb) {
		return
	}
	bl := impl.b
	if ul == blas.Upper {
		bl.Dtrsm(blas.Left, blas.Upper, blas.Trans, blas.NonUnit, n, nrhs, 1, a, lda, b, ldb)
		bl.Dtrsm(blas.Left, blas.Upper, blas.NoTrans, blas.NonUnit, n, nrhs, 1, a, lda, b, ldb)
		return
	}
	bl.Dtrsm(blas.Left, blas.Lower, blas.NoTrans, blas.NonUnit, n, nrhs, 1, a, lda, b, ldb)
	bl.Dtrsm(blas.Left, blas.Lower, blas.Trans, blas.NonUnit, n, nrhs, 1, a, lda, b, ldb)
}

// Dpotri overwrites the Cholesky factor in the ul triangle of a with the same
// triangle of A⁻¹. It returns false (leaving a unchanged) if the factor is
// singular.
func (impl *Native) Dpotri(ul blas.Uplo, n int, a []float64, lda int) (ok bool) {
	if !checkSquare(ul, n, a, lda) {
		return true
	}
	if !nonzeroDiag(n, a, lda) {
		return false
	}
	e := impl.engine()
	defer e.done()
	if ul == blas.Lower {
		e.potri(n, a, lda)
		return true
	}
	w := getWork(n)
	defer putWork(w)
	transposeUpperToLower(n, a, lda, *w, n)
	e.potri(n, *w, n)
	transposeLowerToUpper(n, *w, n, a, lda)
	return true
}

// Dtrtri inverts the triangular matrix in the uplo triangle of a in place. It
// returns false (leaving a unchanged) if a non-unit diagonal holds a zero.
func (impl *Native) Dtrtri(uplo blas.Uplo, diag blas.Diag, n int, a []float64, lda int) (ok bool) {
	switch {
	case uplo != blas.Upper && uplo != blas.Lower:
		panic(badUplo)
	case diag != blas.NonUnit && diag != blas.Unit:
		panic(badDiag)
	}
	if !checkSquare(uplo, n, a, lda) {
		return true
	}
	if diag == blas.NonUnit && !nonzeroDiag(n, a, lda) {
		return false
	}
	e := impl.engine()
	defer e.done()
	if uplo == blas.Lower {
		e.trtri(diag, n, a, lda)
		return true
	}
	// inv(U) = inv(Uᵀ)ᵀ and Uᵀ is lower.
	w := getWork(n)
	defer putWork(w)
	transposeUpperToLower(n, a, lda, *w, n)
	e.trtri(diag, n, *w, n)
	transposeLowerToUpper(n, *w, n, a, lda)
	return true
}

func nonzeroDiag(n int, a []float64, lda int) bool {
	for i := 0; i < n; i++ {
		if a[i*lda+i] == 0 {
			return false
		}
	}
	return true
}

// workPool recycles the n×n workspaces of the upper-triangle paths.
var workPool sync.Pool

func getWork(n int) *[]float64 {
	if p, ok := workPool.Get().(*[]float64); ok && cap(*p) >= n*n {
		*p = (*p)[:n*n]
		return p
	}
	w := hugepage.Floats(n * n)
	return &w
}

func putWork(p *[]float64) { workPool.Put(p) }

const transposeTile = 32

// transposeUpperToLower sets dst[i][j] = src[j][i] for j ≤ i, in tiles.
func transposeUpperToLower(n int, src []float64, lds int, dst []float64, ldd int) {
	for ib := 0; ib < n; ib += transposeTile {
		ie := min(ib+transposeTile, n)
		for jb := 0; jb <= ib; jb += transposeTile {
			je := min(jb+transposeTile, n)
			for i := ib; i < ie; i++ {
				for j := jb; j < min(je, i+1); j++ {
					dst[i*ldd+j] = src[j*lds+i]
				}
			}
		}
	}
}

// transposeLowerToUpper sets dst[j][i] = src[i][j] for j ≤ i, in tiles.
func transposeLowerToUpper(n int, src []float64, lds int, dst []float64, ldd int) {
	for ib := 0; ib < n; ib += transposeTile {
		ie := min(ib+transposeTile, n)
		for jb := 0; jb <= ib; jb += transposeTile {
			je := min(jb+transposeTile, n)
			for i := ib; i < ie; i++ {
				for j := jb; j < min(je, i+1); j++ {
					dst[j*ldd+i] = src[i*lds+j]
				}
			}
		}
	}
}

// KnownBackends returns the names of every LAPACK backend, compiled in or not.
func KnownBackends() []string { return append([]string(nil), knownBackends...) }

// Backends returns the names of the LAPACK backends compiled into this binary.
func Backends() []string {
	out := []string{"native"}
	for _, n := range knownBackends[1:] {
		if _, ok := lapackRegistry[n]; ok {
			out = append(out, n)
		}
	}
	return out
}

// checkPotrs panics, with gonum's messages and in gonum's order, on bad
// Dpotrs arguments, and reports whether there is any work to do.
func checkPotrs(ul blas.Uplo, n, nrhs int, a []float64, lda int, b []float64, ldb int) bool {
	switch {
	case ul != blas.Upper && ul != blas.Lower:
		panic(badUplo)
	case n < 0:
		panic(nLT0)
	case nrhs < 0:
		panic(nrhsLT0)
	case lda < max(1, n):
		panic(badLdA)
	case ldb < max(1, nrhs):
		panic(badLdB)
	}
	if n == 0 || nrhs == 0 {
		return false
	}
	switch {
	case len(a) < (n-1)*lda+n:
		panic(shortA)
	case len(b) < (n-1)*ldb+nrhs:
		panic(shortB)
	}
	return true
}

package linalg

import "gonum.org/v1/gonum/blas"

// referenceScalars wraps a BLAS library whose kernels do not all honour the
// reference BLAS's rules for degenerate scalars, so that every backend means
// the same thing whatever kernel the library picks at run time.
//
// Reference BLAS never reads A or B when α = 0 (nor when k = 0 in a rank-k
// product): C ← β·C, and β = 0 writes exact zeros, so a NaN in A, B or C
// cannot reach the result. OpenBLAS 0.3.21 breaks this on AVX-512 machines:
// its Cooperlake small-matrix DGEMM computes 0·A·B, and a NaN in A turns into
// a NaN in C (the Haswell kernels of the same library give 0). Which kernel
// runs is decided inside the library from the CPU, so the rule is enforced
// here, in Go, before the library is called: the degenerate calls go to the
// native implementation, whose handling of them the shared suite checks
// (argument checks and panics are gonum's there too). Every other call goes
// to the library unchanged.
//
// Dscal with α = 0 writes zeros (NaN included), as gonum and the native
// backend do; OpenBLAS releases disagree with each other on it.
type referenceScalars struct {
	blas.Float64
	ref *Native // single-threaded: the degenerate paths are O(output)
}

func withReferenceScalars(impl blas.Float64) blas.Float64 {
	return referenceScalars{Float64: impl, ref: NewNative(1)}
}

// Level 1.

func (r referenceScalars) Daxpy(n int, alpha float64, x []float64, incX int, y []float64, incY int) {
	if alpha == 0 {
		r.ref.Daxpy(n, alpha, x, incX, y, incY)
		return
	}
	r.Float64.Daxpy(n, alpha, x, incX, y, incY)
}

func (r referenceScalars) Dscal(n int, alpha float64, x []float64, incX int) {
	if alpha == 0 {
		r.ref.Dscal(n, alpha, x, incX)
		return
	}
	r.Float64.Dscal(n, alpha, x, incX)
}

// Level 2.

func (r referenceScalars) Dgemv(tA blas.Transpose, m, n int, alpha float64, a []float64, lda int, x []float64, incX int,
	beta float64, y []float64, incY int) {
	if alpha == 0 {
		r.ref.Dgemv(tA, m, n, alpha, a, lda, x, incX, beta, y, incY)
		return
	}
	r.Float64.Dgemv(tA, m, n, alpha, a, lda, x, incX, beta, y, incY)
}

func (r referenceScalars) Dgbmv(tA blas.Transpose, m, n, kL, kU int, alpha float64, a []float64, lda int, x []float64,
	incX int, beta float64, y []float64, incY int) {
	if alpha == 0 {
		r.ref.Dgbmv(tA, m, n, kL, kU, alpha, a, lda, x, incX, beta, y, incY)
		return
	}
	r.Float64.Dgbmv(tA, m, n, kL, kU, alpha, a, lda, x, incX, beta, y, incY)
}

func (r referenceScalars) Dsymv(ul blas.Uplo, n int, alpha float64, a []float64, lda int, x []float64, incX int,
	beta float64, y []float64, incY int) {
	if alpha == 0 {
		r.ref.Dsymv(ul, n, alpha, a, lda, x, incX, beta, y, incY)
		return
	}
	r.Float64.Dsymv(ul, n, alpha, a, lda, x, incX, beta, y, incY)
}

func (r referenceScalars) Dsbmv(ul blas.Uplo, n, k int, alpha float64, a []float64, lda int, x []float64, incX int,
	beta float64, y []float64, incY int) {
	if alpha == 0 {
		r.ref.Dsbmv(ul, n, k, alpha, a, lda, x, incX, beta, y, incY)
		return
	}
	r.Float64.Dsbmv(ul, n, k, alpha, a, lda, x, incX, beta, y, incY)
}

func (r referenceScalars) Dspmv(ul blas.Uplo, n int, alpha float64, ap []float64, x []float64, incX int, beta float64,
	y []float64, incY int) {
	if alpha == 0 {
		r.ref.Dspmv(ul, n, alpha, ap, x, incX, beta, y, incY)
		return
	}
	r.Float64.Dspmv(ul, n, alpha, ap, x, incX, beta, y, incY)
}

func (r referenceScalars) Dger(m, n int, alpha float64, x []float64, incX int, y []float64, incY int, a []float64,
	lda int) {
	if alpha == 0 {
		r.ref.Dger(m, n, alpha, x, incX, y, incY, a, lda)
		return
	}
	r.Float64.Dger(m, n, alpha, x, incX, y, incY, a, lda)
}

func (r referenceScalars) Dsyr(ul blas.Uplo, n int, alpha float64, x []float64, incX int, a []float64, lda int) {
	if alpha == 0 {
		r.ref.Dsyr(ul, n, alpha, x, incX, a, lda)
		return
	}
	r.Float64.Dsyr(ul, n, alpha, x, incX, a, lda)
}

func (r referenceScalars) Dspr(ul blas.Uplo, n int, alpha float64, x []float64, incX int, ap []float64) {
	if alpha == 0 {
		r.ref.Dspr(ul, n, alpha, x, incX, ap)
		return
	}
	r.Float64.Dspr(ul, n, alpha, x, incX, ap)
}

func (r referenceScalars) Dsyr2(ul blas.Uplo, n int, alpha float64, x []float64, incX int, y []float64, incY int,
	a []float64, lda int) {
	if alpha == 0 {
		r.ref.Dsyr2(ul, n, alpha, x, incX, y, incY, a, lda)
		return
	}
	r.Float64.Dsyr2(ul, n, alpha, x, incX, y, incY, a, lda)
}

func (r referenceScalars) Dspr2(ul blas.Uplo, n int, alpha float64, x []float64, incX int, y []float64, incY int,
	ap []float64) {
	if alpha == 0 {
		r.ref.Dspr2(ul, n, alpha, x, incX, y, incY, ap)
		return
	}
	r.Float64.Dspr2(ul, n, alpha, x, incX, y, incY, ap)
}

// Level 3.

func (r referenceScalars) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64,
	ldb int, beta float64, c []float64, ldc int) {
	if alpha == 0 || k == 0 {
		r.ref.Dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	r.Float64.Dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func (r referenceScalars) Dsymm(s blas.Side, ul blas.Uplo, m, n int, alpha float64, a []float64, lda int, b []float64,
	ldb int, beta float64, c []float64, ldc int) {
	if alpha == 0 {
		r.ref.Dsymm(s, ul, m, n, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	r.Float64.Dsymm(s, ul, m, n, alpha, a, lda, b, ldb, beta, c, ldc)
}

func (r referenceScalars) Dsyrk(ul blas.Uplo, t blas.Transpose, n, k int, alpha float64, a []float64, lda int,
	beta float64, c []float64, ldc int) {
	if alpha == 0 || k == 0 {
		r.ref.Dsyrk(ul, t, n, k, alpha, a, lda, beta, c, ldc)
		return
	}
	r.Float64.Dsyrk(ul, t, n, k, alpha, a, lda, beta, c, ldc)
}

func (r referenceScalars) Dsyr2k(ul blas.Uplo, t blas.Transpose, n, k int, alpha float64, a []float64, lda int,
	b []float64, ldb int, beta float64, c []float64, ldc int) {
	if alpha == 0 || k == 0 {
		r.ref.Dsyr2k(ul, t, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	r.Float64.Dsyr2k(ul, t, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func (r referenceScalars) Dtrmm(s blas.Side, ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float64,
	a []float64, lda int, b []float64, ldb int) {
	if alpha == 0 {
		r.ref.Dtrmm(s, ul, tA, d, m, n, alpha, a, lda, b, ldb)
		return
	}
	r.Float64.Dtrmm(s, ul, tA, d, m, n, alpha, a, lda, b, ldb)
}

func (r referenceScalars) Dtrsm(s blas.Side, ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float64,
	a []float64, lda int, b []float64, ldb int) {
	if alpha == 0 {
		r.ref.Dtrsm(s, ul, tA, d, m, n, alpha, a, lda, b, ldb)
		return
	}
	r.Float64.Dtrsm(s, ul, tA, d, m, n, alpha, a, lda, b, ldb)
}

package linalg

import "gonum.org/v1/gonum/blas"

// Dsyrk computes the triangle ul of C = alpha * A * Aᵀ + beta * C (tA ==
// NoTrans, A n×k) or C = alpha * Aᵀ * A + beta * C (A k×n). It is the GEMM
// with B = op(A)ᵀ whose tiles outside the triangle are skipped and whose
// diagonal tiles are merged element by element.
func (nat *Native) Dsyrk(ul blas.Uplo, tA blas.Transpose, n, k int, alpha float64, a []float64, lda int, beta float64,
	c []float64, ldc int) {
	if ul != blas.Lower && ul != blas.Upper {
		panic(badUplo)
	}
	if tA != blas.Trans && tA != blas.NoTrans && tA != blas.ConjTrans {
		panic(badTranspose)
	}
	if n < 0 {
		panic(nLT0)
	}
	if k < 0 {
		panic(kLT0)
	}
	row, col := k, n
	if tA == blas.NoTrans {
		row, col = n, k
	}
	if lda < max(1, col) {
		panic(badLdA)
	}
	if ldc < max(1, n) {
		panic(badLdC)
	}
	if n == 0 {
		return
	}
	if len(a) < lda*(row-1)+col {
		panic(shortA)
	}
	if len(c) < ldc*(n-1)+n {
		panic(shortC)
	}
	if alpha == 0 || k == 0 {
		scaleTriangle(ul, n, beta, c, ldc)
		return
	}
	trans := tA != blas.NoTrans
	nat.gemm(gemmProblem{
		tA: trans, tB: !trans, m: n, n: n, k: k, alpha: alpha,
		a: a, lda: lda, b: a, ldb: lda, beta: beta, c: c, ldc: ldc, tri: ul,
	}, nat.Threads())
}

// scaleTriangle sets the triangle ul of C to beta*C (beta == 0 overwrites).
func scaleTriangle(ul blas.Uplo, n int, beta float64, c []float64, ldc int) {
	if beta == 1 {
		return
	}
	for i := 0; i < n; i++ {
		var row []float64
		if ul == blas.Upper {
			row = c[i*ldc+i : i*ldc+n]
		} else {
			row = c[i*ldc : i*ldc+i+1]
		}
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

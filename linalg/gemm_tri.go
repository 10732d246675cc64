package linalg

import "gonum.org/v1/gonum/blas"

// triOperand names the operand of a GEMM that is triangular with explicit
// zeros (GemmTriangular), so that each micro-tile runs only over the part of
// the inner dimension where that operand is not zero.
type triOperand uint8

const (
	triNone   triOperand = iota
	triLowerA            // op(A) lower (m == k): row i is zero from column i+1 on
	triUpperA            // op(A) upper: row i is zero before column i
	triLowerB            // op(B) lower (k == n): column j is zero above row j
)

// kRange returns the part [lo, hi) of the packed block of inner indices
// pc…pc+kb−1 that the micro-tile at rows i…i+mr−1, columns j… of C needs:
// outside it the triangular operand is zero in every row (column) of the
// tile. Inside it the zeros next to the diagonal are multiplied as stored.
// The range may be empty (hi ≤ lo); lo never exceeds kb.
func (t triOperand) kRange(i, mr, j, pc, kb int) (lo, hi int) {
	lo, hi = 0, kb
	switch t {
	case triLowerA:
		hi = min(kb, i+mr-pc)
	case triUpperA:
		lo = min(kb, max(0, i-pc))
	case triLowerB:
		lo = min(kb, max(0, j-pc))
	}
	return lo, hi
}

// GemmTriangular computes C = alpha·op(T)·B + beta·C (side Left, T m×m, B
// and C m×n) or C = alpha·B·op(T) + beta·C (side Right, T n×n, B and C
// m×n), where T is triangular (ul) and stored dense: the other triangle
// must hold zeros. The products with the zero part are skipped per
// micro-tile of C, so it does about half of Dgemm's flops at Dgemm's speed;
// the zeros next to the diagonal are multiplied as stored (a NaN there
// would reach C). Each entry of C is summed in Dgemm's order over the part
// of the inner dimension it runs on, whatever the number of threads. C
// must not overlap T or B. It panics on bad arguments as Dgemm does.
func (nat *Native) GemmTriangular(side blas.Side, ul blas.Uplo, tT blas.Transpose, m, n int, alpha float64,
	t []float64, ldt int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	if side != blas.Left && side != blas.Right {
		panic(badSide)
	}
	if ul != blas.Lower && ul != blas.Upper {
		panic(badUplo)
	}
	switch tT {
	default:
		panic(badTranspose)
	case blas.NoTrans, blas.Trans, blas.ConjTrans:
	}
	trans := tT != blas.NoTrans
	lower := (ul == blas.Lower) != trans // op(T) is lower triangular
	p := gemmProblem{m: m, n: n, alpha: alpha, beta: beta, c: c, ldc: ldc, tri: blas.All}
	if side == blas.Left {
		p.k, p.tA, p.a, p.lda, p.b, p.ldb = m, trans, t, ldt, b, ldb
		p.triK = triUpperA
		if lower {
			p.triK = triLowerA
		}
	} else {
		p.k, p.tB, p.a, p.lda, p.b, p.ldb = n, trans, b, ldb, t, ldt
		if lower {
			p.triK = triLowerB
		} else {
			p.upperB = true
		}
	}
	if !checkGemm(p.tA, p.tB, m, n, p.k, p.a, p.lda, p.b, p.ldb, c, ldc, true) {
		return
	}
	if alpha == 0 {
		scaleRect(m, n, beta, c, ldc)
		return
	}
	nat.gemm(p, nat.Threads())
}

package cholesky

import (
	"math"

	"github.com/pacpfl/pacpfl/asm"
)

// The unblocked kernels below work on row-major lower-triangular matrices and
// run at the leaves of the recursive algorithms (recursive.go). Every loop
// reads rows, which are contiguous in row-major storage, so the leaves stay
// in L1 and do not need the BLAS.

// maxLeaf bounds every leaf size: the kernels that need a scratch row keep it
// in a stack array of this length.
const maxLeaf = 128

// dotSIMDMin is the length from which dot calls the SIMD kernel (shorter
// vectors do not repay the call).
const dotSIMDMin = 16

// dot returns Σ x[i]·y[i] for i < len(x), four independent partial sums so
// the adds pipeline.
func dot(x, y []float64) float64 {
	if len(x) >= dotSIMDMin {
		return asm.DotUnitary(x, y)
	}
	y = y[:len(x)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += x[i] * y[i]
		s1 += x[i+1] * y[i+1]
		s2 += x[i+2] * y[i+2]
		s3 += x[i+3] * y[i+3]
	}
	for ; i < len(x); i++ {
		s0 += x[i] * y[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// potf2 factors the n×n lower triangle of a in place, a = L·Lᵀ, by the
// left-looking (Crout) order whose inner products run along rows, two
// columns and two rows at a time so that each load feeds two multiply-adds.
// It returns col = −1 on success; otherwise the first column whose pivot
// a_jj − Σ_k L_jk² is not positive (or is NaN or +Inf), and that pivot,
// which is also stored in a_jj (the rest of a is then unspecified, as in
// LAPACK).
func potf2(n int, a []float64, lda int) (col int, pivot float64) {
	j := 0
	for ; j+1 < n; j += 2 {
		rj := a[j*lda : j*lda+j+1]
		rk := a[(j+1)*lda : (j+1)*lda+j+2]
		d := rj[j] - dot(rj[:j], rj[:j])
		if !(d > 0) || math.IsInf(d, 1) {
			rj[j] = d
			return j, d
		}
		ljj := math.Sqrt(d)
		rj[j] = ljj
		inv0 := 1 / ljj
		lkj := (rk[j] - dot(rk[:j], rj[:j])) * inv0
		rk[j] = lkj
		d = rk[j+1] - dot(rk[:j+1], rk[:j+1])
		if !(d > 0) || math.IsInf(d, 1) {
			rk[j+1] = d
			return j + 1, d
		}
		lkk := math.Sqrt(d)
		rk[j+1] = lkk
		inv1 := 1 / lkk
		bj, bk := rj[:j], rk[:j]
		i := j + 2
		for ; i+1 < n; i += 2 {
			ri := a[i*lda : i*lda+j+2]
			rh := a[(i+1)*lda : (i+1)*lda+j+2]
			xi, xh := ri[:j], rh[:j]
			xi, xh = xi[:len(bj)], xh[:len(bj)]
			bkk := bk[:len(bj)]
			var s00, s01, s10, s11 float64
			for q, b0 := range bj {
				b1 := bkk[q]
				u, v := xi[q], xh[q]
				s00 += u * b0
				s01 += u * b1
				s10 += v * b0
				s11 += v * b1
			}
			x := (ri[j] - s00) * inv0
			ri[j] = x
			ri[j+1] = (ri[j+1] - s01 - x*lkj) * inv1
			x = (rh[j] - s10) * inv0
			rh[j] = x
			rh[j+1] = (rh[j+1] - s11 - x*lkj) * inv1
		}
		if i < n {
			ri := a[i*lda : i*lda+j+2]
			x := (ri[j] - dot(ri[:j], bj)) * inv0
			ri[j] = x
			ri[j+1] = (ri[j+1] - dot(ri[:j], bk) - x*lkj) * inv1
		}
	}
	if j < n { // the last column of an odd order
		rj := a[j*lda : j*lda+j+1]
		d := rj[j] - dot(rj[:j], rj[:j])
		if !(d > 0) || math.IsInf(d, 1) {
			rj[j] = d
			return j, d
		}
		rj[j] = math.Sqrt(d)
	}
	return -1, 0
}

// trti2 inverts the n×n lower-triangular matrix in a in place (n ≤ maxLeaf).
// Row i of L⁻¹ is −(1/L_ii)·Σ_{k<i} L_ik·(row k of L⁻¹), accumulated by axpys
// over rows already inverted; the diagonal is 1 when unit is set.
func trti2(unit bool, n int, a []float64, lda int) {
	var buf [maxLeaf]float64
	for i := 0; i < n; i++ {
		ri := a[i*lda : i*lda+i+1]
		dii := 1.0
		if !unit {
			dii = 1 / ri[i]
		}
		t := buf[:i]
		for k := range t {
			t[k] = 0
		}
		for k := 0; k < i; k++ {
			lik := ri[k]
			rk := a[k*lda : k*lda+k+1]
			for c, v := range rk[:k] {
				t[c] += lik * v
			}
			if unit {
				t[k] += lik // the unit diagonal is not stored
			} else {
				t[k] += lik * rk[k]
			}
		}
		for c := range t {
			ri[c] = -dii * t[c]
		}
		if !unit {
			ri[i] = dii
		}
	}
}

// lauu2 overwrites the n×n lower triangle L in a with the lower triangle of
// Lᵀ·L (n ≤ maxLeaf). Row i of the product is Σ_{k≥i} L_ki·(row k of L)[0..i];
// it needs only rows k ≥ i, so rows can be overwritten in increasing order.
func lauu2(n int, a []float64, lda int) {
	var buf [maxLeaf]float64
	for i := 0; i < n; i++ {
		t := buf[:i+1]
		for k := range t {
			t[k] = 0
		}
		for k := i; k < n; k++ {
			rk := a[k*lda : k*lda+i+1]
			lki := rk[i]
			for c, v := range rk {
				t[c] += lki * v
			}
		}
		copy(a[i*lda:i*lda+i+1], t)
	}
}

// trsvLN solves L·x = b in place (x holds b on entry); L n×n lower,
// row-major: x_i = (b_i − L_i,0:i · x_0:i) / L_ii, dot products along rows.
func trsvLN(n int, l []float64, ldl int, x []float64) {
	for i := 0; i < n; i++ {
		row := l[i*ldl : i*ldl+i+1]
		x[i] = (x[i] - dot(row[:i], x[:i])) / row[i]
	}
}

// trsvLT solves Lᵀ·x = b in place; L n×n lower, row-major. Column i of Lᵀ
// is row i of L, so the solve runs backwards with axpys along rows:
// x_i = b_i / L_ii, then b_0:i −= x_i·L_i,0:i.
func trsvLT(n int, l []float64, ldl int, x []float64) {
	for i := n - 1; i >= 0; i-- {
		row := l[i*ldl : i*ldl+i+1]
		xi := x[i] / row[i]
		x[i] = xi
		if i >= dotSIMDMin {
			asm.AxpyUnitary(-xi, row[:i], x[:i])
			continue
		}
		for k, v := range row[:i] {
			x[k] -= xi * v
		}
	}
}

package asm

import (
	"fmt"
	"math"
)

// SqDistGeneric is the pure-Go twin of SqDist: dst[i*ldd+j] = ||a_i - b_j||^2
// for the m rows a_i of a (m×d, row stride lda) and the n rows b_j of b
// (n×d, row stride ldb). Each distance is accumulated over k = 0..d-1 in
// order with one fused multiply-add per feature, exactly as the SIMD
// kernels do, so all levels agree bit for bit.
func SqDistGeneric(dst []float64, ldd int, a []float64, lda int, b []float64, ldb int, m, n, d int) {
	checkSqDist("SqDistGeneric", dst, ldd, a, lda, b, ldb, m, n, d)
	if n == 0 {
		return
	}
	for i := 0; i < m; i++ {
		ai := a[i*lda : i*lda+d]
		row := dst[i*ldd : i*ldd+n]
		for j := range row {
			row[j] = sqDist(ai, b[j*ldb:j*ldb+d])
		}
	}
}

// SEKernelGeneric is the pure-Go twin of SEKernel:
// dst[i*ldd+j] = exp(-0.5*||a_i - b_j||^2), the squared-exponential kernel
// with unit length scale and unit variance.
func SEKernelGeneric(dst []float64, ldd int, a []float64, lda int, b []float64, ldb int, m, n, d int) {
	checkSqDist("SEKernelGeneric", dst, ldd, a, lda, b, ldb, m, n, d)
	if n == 0 {
		return
	}
	for i := 0; i < m; i++ {
		ai := a[i*lda : i*lda+d]
		row := dst[i*ldd : i*ldd+n]
		for j := range row {
			row[j] = expScalar(-0.5 * sqDist(ai, b[j*ldb:j*ldb+d]))
		}
	}
}

func sqDist(a, b []float64) float64 {
	b = b[:len(a)]
	var s float64
	for k, v := range a {
		diff := v - b[k]
		s = math.FMA(diff, diff, s)
	}
	return s
}

// checkSqDist panics, naming the argument, unless the shapes are
// non-negative, every stride covers its row and every slice holds its
// matrix; the assembly relies on it for memory safety.
func checkSqDist(kernel string, dst []float64, ldd int, a []float64, lda int, b []float64, ldb int, m, n, d int) {
	switch {
	case m < 0 || n < 0 || d < 0:
		panic(fmt.Sprintf("asm.%s: negative shape m=%d n=%d d=%d", kernel, m, n, d))
	case m == 0 || n == 0:
		return
	case ldd < n:
		panic(fmt.Sprintf("asm.%s: ldd=%d < n=%d", kernel, ldd, n))
	case lda < d:
		panic(fmt.Sprintf("asm.%s: lda=%d < d=%d", kernel, lda, d))
	case ldb < d:
		panic(fmt.Sprintf("asm.%s: ldb=%d < d=%d", kernel, ldb, d))
	case len(dst) < (m-1)*ldd+n:
		panic(fmt.Sprintf("asm.%s: len(dst)=%d < (m-1)*ldd+n=%d", kernel, len(dst), (m-1)*ldd+n))
	case len(a) < (m-1)*lda+d:
		panic(fmt.Sprintf("asm.%s: len(a)=%d < (m-1)*lda+d=%d", kernel, len(a), (m-1)*lda+d))
	case len(b) < (n-1)*ldb+d:
		panic(fmt.Sprintf("asm.%s: len(b)=%d < (n-1)*ldb+d=%d", kernel, len(b), (n-1)*ldb+d))
	}
}

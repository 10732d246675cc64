package asm

import "fmt"

// The exported kernels below read the SIMD level once per call and run the
// matching implementation. At AVX512 a kernel runs its AVX-512F version
// (*_avx512_amd64.s) where one exists and measured faster than the AVX2 one
// on an AVX-512 CPU, and the AVX2+FMA code otherwise (every AVX-512 CPU has
// AVX2 and FMA); PACPFL_SIMD=avx2 forces the AVX2 code everywhere.
//
// The assembly does no bounds checks of its own, so each entry point checks
// up front, in O(1), that every element it will touch lies inside its slice
// and panics like an index out of range otherwise, exactly where the generic
// twin would have panicked. Memory safety never depends on the level.

// DotUnitary returns the sum of x[i]*y[i] for i < len(x); len(y) >= len(x).
func DotUnitary(x, y []float64) float64 {
	if len(y) < len(x) {
		panic(fmt.Sprintf("asm.DotUnitary: len(y)=%d < len(x)=%d", len(y), len(x)))
	}
	switch Current() {
	case AVX512:
		return dotUnitaryAVX512(x, y)
	case AVX2:
		return dotUnitaryAVX2(x, y)
	case NEON:
		return dotUnitaryNEON(x, y)
	default:
		return DotUnitaryGeneric(x, y)
	}
}

// DotInc returns the sum over i < n of x[ix+i*incX]*y[iy+i*incY], with gonum
// internal/asm/f64.DotInc semantics: a negative increment is passed as
// uintptr(inc) and the start offset then points at the far end.
func DotInc(x, y []float64, n, incX, incY, ix, iy uintptr) float64 {
	checkInc("DotInc", "x", len(x), n, incX, ix)
	checkInc("DotInc", "y", len(y), n, incY, iy)
	switch Current() {
	case AVX2, AVX512:
		// Strided: an AVX-512 version gathering eight elements at a time
		// measured half as fast as this scalar one with four accumulators
		// (Zen 5), and ScalInc by gather and scatter 0.44×, so the strided
		// kernels stay scalar at level AVX512.
		return dotIncAVX2(x, y, n, incX, incY, ix, iy)
	case NEON:
		return dotIncNEON(x, y, n, incX, incY, ix, iy)
	default:
		return DotIncGeneric(x, y, n, incX, incY, ix, iy)
	}
}

// AxpyUnitary computes y[i] += alpha*x[i] for i < len(x); len(y) >= len(x).
// The SIMD code uses fused multiply-add, so a result may differ from the
// generic twin's by one rounding.
func AxpyUnitary(alpha float64, x, y []float64) {
	if len(y) < len(x) {
		panic(fmt.Sprintf("asm.AxpyUnitary: len(y)=%d < len(x)=%d", len(y), len(x)))
	}
	switch Current() {
	case AVX512:
		axpyUnitaryAVX512(alpha, x, y)
	case AVX2:
		axpyUnitaryAVX2(alpha, x, y)
	case NEON:
		axpyUnitaryNEON(alpha, x, y)
	default:
		AxpyUnitaryGeneric(alpha, x, y)
	}
}

// AxpyInc computes y[iy+i*incY] += alpha*x[ix+i*incX] for i < n, with gonum
// internal/asm/f64.AxpyInc semantics (see DotInc for negative increments).
func AxpyInc(alpha float64, x, y []float64, n, incX, incY, ix, iy uintptr) {
	checkInc("AxpyInc", "x", len(x), n, incX, ix)
	checkInc("AxpyInc", "y", len(y), n, incY, iy)
	switch Current() {
	case AVX2, AVX512:
		axpyIncAVX2(alpha, x, y, n, incX, incY, ix, iy)
	case NEON:
		axpyIncNEON(alpha, x, y, n, incX, incY, ix, iy)
	default:
		AxpyIncGeneric(alpha, x, y, n, incX, incY, ix, iy)
	}
}

// ScalUnitary computes x[i] *= alpha.
func ScalUnitary(alpha float64, x []float64) {
	switch Current() {
	case AVX512:
		scalUnitaryAVX512(alpha, x)
	case AVX2:
		scalUnitaryAVX2(alpha, x)
	case NEON:
		scalUnitaryNEON(alpha, x)
	default:
		ScalUnitaryGeneric(alpha, x)
	}
}

// ScalInc computes x[i*incX] *= alpha for i < n; incX must be positive.
func ScalInc(alpha float64, x []float64, n, incX uintptr) {
	if int(incX) <= 0 && n > 0 {
		panic(fmt.Sprintf("asm.ScalInc: incX=%d is not positive", int(incX)))
	}
	checkInc("ScalInc", "x", len(x), n, incX, 0)
	switch Current() {
	case AVX2, AVX512:
		scalIncAVX2(alpha, x, n, incX)
	case NEON:
		scalIncNEON(alpha, x, n, incX)
	default:
		ScalIncGeneric(alpha, x, n, incX)
	}
}

// checkInc panics unless the n elements start, start+inc, ... (inc read as
// a signed step) all lie in [0, length).
func checkInc(kernel, name string, length int, n, inc, start uintptr) {
	if n == 0 {
		return
	}
	first := int(start)
	if int(n) < 0 || first < 0 || first >= length {
		panic(fmt.Sprintf("asm.%s: %s start %d out of range (len %d, n %d)", kernel, name, first, length, int(n)))
	}
	// The last index, computed without overflow: |inc| <= length is
	// required whenever n > 1 for the span to fit at all.
	step := int(inc)
	if n > 1 {
		if step > length || step < -length {
			panic(fmt.Sprintf("asm.%s: %s increment %d too large for len %d", kernel, name, step, length))
		}
		if step != 0 && int(n)-1 >= length {
			panic(fmt.Sprintf("asm.%s: %s holds %d elements, fewer than n=%d at increment %d", kernel, name, length,
				int(n), step))
		}
		last := first + (int(n)-1)*step
		if last < 0 || last >= length {
			panic(fmt.Sprintf("asm.%s: %s index %d out of range (len %d, n %d, inc %d, start %d)",
				kernel, name, last, length, int(n), step, first))
		}
	}
}

// Exp computes dst[i] = exp(x[i]) for i < len(x); len(dst) >= len(x), and
// dst may be x itself. Results are within about one ulp of the exact value
// (see exp_generic.go) and identical at every SIMD level; exp(-Inf) = 0,
// exp(+Inf) = +Inf, NaN stays NaN, tiny results are subnormal, and the
// result underflows to 0 below about -745.13 and overflows above 709.78.
func Exp(dst, x []float64) {
	if len(dst) < len(x) {
		panic(fmt.Sprintf("asm.Exp: len(dst)=%d < len(x)=%d", len(dst), len(x)))
	}
	switch Current() {
	case AVX512:
		expBlocks(dst, x, 8, expAVX512)
	case AVX2:
		expBlocks(dst, x, 4, expAVX2)
	case NEON:
		expBlocks(dst, x, 2, expNEON)
	default:
		ExpGeneric(dst, x)
	}
}

// SqDist computes the squared Euclidean distances dst[i*ldd+j] =
// ||a_i - b_j||^2 between the m rows of a (m×d, row stride lda) and the n
// rows of b (n×d, row stride ldb) into the m×n matrix dst (row stride ldd).
// Results are identical at every SIMD level. It panics, naming the
// argument, on negative shapes, short strides or short slices.
func SqDist(dst []float64, ldd int, a []float64, lda int, b []float64, ldb int, m, n, d int) {
	checkSqDist("SqDist", dst, ldd, a, lda, b, ldb, m, n, d)
	if m == 0 || n == 0 {
		return
	}
	switch l := Current(); l {
	case AVX2, AVX512, NEON:
		if d == 0 {
			fillRows(dst, ldd, m, n, 0)
			return
		}
		sqdistBlocked(l, dst, ldd, a, lda, b, ldb, m, n, d, 1, false)
	default:
		SqDistGeneric(dst, ldd, a, lda, b, ldb, m, n, d)
	}
}

// SEKernel computes the squared-exponential kernel matrix dst[i*ldd+j] =
// exp(-0.5*||a_i - b_j||^2) (unit length scale and variance: scale the
// inputs for others), with the shapes of SqDist. Distances and exponentials
// are computed block by block while the block is in L1. Results are
// identical at every SIMD level.
func SEKernel(dst []float64, ldd int, a []float64, lda int, b []float64, ldb int, m, n, d int) {
	checkSqDist("SEKernel", dst, ldd, a, lda, b, ldb, m, n, d)
	if m == 0 || n == 0 {
		return
	}
	switch l := Current(); l {
	case AVX2, AVX512, NEON:
		if d == 0 {
			fillRows(dst, ldd, m, n, 1)
			return
		}
		sqdistBlocked(l, dst, ldd, a, lda, b, ldb, m, n, d, -0.5, true)
	default:
		SEKernelGeneric(dst, ldd, a, lda, b, ldb, m, n, d)
	}
}

func fillRows(dst []float64, ldd, m, n int, v float64) {
	for i := 0; i < m; i++ {
		row := dst[i*ldd : i*ldd+n]
		for j := range row {
			row[j] = v
		}
	}
}

package svgd

import (
	"fmt"
	"math"
)

// MinMedian is the smallest squared-distance median the bandwidth heuristic
// divides by; below it (all particles coincide, or k = 1) the bandwidth is 1.
const MinMedian = 1e-12

// squaredDistances fills dst (k×k, row-major) with ‖φ_l − φ_κ‖². The
// differences are formed explicitly rather than through ‖a‖²+‖b‖²−2a·b: that
// expansion cancels catastrophically once particles are close, which is
// exactly when the bandwidth matters.
func squaredDistances(dst, phi []float64, k, d int) {
	for l := 0; l < k; l++ {
		dst[l*k+l] = 0
		a := phi[l*d : l*d+d]
		for c := l + 1; c < k; c++ {
			b := phi[c*d : c*d+d]
			b = b[:len(a)]
			var s0, s1 float64
			i := 0
			for ; i+1 < len(a); i += 2 {
				t0 := a[i] - b[i]
				t1 := a[i+1] - b[i+1]
				s0 += t0 * t0
				s1 += t1 * t1
			}
			if i < len(a) {
				t := a[i] - b[i]
				s0 += t * t
			}
			s := s0 + s1
			dst[l*k+c] = s
			dst[c*k+l] = s
		}
	}
}

// Bandwidth returns the median-heuristic bandwidth h = med²/ln(k+1) of a
// k×k squared-distance matrix, where med² is the median of all k² entries
// including the zero diagonal (the mean of the two middle values when k² is
// even). scratch must hold k² values; it is overwritten. If med² < MinMedian
// the bandwidth is 1.
func Bandwidth(sqdist []float64, k int, scratch []float64) float64 {
	n := k * k
	if k <= 0 {
		return 1
	}
	copy(scratch[:n], sqdist[:n])
	med := median(scratch[:n])
	if !(med >= MinMedian) { // also catches NaN
		return 1
	}
	return med / math.Log(float64(k)+1)
}

// median returns the median of x (mean of the two middle values for an even
// count), reordering x. It runs in expected linear time by quickselect.
func median(x []float64) float64 {
	n := len(x)
	hi := selectKth(x, n/2)
	if n%2 == 1 {
		return hi
	}
	// After selectKth, x[:n/2] holds the n/2 smallest values: the lower
	// middle is their maximum.
	lo := x[0]
	for _, v := range x[1 : n/2] {
		if v > lo {
			lo = v
		}
	}
	return 0.5 * (lo + hi)
}

// selectKth partially sorts x so that x[j] is the value that would sit at
// index j after sorting, everything before it is ≤ and everything after ≥,
// and returns x[j]. Hoare partitioning with a median-of-three pivot; NaNs
// must not be present (squared distances of finite particles have none).
func selectKth(x []float64, j int) float64 {
	lo, hi := 0, len(x)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		// Median of three into x[mid].
		if x[mid] < x[lo] {
			x[mid], x[lo] = x[lo], x[mid]
		}
		if x[hi] < x[lo] {
			x[hi], x[lo] = x[lo], x[hi]
		}
		if x[hi] < x[mid] {
			x[hi], x[mid] = x[mid], x[hi]
		}
		p := x[mid]
		i, k := lo, hi
		for i <= k {
			for x[i] < p {
				i++
			}
			for x[k] > p {
				k--
			}
			if i <= k {
				x[i], x[k] = x[k], x[i]
				i++
				k--
			}
		}
		// Now x[lo..k] ≤ p ≤ x[i..hi], and x[k+1..i-1] == p.
		switch {
		case j <= k:
			hi = k
		case j >= i:
			lo = i
		default:
			return x[j]
		}
	}
	return x[j]
}

// RBF fills dst (k×k) with exp(−sqdist/h).
func rbf(dst, sqdist []float64, h float64) {
	inv := 1 / h
	for i, v := range sqdist {
		dst[i] = math.Exp(-v * inv)
	}
}

func checkMatrix(name string, x []float64, k, d int) error {
	if len(x) != k*d {
		return fmt.Errorf("svgd: %s has %d values, want k×d = %d×%d = %d", name, len(x), k, d, k*d)
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("svgd: %s[%d,%d] = %v is not finite", name, i/d, i%d, v)
		}
	}
	return nil
}

package asm

// AllFinite reports whether every entry of x is finite (no NaN, no ±Inf).
// v − v is 0 for a finite v and NaN for ±Inf and NaN, so the sum of the
// differences is 0 exactly when all are finite: four independent sums and
// no branch per entry, which is why validation loops call it first and scan
// entry by entry only to name a bad one. It has no assembly: the loop runs
// at the speed of the loads already.
func AllFinite(x []float64) bool {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		y := x[i : i+4 : i+4]
		s0 += y[0] - y[0]
		s1 += y[1] - y[1]
		s2 += y[2] - y[2]
		s3 += y[3] - y[3]
	}
	for ; i < len(x); i++ {
		s0 += x[i] - x[i]
	}
	return (s0+s1)+(s2+s3) == 0
}

package asm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// dotTol is the rounding a reordered sum may differ by: a few ulps of the
// sum of |terms| (the generic twin sums in order, SIMD in several lanes).
func dotTol(x, y []float64, xi, yi []int) float64 {
	var s float64
	for k := range xi {
		s += math.Abs(x[xi[k]] * y[yi[k]])
	}
	return 1e-14*s + 1e-300
}

func TestDotUnitary(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		for _, n := range testLengths() {
			for off := 0; off < 4; off++ {
				x := newStrided(rng, n, 1, off)
				y := newStrided(rng, n, 1, (off+1)%4)
				got := DotUnitary(x.view, y.view)
				want := DotUnitaryGeneric(x.view, y.view)
				if tol := dotTol(x.view, y.view, x.idx, y.idx); math.Abs(got-want) > tol || math.IsNaN(got) {
					// A NaN here means a read outside the vectors (guards are NaN).
					t.Fatalf("n=%d off=%d: DotUnitary = %v, generic %v (tol %g)", n, off, got, want, tol)
				}
				// y longer than x: only len(x) terms count.
				if n > 0 {
					if got2 := DotUnitary(x.view[:n-1], y.view); math.Abs(
						got2-DotUnitaryGeneric(x.view[:n-1], y.view)) > dotTol(x.view, y.view, x.idx, y.idx) {
						t.Fatalf("n=%d: DotUnitary with len(y) > len(x) = %v", n, got2)
					}
				}
			}
		}
	})
}

func TestDotInc(t *testing.T) {
	incs := []int{1, 2, 3, -1, -2, -3}
	forEachLevel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 4))
		for _, n := range testLengths() {
			for _, incX := range incs {
				for _, incY := range incs {
					x := newStrided(rng, n, incX, rng.IntN(4))
					y := newStrided(rng, n, incY, rng.IntN(4))
					got := DotInc(x.view, y.view, uintptr(n), uintptr(incX), uintptr(incY), x.start, y.start)
					want := DotIncGeneric(x.view, y.view, uintptr(n), uintptr(incX), uintptr(incY), x.start, y.start)
					if tol := dotTol(x.view, y.view, x.idx, y.idx); math.Abs(got-want) > tol || math.IsNaN(got) {
						t.Fatalf("n=%d incX=%d incY=%d: DotInc = %v, generic %v (tol %g)", n, incX, incY, got, want,
							tol)
					}
				}
			}
		}
	})
}

// TestDotSpecialValues: NaN and ±Inf terms propagate like in the generic
// twin at every position (every lane and every tail element).
func TestDotSpecialValues(t *testing.T) {
	specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1)}
	forEachLevel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(5, 6))
		for _, n := range []int{1, 3, 4, 7, 16, 17, 37, 67} {
			for p := 0; p < n; p++ {
				for _, sv := range specials {
					x := newStrided(rng, n, 1, 0)
					y := newStrided(rng, n, 1, 0)
					x.view[p] = sv
					check := func(what string, got, want float64) {
						if !sameFloat(got, want) {
							t.Fatalf("n=%d x[%d]=%v: %s = %v, generic %v", n, p, sv, what, got, want)
						}
					}
					check("DotUnitary", DotUnitary(x.view, y.view), DotUnitaryGeneric(x.view, y.view))
					check("DotInc", DotInc(x.view, y.view, uintptr(n), 1, 1, 0, 0),
						DotIncGeneric(x.view, y.view, uintptr(n), 1, 1, 0, 0))
					// +Inf and -Inf together make NaN.
					if n > 1 && !math.IsNaN(sv) {
						y.view[(p+1)%n] = -sv / x.view[(p+1)%n]
						if x.view[(p+1)%n] == 0 {
							continue
						}
						check("DotUnitary(Inf-Inf)", DotUnitary(x.view, y.view), DotUnitaryGeneric(x.view, y.view))
					}
				}
			}
		}
	})
}

// TestLevel1Subnormals: subnormal inputs are neither flushed to zero nor
// treated differently at any level. The values are small integer multiples
// of 2^-1074 (times small integers for the products with y), so every sum
// is exact in any order and every level must agree bit for bit.
func TestLevel1Subnormals(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		for _, n := range testLengths() {
			x := make([]float64, n)
			y := make([]float64, n)
			for i := range x {
				x[i] = float64(i%13+2) * 0x1p-1074
				y[i] = float64(i%5 - 2)
			}
			if got, want := DotUnitary(x, y), DotUnitaryGeneric(x, y); got != want {
				t.Fatalf("n=%d: DotUnitary of subnormals = %v, generic %v", n, got, want)
			}
			if got, want := DotInc(x, y, uintptr(n), 1, 1, 0, 0),
				DotIncGeneric(x, y, uintptr(n), 1, 1, 0, 0); got != want {
				t.Fatalf("n=%d: DotInc of subnormals = %v, generic %v", n, got, want)
			}
			ya, yg := append([]float64(nil), x...), append([]float64(nil), x...)
			AxpyUnitary(-3, x, ya)
			AxpyUnitaryGeneric(-3, x, yg)
			sa, sg := append([]float64(nil), x...), append([]float64(nil), x...)
			ScalUnitary(0.5, sa) // rounds half to even in the subnormal range
			ScalUnitaryGeneric(0.5, sg)
			for i := range n {
				if ya[i] != yg[i] || ya[i] != -2*x[i] {
					t.Fatalf("n=%d: AxpyUnitary on subnormals: y[%d] = %v, generic %v, want %v", n, i, ya[i], yg[i],
						-2*x[i])
				}
				if math.Float64bits(sa[i]) != math.Float64bits(sg[i]) || sa[i] == 0 {
					t.Fatalf("n=%d: ScalUnitary(0.5) on subnormal %v = %v, generic %v", n, x[i], sa[i], sg[i])
				}
			}
		}
	})
}

package asm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// axpyClose reports whether got is the result of y + alpha*x rounded either
// fused (one rounding) or unfused (two): they differ by at most a couple of
// ulps of |y| + |alpha*x|.
func axpyClose(got, want, alpha, x, y float64) bool {
	if sameFloat(got, want) {
		return true
	}
	return math.Abs(got-want) <= 4.5e-16*(math.Abs(y)+math.Abs(alpha*x))
}

func TestAxpyUnitary(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 8))
		for _, n := range testLengths() {
			for off := 0; off < 4; off++ {
				alpha := randValue(rng)
				x := newStrided(rng, n, 1, off)
				y := newStrided(rng, n, 1, 3-off).withGuard(guardFinite)
				yg, y0 := y.clone(), y.clone()
				AxpyUnitary(alpha, x.view, y.view)
				AxpyUnitaryGeneric(alpha, x.view, yg.view)
				y.checkGuards(t, "AxpyUnitary y")
				x.checkGuards(t, "AxpyUnitary x")
				for i := range n {
					if !axpyClose(y.view[i], yg.view[i], alpha, x.view[i], y0.view[i]) {
						t.Fatalf("n=%d off=%d: y[%d] = %v, generic %v", n, off, i, y.view[i], yg.view[i])
					}
				}
			}
		}
		// x and y the same slice: y = (1+alpha)*y.
		x := newStrided(rng, 67, 1, 1)
		want := x.clone()
		AxpyUnitary(0.5, x.view, x.view)
		AxpyUnitaryGeneric(0.5, want.view, want.view)
		for i := range x.view {
			if !axpyClose(x.view[i], want.view[i], 0.5, want.view[i]/1.5, want.view[i]/1.5) {
				t.Fatalf("aliased AxpyUnitary: y[%d] = %v, want %v", i, x.view[i], want.view[i])
			}
		}
	})
}

func TestAxpyInc(t *testing.T) {
	incs := []int{1, 2, 3, -1, -2, -3}
	forEachLevel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(9, 10))
		for _, n := range testLengths() {
			for _, incX := range incs {
				for _, incY := range incs {
					alpha := randValue(rng)
					x := newStrided(rng, n, incX, rng.IntN(4))
					y := newStrided(rng, n, incY, rng.IntN(4)).withGuard(guardFinite)
					y0 := y.clone()
					yg := y.clone()
					AxpyInc(alpha, x.view, y.view, uintptr(n), uintptr(incX), uintptr(incY), x.start, y.start)
					AxpyIncGeneric(alpha, x.view, yg.view, uintptr(n), uintptr(incX), uintptr(incY), x.start, y.start)
					y.checkGuards(t, "AxpyInc y")
					x.checkGuards(t, "AxpyInc x")
					for k, j := range y.idx {
						xv := x.view[x.idx[k]]
						if !axpyClose(y.view[j], yg.view[j], alpha, xv, y0.view[j]) {
							t.Fatalf("n=%d incX=%d incY=%d: element %d = %v, generic %v", n, incX, incY, k, y.view[j],
								yg.view[j])
						}
					}
				}
			}
		}
	})
}

func TestAxpySpecialValues(t *testing.T) {
	specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1)}
	forEachLevel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(11, 12))
		for _, n := range []int{1, 5, 16, 19, 35} {
			for p := 0; p < n; p++ {
				for _, sv := range specials {
					for _, inX := range []bool{true, false} {
						x := newStrided(rng, n, 1, 0)
						y := newStrided(rng, n, 1, 0)
						if inX {
							x.view[p] = sv
						} else {
							y.view[p] = sv
						}
						yg, yi, yig := y.clone(), y.clone(), y.clone()
						AxpyUnitary(2, x.view, y.view)
						AxpyUnitaryGeneric(2, x.view, yg.view)
						AxpyInc(2, x.view, yi.view, uintptr(n), 1, 1, 0, 0)
						AxpyIncGeneric(2, x.view, yig.view, uintptr(n), 1, 1, 0, 0)
						if !sameFloat(y.view[p], yg.view[p]) || !sameFloat(yi.view[p], yig.view[p]) ||
							!math.IsNaN(y.view[p]) && !math.IsInf(y.view[p], 0) {
							t.Fatalf("n=%d p=%d special %v (in x: %v): Unitary %v / %v, Inc %v / %v", n, p, sv, inX,
								y.view[p], yg.view[p], yi.view[p], yig.view[p])
						}
					}
				}
			}
		}
	})
}

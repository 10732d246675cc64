package asm

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestScalUnitary(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(13, 14))
		for _, n := range testLengths() {
			for off := 0; off < 4; off++ {
				alpha := randValue(rng)
				x := newStrided(rng, n, 1, off).withGuard(guardFinite)
				if n > 2 {
					x.view[n/2] = math.NaN()
					x.view[n-1] = math.Inf(-1)
				}
				xg := x.clone()
				ScalUnitary(alpha, x.view)
				ScalUnitaryGeneric(alpha, xg.view)
				x.checkGuards(t, "ScalUnitary")
				for i := range n {
					if !sameFloat(x.view[i], xg.view[i]) {
						t.Fatalf("n=%d off=%d: x[%d] = %v, generic %v", n, off, i, x.view[i], xg.view[i])
					}
				}
			}
		}
	})
}

func TestScalInc(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(15, 16))
		for _, n := range testLengths() {
			for _, inc := range []int{1, 2, 3, 7} {
				alpha := randValue(rng)
				x := newStrided(rng, n, inc, rng.IntN(4)).withGuard(guardFinite)
				if n > 2 {
					x.view[x.idx[n/2]] = math.NaN()
					x.view[x.idx[1]] = math.Inf(1)
				}
				xg := x.clone()
				ScalInc(alpha, x.view, uintptr(n), uintptr(inc))
				ScalIncGeneric(alpha, xg.view, uintptr(n), uintptr(inc))
				x.checkGuards(t, "ScalInc")
				for _, j := range x.idx {
					if !sameFloat(x.view[j], xg.view[j]) {
						t.Fatalf("n=%d inc=%d: x[%d] = %v, generic %v", n, inc, j, x.view[j], xg.view[j])
					}
				}
			}
		}
	})
}

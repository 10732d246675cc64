package asm

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestAllFinite(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	bad := []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Float64frombits(0x7ff0000000000001)}
	for n := 0; n <= 19; n++ {
		x := make([]float64, n)
		for i := range x {
			// Finite extremes included: their differences are still 0.
			switch i % 4 {
			case 0:
				x[i] = math.MaxFloat64
			case 1:
				x[i] = -math.SmallestNonzeroFloat64
			default:
				x[i] = rng.NormFloat64() * 1e300
			}
		}
		if !AllFinite(x) {
			t.Fatalf("n = %d: finite entries reported not finite", n)
		}
		for i := range x {
			for _, b := range bad {
				old := x[i]
				x[i] = b
				if AllFinite(x) {
					t.Fatalf("n = %d: %v at %d not found", n, b, i)
				}
				x[i] = old
			}
		}
	}
}

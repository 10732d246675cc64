package fl

import (
	"math"
	"testing"
)

// BestRound picks the earliest of the highest, ignoring the NaN figures
// that follow a number; NewRoundEval leaves every figure NaN.
func TestBestRound(t *testing.T) {
	e := NewRoundEval(4)
	if e.Round != 4 || !math.IsNaN(e.PM) || !math.IsNaN(e.GM) ||
		!math.IsNaN(e.ExistingWeighted) || !math.IsNaN(e.NewWeighted) {
		t.Fatalf("NewRoundEval(4) = %+v", e)
	}
	h := make([]RoundEval, 5)
	for i, gm := range []float64{50, 70, math.NaN(), 70, 60} {
		h[i] = NewRoundEval(i + 1)
		h[i].GM, h[i].PM = gm, float64(10-i)
	}
	if b := BestRound(h, func(e RoundEval) float64 { return e.GM }); b.Round != 2 {
		t.Errorf("best GM in round %d, want 2", b.Round)
	}
	if b := BestRound(h, func(e RoundEval) float64 { return e.PM }); b.Round != 1 {
		t.Errorf("best PM in round %d, want 1", b.Round)
	}
	if b := BestRound(nil, func(e RoundEval) float64 { return e.GM }); b != (RoundEval{}) {
		t.Errorf("best of none %+v", b)
	}
}

package methods

import (
	"errors"
	"math"
	"testing"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/mtl"
)

// The grid is scored fold by fold as a direct computation would, sorted
// best first, a failing setting last at +Inf with its error.
func TestCrossValidateGrid(t *testing.T) {
	ds, err := smallPoly(6)
	if err != nil {
		t.Fatal(err)
	}
	ds.Existing = append(ds.Existing, ds.Existing...) // 6 clients, 2 folds of 3
	folds, err := fl.CVFolds(ds, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	grid, err := BaselineGrid("mtl", nil, ds.D, 4, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(grid) != len(tuneMTLLambdaVs)*len(tuneMTLLRs) {
		t.Fatalf("%d MTL settings", len(grid))
	}
	grid = grid[:3]
	grid = append(grid, Setting{Values: map[string]float64{"bad": 1}, Score: func(fl.CVFold) (fl.GroupMetrics, error) {
		return fl.GroupMetrics{}, errors.New("diverged")
	}})
	pts := CrossValidateGrid(folds, grid)
	if len(pts) != 4 || pts[3].Failed != "diverged" || !math.IsInf(pts[3].RSMSE, 1) {
		t.Fatalf("points %+v", pts)
	}
	for i := 1; i < 3; i++ {
		if pts[i].RSMSE < pts[i-1].RSMSE {
			t.Errorf("not sorted: %v before %v", pts[i-1].RSMSE, pts[i].RSMSE)
		}
	}
	// The best point by hand.
	best := pts[0]
	o := mtl.Default()
	o.LambdaV, o.LR, o.Seed = best.Setting["lambda_v"], best.Setting["lr"], 4
	var sum float64
	for f, fold := range folds {
		m, err := mtl.Train(fold.Train, o)
		if err != nil {
			t.Fatal(err)
		}
		g, err := fl.EvaluatePointGroup(fold.Val, m.Fit)
		if err != nil {
			t.Fatal(err)
		}
		if g.MeanRSMSE != best.Folds[f] {
			t.Errorf("fold %d: %v, direct %v", f, best.Folds[f], g.MeanRSMSE)
		}
		sum += g.MeanRSMSE
	}
	if math.Abs(best.RSMSE-sum/2) > 1e-15 {
		t.Errorf("mean %v, direct %v", best.RSMSE, sum/2)
	}
	for _, m := range []string{"maml", "vanilla", "pooled"} {
		g, err := BaselineGrid(m, nil, ds.D, 1, []int{5}, []float64{0.01, 0.02})
		if err != nil || len(g) == 0 {
			t.Errorf("%s: %d settings, %v", m, len(g), err)
		}
	}
	if _, err := BaselineGrid("pacpfl", nil, ds.D, 1, nil, nil); err == nil {
		t.Error("a grid for pacpfl")
	}
	if _, err := BaselineGrid("vanilla", nil, ds.D, 1, nil, []float64{0.1}); err == nil {
		t.Error("an empty grid of fit steps accepted")
	}
}

// The PAC-PFL grid is a fresh copy per call: a program may change it.
func TestDefaultPACPFLGrid(t *testing.T) {
	taus, sps := DefaultPACPFLGrid()
	taus[0], sps[0] = -1, -1
	taus, sps = DefaultPACPFLGrid()
	if taus[0] != 0.05 || sps[0] != 0.1 || len(taus) != 4 || len(sps) != 4 {
		t.Fatalf("grid %v × %v", taus, sps)
	}
}

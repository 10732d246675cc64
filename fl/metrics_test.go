package fl

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/pacpfl/pacpfl/data"
)

func TestRSMSEHandComputed(t *testing.T) {
	y := []float64{1, 2, 3, 4}    // mean 2.5, population var 1.25
	pred := []float64{1, 2, 3, 6} // squared errors 0,0,0,4 → MSE 1
	got, err := RSMSE(pred, y)
	if err != nil {
		t.Fatal(err)
	}
	if want := math.Sqrt(1 / 1.25); math.Abs(got-want) > 1e-15 {
		t.Fatalf("RSMSE = %v, want %v", got, want)
	}
	// Predicting the test mean gives exactly 1.
	if got, _ := RSMSE([]float64{2.5, 2.5, 2.5, 2.5}, y); math.Abs(got-1) > 1e-15 {
		t.Fatalf("mean predictor RSMSE = %v, want 1", got)
	}
	if _, err := RSMSE(pred[:3], y); err == nil {
		t.Fatal("length mismatch accepted")
	}
	if _, err := RSMSE([]float64{1, 1}, []float64{3, 3}); err == nil {
		t.Fatal("zero-variance targets accepted")
	}
	if _, err := RSMSE([]float64{math.NaN(), 1}, []float64{0, 1}); err == nil {
		t.Fatal("NaN accepted")
	}
}

func TestCalibrationErrorHandComputed(t *testing.T) {
	// All CDF values 0.5: q̂_h = 0 for h < 10, 1 for h ≥ 10.
	// CE = (1/20)(Σ_{h=1}^{9} h/20 + Σ_{h=10}^{20} (1 − h/20)) = (45 + 55)/400 = 0.25.
	cdf := []float64{0.5, 0.5, 0.5}
	got, err := CalibrationError(cdf)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got-0.25) > 1e-15 {
		t.Fatalf("CE = %v, want 0.25", got)
	}
	// Exactly uniform on the grid points: q̂_h = q_h exactly.
	grid := make([]float64, 20)
	for h := range grid {
		grid[h] = float64(h+1) / 20
	}
	if got, _ := CalibrationError(grid); got > 1e-15 {
		t.Fatalf("CE of the grid itself = %v, want 0", got)
	}
	if _, err := CalibrationError([]float64{1.5}); err == nil {
		t.Fatal("CDF > 1 accepted")
	}
	if _, err := CalibrationError(nil); err == nil {
		t.Fatal("empty accepted")
	}
}

func TestCalibrationErrorGaussians(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 20000
	good, over, shift := make([]float64, n), make([]float64, n), make([]float64, n)
	for j := range good {
		y := rng.NormFloat64()
		good[j] = distuv.UnitNormal.CDF(y)
		over[j] = distuv.UnitNormal.CDF(y / 0.25) // predictive std 4× too small
		shift[j] = distuv.UnitNormal.CDF(y - 2)   // mean off by 2 std
	}
	ce, _ := CalibrationError(good)
	if ce > 0.01 {
		t.Fatalf("calibrated Gaussian CE = %v, want ≈ 0", ce)
	}
	// Exact value: (1/20) Σ_h |Φ(Φ⁻¹(q_h)/4) − q_h| ≈ 0.159.
	ce, _ = CalibrationError(over)
	if ce < 0.14 || ce > 0.18 {
		t.Fatalf("overconfident Gaussian CE = %v, want ≈ 0.159", ce)
	}
	ce, _ = CalibrationError(shift)
	if ce < 0.2 {
		t.Fatalf("shifted Gaussian CE = %v, want > 0.2", ce)
	}
}

func TestSummarise(t *testing.T) {
	xs := []float64{1, 2, 3, 4, 5} // mean 3, s = √2.5
	s := Summarise(xs)
	// t_{0.975,4} = 2.7764451051977987
	want := 2.7764451051977987 * math.Sqrt(2.5) / math.Sqrt(5)
	if s.Mean != 3 || math.Abs(s.CI95-want) > 1e-9 {
		t.Fatalf("Summarise = %+v, want 3 ± %v", s, want)
	}
	if s := Summarise([]float64{7}); s.Mean != 7 || s.CI95 != 0 {
		t.Fatalf("single value: %+v", s)
	}
	if s := Summarise(nil); !math.IsNaN(s.Mean) {
		t.Fatalf("empty: %+v", s)
	}
}

func TestEvaluate(t *testing.T) {
	clients := []data.ClientData{{YTest: []float64{1, 2, 3, 4}}, {YTest: []float64{0, 2}}}
	preds := []Prediction{
		{Mean: []float64{1, 2, 3, 6}, CDFAtY: []float64{0.5, 0.5, 0.5}},
		{Mean: []float64{1, 1}, CDFAtY: []float64{0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1}},
	}
	g, err := Evaluate(preds, clients)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(g.MeanRSMSE-(math.Sqrt(0.8)+1)/2) > 1e-12 || math.Abs(g.MeanCE-0.125) > 1e-12 {
		t.Fatalf("Evaluate = %+v", g)
	}
	if _, err := Evaluate(preds[:1], clients); err == nil {
		t.Fatal("count mismatch accepted")
	}
}

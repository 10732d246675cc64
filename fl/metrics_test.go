package fl

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
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
	if s := Summarise([]float64{7}); s.Mean != 7 || !math.IsNaN(s.CI95) {
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
		{Mean: []float64{1, 1}, CDFAtY: []float64{0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6,
			0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1}},
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

func TestClassificationMetricsHandComputed(t *testing.T) {
	probs := []float64{
		0.7, 0.2, 0.1, // label 0: correct, confidence 0.7 (bin 14: exactly its upper edge)
		0.2, 0.7, 0.1, // label 2: wrong, 0.7 (bin 14)
		0.1, 0.1, 0.8, // label 2: correct, 0.8 (bin 16)
		0.5, 0.5, 0, // label 1: tie → class 0, wrong, 0.5 (bin 10)
		0.34, 0.33, 0.33, // label 0: correct, 0.34 (bin 7)
	}
	y := []float64{0, 2, 2, 1, 0}
	acc, ce, err := ClassificationMetrics(probs, y, 3)
	if err != nil {
		t.Fatal(err)
	}
	// CE = 2/5·|1/2 − 0.7| + 1/5·|1 − 0.8| + 1/5·|0 − 0.5| + 1/5·|1 − 0.34|
	//    = 0.08 + 0.04 + 0.1 + 0.132 = 0.352.
	if acc != 60 || math.Abs(ce-0.352) > 1e-15 {
		t.Fatalf("accuracy %v CE %v, want 60 and 0.352", acc, ce)
	}
	// A confident, always right predictor: CE 0.
	if acc, ce, _ := ClassificationMetrics([]float64{1, 0, 0, 1}, []float64{0, 1}, 2); acc != 100 || ce != 0 {
		t.Fatalf("perfect predictor: accuracy %v CE %v", acc, ce)
	}
}

// calibratedSample draws m test points with class probabilities
// softmax(z), z ~ N(0, 2²) per class, and labels drawn from softmax(z/temp):
// temp = 1 is a perfectly calibrated predictor, temp > 1 an overconfident
// one.
func calibratedSample(m, classes int, temp float64, seed uint64) (probs, y []float64) {
	r := rand.New(rand.NewPCG(seed, 42))
	probs, y = make([]float64, m*classes), make([]float64, m)
	truth := make([]float64, classes)
	for j := range m {
		row := probs[j*classes : (j+1)*classes]
		var s, st float64
		for c := range row {
			z := 2 * r.NormFloat64()
			row[c], truth[c] = math.Exp(z), math.Exp(z/temp)
			s += row[c]
			st += truth[c]
		}
		u := r.Float64() * st
		y[j] = float64(classes - 1)
		for c := range row {
			row[c] /= s
			if u -= truth[c]; u < 0 && y[j] == float64(classes-1) {
				y[j] = float64(c)
			}
		}
	}
	return probs, y
}

// A perfectly calibrated predictor has CE → 0: its expectation is at most
// Σ_h (|B_h|/m)·√(1/(4|B_h|)) ≤ ½√(H/m), so CE < √(H/m) (twice that)
// shrinks with m. An overconfident one stays far from 0. Every predictor
// obeys CE ≥ |accuracy − mean confidence| (triangle inequality over bins).
func TestClassCalibrationErrorOfCalibratedPredictor(t *testing.T) {
	const C = 10
	for _, m := range []int{1000, 10000, 100000} {
		probs, y := calibratedSample(m, C, 1, uint64(m))
		acc, ce, err := ClassificationMetrics(probs, y, C)
		if err != nil {
			t.Fatal(err)
		}
		if tol := math.Sqrt(CELevels / float64(m)); ce > tol {
			t.Errorf("m = %d: calibrated predictor CE %v > %v", m, ce, tol)
		}
		checkCELowerBound(t, probs, acc, ce, C)
		probs, y = calibratedSample(m, C, 3, uint64(m))
		acc, ce, _ = ClassificationMetrics(probs, y, C)
		if ce < 0.2 {
			t.Errorf("m = %d: overconfident predictor CE %v (accuracy %v%%)", m, ce, acc)
		}
		checkCELowerBound(t, probs, acc, ce, C)
	}
}

func checkCELowerBound(t *testing.T, probs []float64, acc, ce float64, classes int) {
	t.Helper()
	var conf float64
	m := len(probs) / classes
	for j := range m {
		conf += slices.Max(probs[j*classes : (j+1)*classes])
	}
	if lb := math.Abs(acc/100 - conf/float64(m)); ce < lb-1e-12 {
		t.Errorf("CE %v below |accuracy − mean confidence| = %v", ce, lb)
	}
}

func TestClassificationMetricsBadInput(t *testing.T) {
	good := []float64{0.6, 0.4, 0.3, 0.7}
	y := []float64{0, 1}
	for _, c := range []struct {
		name    string
		probs   []float64
		y       []float64
		classes int
		msg     string
	}{
		{"one class", []float64{1, 1}, y, 1, "need at least 2"},
		{"no points", nil, nil, 2, "no test points"},
		{"short", good[:3], y, 2, "3 probabilities for 2 test points × 2 classes"},
		{"NaN", []float64{0.6, 0.4, math.NaN(), 0.7}, y, 2, "NaN of class 0 at test point 1"},
		{"negative", []float64{1.2, -0.2, 0.3, 0.7}, y, 2, "outside [0, 1]"},
		{"logits", []float64{0.6, 0.6, 0.3, 0.7}, y, 2, "test point 0 sum to 1.2"},
		{"label out of range", good, []float64{0, 2}, 2, "label 2 of test point 1"},
		{"label not integer", good, []float64{0.5, 1}, 2, "label 0.5"},
		{"label NaN", good, []float64{0, math.NaN()}, 2, "label NaN"},
	} {
		_, _, err := ClassificationMetrics(c.probs, c.y, c.classes)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: got %v, want an error saying %q", c.name, err, c.msg)
		}
	}
}

func TestEvaluateClassification(t *testing.T) {
	clients := []data.ClientData{{YTest: []float64{0, 1}}, {YTest: []float64{1, 1, 0, 0}}}
	preds := []ClassPrediction{
		{Probs: []float64{0.9, 0.1, 0.2, 0.8}}, // 100 %, CE |1−0.9|/2 + |1−0.8|/2 = 0.15
		// 50 %: tie → class 0 wrong at 0.5, right at 0.6, right at 1, wrong at 0.75.
		{Probs: []float64{0.5, 0.5, 0.4, 0.6, 1, 0, 0.25, 0.75}},
	}
	g, err := EvaluateClassification(preds, clients, 2)
	if err != nil {
		t.Fatal(err)
	}
	// Client 1: bins 10, 12, 20, 15 with one point each:
	// CE = ¼(|0 − 0.5| + |1 − 0.6| + |1 − 1| + |0 − 0.75|) = 0.4125.
	if !slices.Equal(g.Accuracy, []float64{100, 50}) || math.Abs(g.CE[0]-0.15) > 1e-15 ||
		math.Abs(g.CE[1]-0.4125) > 1e-15 ||
		g.MeanAccuracy != 75 || math.Abs(g.MeanCE-(0.15+0.4125)/2) > 1e-15 {
		t.Fatalf("got %+v", g)
	}
	if _, err := EvaluateClassification(preds[:1], clients, 2); err == nil {
		t.Fatal("count mismatch accepted")
	}
	preds[1].Probs = preds[1].Probs[:6]
	if _, err := EvaluateClassification(preds, clients, 2); err == nil ||
		!strings.HasPrefix(err.Error(), "client 1: ") {
		t.Fatalf("bad client: %v", err)
	}
}

func TestWeightedMean(t *testing.T) {
	// Accuracies 50 % on 2 test images and 100 % on 6: the pooled accuracy
	// is 7/8 correct.
	got, err := WeightedMean([]float64{50, 100}, []float64{2, 6})
	if err != nil || math.Abs(got-87.5) > 1e-12 {
		t.Errorf("WeightedMean = %v, %v; want 87.5", got, err)
	}
	if got, err := WeightedMean(nil, nil); err != nil || !math.IsNaN(got) {
		t.Errorf("empty: %v, %v; want NaN", got, err)
	}
	for _, ws := range [][]float64{{1}, {0, 0}, {-1, 2}, {math.NaN(), 1}, {math.Inf(1), 1}} {
		if _, err := WeightedMean([]float64{1, 2}, ws); err == nil {
			t.Errorf("weights %v accepted", ws)
		}
	}
}

// WeightedAccuracy weights each client's accuracy by its test-set size,
// not its training-set size: the group's fraction of test images right.
func TestWeightedAccuracy(t *testing.T) {
	clients := []data.ClientData{
		{Y: make([]float64, 9), YTest: make([]float64, 2)},
		{Y: make([]float64, 1), YTest: make([]float64, 6)},
	}
	g := ClassGroupMetrics{Accuracy: []float64{50, 100}}
	got, err := WeightedAccuracy(g, clients)
	if err != nil || math.Abs(got-87.5) > 1e-12 {
		t.Errorf("WeightedAccuracy = %v, %v; want 87.5 (7 of 8 test images)", got, err)
	}
	if _, err := WeightedAccuracy(g, clients[:1]); err == nil {
		t.Error("2 accuracies for 1 client accepted")
	}
	if got, err := WeightedAccuracy(ClassGroupMetrics{}, nil); err != nil || !math.IsNaN(got) {
		t.Errorf("empty group: %v, %v; want NaN", got, err)
	}
}

// Specialisation by hand: two particles, four clients of two modes.
func TestSpecialisationHandComputed(t *testing.T) {
	w := [][]float64{{0.9, 0.1}, {0.7, 0.3}, {0.2, 0.8}, {0.4, 0.6}}
	modes := []int{0, 0, 1, 1}
	s, err := Specialisation(w, modes)
	if err != nil {
		t.Fatal(err)
	}
	// Particle 0: mode 0 holds 1.6, mode 1 0.6 → 1.6; particle 1: 0.4
	// against 1.4 → 1.4; (1.6 + 1.4)/4 = 0.75. Chance: 2/4.
	if math.Abs(s.Purity-0.75) > 1e-15 || s.Chance != 0.5 {
		t.Fatalf("got %+v, want purity 0.75, chance 0.5", *s)
	}
	// Perfect specialisation, and none (every client weights alike), with
	// unbalanced modes: chance is the largest mode's share.
	if s, _ := Specialisation([][]float64{{1, 0}, {1, 0}, {0, 1}}, []int{3, 3, 7}); math.Abs(s.Purity-1) > 1e-15 ||
		math.Abs(s.Chance-2.0/3) > 1e-15 {
		t.Fatalf("perfect: got %+v", *s)
	}
	if s, _ := Specialisation([][]float64{{0.3, 0.7}, {0.3, 0.7}, {0.3, 0.7}}, []int{3, 3, 7}); math.Abs(
		s.Purity-s.Chance) > 1e-15 {
		t.Fatalf("no specialisation: purity %v, chance %v", s.Purity, s.Chance)
	}
	// One mode: nothing to measure.
	if s, err := Specialisation([][]float64{{0.5, 0.5}}, []int{0}); s != nil || err != nil {
		t.Fatalf("one mode: %v, %v", s, err)
	}
	for _, bad := range []struct {
		w     [][]float64
		modes []int
		want  string
	}{
		{[][]float64{{1}, {1}}, []int{0}, "2 clients' weights for 1 modes"},
		{[][]float64{{1, 0}, {1}}, []int{0, 1}, "client 1 has 1 weights"},
		{[][]float64{{math.NaN(), 1}, {1, 0}}, []int{0, 1}, "weight 0 is NaN"},
		{[][]float64{{}, {}}, []int{0, 1}, "has 0 weights"},
	} {
		if _, err := Specialisation(bad.w, bad.modes); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%v %v: error %v, want %q", bad.w, bad.modes, err, bad.want)
		}
	}
}

// Evaluate keeps the mixture weights and measures the modes' purity only
// when every prediction is a mixture.
func TestEvaluateMixtureWeights(t *testing.T) {
	cl := []data.ClientData{{YTest: []float64{0, 1}, Mode: 0}, {YTest: []float64{0, 1}, Mode: 1}}
	preds := []Prediction{{Mean: []float64{0, 1}, Weights: []float64{1, 0}},
		{Mean: []float64{0, 1}, Weights: []float64{0.25, 0.75}}}
	g, err := Evaluate(preds, cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Weights) != 2 || g.Weights[1][1] != 0.75 || g.Modes == nil || math.Abs(g.Modes.Purity-0.875) > 1e-15 ||
		g.Modes.Chance != 0.5 {
		t.Fatalf("weights %v, modes %+v; want purity (1 + 0.75)/2", g.Weights, g.Modes)
	}
	preds[1].Weights = nil
	if g, err := Evaluate(preds, cl); err != nil || g.Weights != nil || g.Modes != nil {
		t.Fatalf("a point predictor among them: weights %v, modes %v, err %v", g.Weights, g.Modes, err)
	}
}

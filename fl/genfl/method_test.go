package genfl

import (
	"math"
	"testing"

	"github.com/pacpfl/pacpfl/data"
)

func TestPredictProbs(t *testing.T) {
	a := tinyArch
	c := tinyData(a, 13, 2)
	_, q := tinyPosterior(t, a, 4)
	probs, err := PredictProbs(q, a, c.X, 7, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i := range c.Y {
		s := 0.0
		for _, v := range probs[i*3 : i*3+3] {
			s += v
		}
		if math.Abs(s-1) > 1e-12 {
			t.Fatalf("row %d sums to %v", i, s)
		}
	}
	// σ → 0: the deterministic network's softmax.
	sharp := q.Clone()
	for j := range sharp.Rho {
		sharp.Rho[j] = -60
	}
	probs, _ = PredictProbs(sharp, a, c.X, 3, 1)
	n := newNet(a, newWorker(a, false).net.bl)
	logits := n.forward(sharp.Mu, c.X, c.M(), 0, nil)
	for i := range c.Y {
		z := logits[i*3 : i*3+3]
		mx := math.Max(z[0], math.Max(z[1], z[2]))
		s := math.Exp(z[0]-mx) + math.Exp(z[1]-mx) + math.Exp(z[2]-mx)
		for k := range 3 {
			if want := math.Exp(z[k]-mx) / s; math.Abs(probs[i*3+k]-want) > 1e-9 {
				t.Fatalf("row %d class %d: %v, softmax %v", i, k, probs[i*3+k], want)
			}
		}
	}
	if _, err := PredictProbs(q, a, c.X[:5], 1, 1); err == nil {
		t.Error("ragged input accepted")
	}
}

// RunMethod on a small personalised task: accuracy above chance for every
// client.
func TestRunMethod(t *testing.T) {
	ds := &data.Dataset{Name: "synth", D: 6, Classes: 3}
	for k := range 4 {
		tr, te := synthTask(200, uint64(10+k)), synthTask(100, uint64(20+k))
		y := func(c Client) []float64 {
			out := make([]float64, len(c.Y))
			for i, v := range c.Y {
				out[i] = float64(v)
			}
			return out
		}
		ds.Existing = append(ds.Existing, data.ClientData{X: tr.X, Y: y(tr), XTest: te.X, YTest: y(te)})
	}
	o := Options{Arch: synthArch, Prior: LearntPriorKind, SigmaPrior: 0.1, Dropout: 0.1,
		PriorFed: Federation{Rounds: 30, Fraction: 0.5, LocalEpochs: 2, Batch: 20, LR: 0.005, Momentum: 0.99,
			Seed: 1},
		PosteriorFed: Federation{Fraction: 1, Batch: 20, LR: 0.05, Momentum: 0.9, Seed: 2}, PersonalEpochs: 3,
		Objective: ObjectiveConfig{Objective: F2, KLPenalty: 1, Delta: 0.05, PMin: 1e-4}, Seed: 3}
	r, err := RunMethod(ds, o, 5)
	if err != nil {
		t.Fatal(err)
	}
	if r.Method != MethodGenFL || r.ExistingClass == nil || r.NewClass != nil {
		t.Fatalf("result %+v", r)
	}
	for k, acc := range r.ExistingClass.Accuracy {
		if acc < 60 {
			t.Errorf("client %d: accuracy %.1f%%", k, acc)
		}
	}
	if ce := r.ExistingClass.MeanCE; !(ce >= 0 && ce < 0.3) {
		t.Errorf("calibration error %v", ce)
	}
}

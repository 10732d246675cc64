package lml

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pacpfl/pacpfl/conv"
)

// LogZ with as many samples as the estimator draws at once and all rows in
// one chunk is the estimate (38) itself; more rows than a chunk sum the same.
func TestBNNLogZMatchesLML(t *testing.T) {
	m := BNN{Arch: ArchMLP, InC: 1, InH: 3, InW: 3, Hidden: 5, Classes: 4}
	for _, rows := range []int{7, 600} {
		rng := rand.New(rand.NewPCG(1, uint64(rows)))
		phi := randomPhi(m, rng)
		X, y := randomBatch(m, rng, rows)
		e, err := NewBNNEstimator(m, 3, conv.Options{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		lz, err := e.LogZ(phi, X, y, 0.5, Loss{}, 3, rand.New(rand.NewPCG(2, 3)))
		if err != nil {
			t.Fatal(err)
		}
		lml, err := e.LML(phi, X, y, 0.5, rand.New(rand.NewPCG(2, 3)), nil)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(lz-lml) > 1e-12*math.Abs(lml) {
			t.Errorf("%d rows: LogZ %.17g, LML %.17g", rows, lz, lml)
		}
	}
}

// The bounded losses, checked at a point-mass prior against the hand-written
// MLP: s = −scale·Σ ℓ(μ, z).
func TestBNNLogZBoundedLosses(t *testing.T) {
	m := BNN{Arch: ArchMLP, InC: 1, InH: 2, InW: 2, Hidden: 6, Classes: 3}
	rng := rand.New(rand.NewPCG(4, 5))
	phi := randomPhi(m, rng)
	nw := m.NumWeights()
	for i := range nw {
		phi[i] *= 6 // confident predictions, so that the clip bites
		phi[nw+i] = -80
	}
	X, y := randomBatch(m, rng, 40)
	lps := mlpLogProbs(m, phi[:nw], X)
	e, err := NewBNNEstimator(m, 2, conv.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	const pmin = 0.05
	clipped, wrong := 0.0, 0.0
	for r, lp := range lps {
		clipped += math.Min(-lp[int(y[r])], -math.Log(pmin))
		best := 0
		for c, v := range lp {
			if v > lp[best] {
				best = c
			}
		}
		if best != int(y[r]) {
			wrong++
		}
	}
	if clipped == 0 || wrong == 0 {
		t.Fatal("degenerate test data")
	}
	for _, c := range []struct {
		loss Loss
		want float64
	}{{Loss{Kind: ClippedNLL, PMin: pmin}, -2 * clipped}, {Loss{Kind: ZeroOne}, -2 * wrong}} {
		got, err := e.LogZ(phi, X, y, 2, c.loss, 5, rng)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-c.want) > 1e-9*math.Abs(c.want) {
			t.Errorf("loss %+v: %v, want %v", c.loss, got, c.want)
		}
	}
	if a, b := (Loss{Kind: ClippedNLL, PMin: pmin}).Range(); a != 0 || math.Abs(b-math.Log(1/pmin)) > 1e-15 {
		t.Errorf("clipped NLL range [%v, %v]", a, b)
	}
	if _, err := e.LogZ(phi, X, y, 1, Loss{Kind: ClippedNLL}, 2, rng); err == nil {
		t.Error("clipped NLL without a floor: no error")
	}
}

// The predictive is the α-weighted mixture of the particles' softmaxes,
// recomputed here by hand from the fitted particles; rows sum to 1.
func TestBNNPredictMixture(t *testing.T) {
	m := BNN{Arch: ArchMLP, InC: 1, InH: 3, InW: 2, Hidden: 5, Classes: 3}
	rng := rand.New(rand.NewPCG(6, 7))
	const k = 2
	phis := append(randomPhi(m, rng), randomPhi(m, rng)...)
	X, y := randomBatch(m, rng, 30)
	p, err := NewBNNPredictor(m, BNNPosteriorOptions{Particles: 3, Steps: 20, Batch: 8, AlphaSamples: 7},
		conv.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Fit(phis, X, y, rng); err != nil {
		t.Fatal(err)
	}
	if a := p.Alpha(); math.Abs(a[0]+a[1]-1) > 1e-12 || math.Abs(a[0]-1/(1+math.Exp(p.LogZ()[1]-p.LogZ()[0]))) > 1e-12 {
		t.Errorf("α = %v from ln Z = %v", a, p.LogZ())
	}
	Xt, _ := randomBatch(m, rng, 300) // more than one prediction chunk
	probs := make([]float64, 300*3)
	if err := p.Predict(Xt, probs); err != nil {
		t.Fatal(err)
	}
	nw := m.NumWeights()
	for κ := range k {
		th := p.Particles(κ)
		for s := range 3 {
			for r, lp := range mlpLogProbs(m, th[s*nw:(s+1)*nw], Xt) {
				for c, v := range lp {
					probs[r*3+c] -= p.Alpha()[κ] / 3 * math.Exp(v)
				}
			}
		}
	}
	for i, v := range probs {
		if math.Abs(v) > 1e-12 {
			t.Fatalf("probability %d differs from the hand-computed mixture by %v", i, v)
		}
	}
}

// SVGD from the data-free prior fits a learnable problem (labels the arg
// max of three fixed linear functions of the pixels): the posterior
// particles classify fresh data of the same rule well above chance.
func TestBNNPosteriorLearns(t *testing.T) {
	m := BNN{Arch: ArchMLP, InC: 1, InH: 4, InW: 4, Hidden: 16, Classes: 3}
	rng := rand.New(rand.NewPCG(8, 9))
	w := randomNoise(rng, 3*16)
	rule := func(n int) (X, y []float64) {
		X, y = randomBatch(m, rng, n)
		for r := range y {
			best, bv := 0, math.Inf(-1)
			for c := range 3 {
				v := 0.0
				for i := range 16 {
					v += w[c*16+i] * (X[r*16+i] - 0.5)
				}
				if v > bv {
					best, bv = c, v
				}
			}
			y[r] = float64(best)
		}
		return X, y
	}
	X, y := rule(300)
	Xt, yt := rule(400)
	p, err := NewBNNPredictor(m, BNNPosteriorOptions{Steps: 300, LR: 1e-2, Batch: 50}, conv.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Fit(m.HyperPriorMean(), X, y, rand.New(rand.NewPCG(10, 11))); err != nil {
		t.Fatal(err)
	}
	probs := make([]float64, len(yt)*3)
	if err := p.Predict(Xt, probs); err != nil {
		t.Fatal(err)
	}
	hits := 0
	for r := range yt {
		best := 0
		for c := range 3 {
			if probs[r*3+c] > probs[r*3+best] {
				best = c
			}
		}
		if best == int(yt[r]) {
			hits++
		}
	}
	acc := float64(hits) / float64(len(yt))
	t.Logf("test accuracy after 300 SVGD steps: %.3f", acc)
	if acc < 0.85 {
		t.Errorf("SVGD did not learn: test accuracy %.3f (chance 1/3)", acc)
	}
}

func TestBNNPredictorErrors(t *testing.T) {
	m := tinyModels()[0]
	for _, o := range []BNNPosteriorOptions{{Particles: -1}, {Steps: -1}, {LR: math.NaN()}, {Batch: -2},
		{AlphaSamples: -1}} {
		if _, err := NewBNNPredictor(m, o, conv.Options{}); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
	p, err := NewBNNPredictor(m, BNNPosteriorOptions{Steps: 1}, conv.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	X, y := randomBatch(m, rng, 4)
	if err := p.Predict(X, make([]float64, 12)); err == nil {
		t.Error("Predict before Fit: no error")
	}
	if err := p.Fit(randomPhi(m, rng)[1:], X, y, rng); err == nil {
		t.Error("ragged particle matrix: no error")
	}
	phi := randomPhi(m, rng)
	if err := p.Fit(phi, X, []float64{0, 1, 5, 0}, rng); err == nil {
		t.Error("label 5 of 3 classes: no error")
	}
	if err := p.Fit(phi, X, y, rng); err != nil {
		t.Fatal(err)
	}
	if err := p.Predict(X, make([]float64, 11)); err == nil {
		t.Error("short probability buffer: no error")
	}
}

// A predictive whose softmax underflows to exactly 0 in its tail (a
// point-mass prior with huge weights) still returns probabilities ≥
// ProbFloor, so that −ln p is finite, with rows summing to 1 and every
// probability that did not underflow unchanged to rounding; non-finite
// weights are an error, not NaN probabilities.
func TestBNNPredictFloorsProbabilities(t *testing.T) {
	m := BNN{Arch: ArchMLP, InC: 1, InH: 2, InW: 2, Hidden: 6, Classes: 3}
	rng := rand.New(rand.NewPCG(12, 13))
	phi := randomPhi(m, rng)
	nw := m.NumWeights()
	for i := range nw {
		phi[i] *= 400
		phi[nw+i] = -80
	}
	X, y := randomBatch(m, rng, 20)
	p, err := NewBNNPredictor(m, BNNPosteriorOptions{Particles: 2, AlphaSamples: 2}, conv.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Fit(phi, X, y, rng); err != nil {
		t.Fatal(err)
	}
	probs := make([]float64, len(y)*3)
	if err := p.Predict(X, probs); err != nil {
		t.Fatal(err)
	}
	raw := make([]float64, len(probs))
	th := p.Particles(0)
	for s := range 2 {
		for r, lp := range mlpLogProbs(m, th[s*nw:(s+1)*nw], X) {
			for c, v := range lp {
				raw[r*3+c] += math.Exp(v) / 2
			}
		}
	}
	underflow := 0
	for r := range y {
		sum, logLoss := 0.0, 0.0
		for c := range 3 {
			i := r*3 + c
			v := probs[i]
			if raw[i] == 0 {
				underflow++
			}
			if !(v >= ProbFloor) {
				t.Fatalf("row %d class %d: probability %v below the floor %v (raw %v)", r, c, v, ProbFloor, raw[i])
			}
			if raw[i] > 1e-10 && math.Abs(v-raw[i]) > 1e-13*raw[i]+1e-15 {
				t.Errorf("row %d class %d: probability %v, the mixture is %v", r, c, v, raw[i])
			}
			sum += v
			logLoss -= math.Log(v)
		}
		if math.Abs(sum-1) > 1e-14 || math.IsInf(logLoss, 0) || math.IsNaN(logLoss) {
			t.Errorf("row %d: sum %v, Σ −ln p = %v", r, sum, logLoss)
		}
	}
	if underflow == 0 {
		t.Fatal("degenerate test: no probability underflowed to 0")
	}
	t.Logf("%d of %d probabilities underflowed and were floored", underflow, len(raw))
	p.Particles(0)[0] = math.NaN()
	if err := p.Predict(X, probs); err == nil {
		t.Error("NaN weights: no error")
	}
}

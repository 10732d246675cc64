package fedvi

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/pacpfl/pacpfl/data"
)

// TestPlainGradient: FedAvg's network E → dense trained by Update moves
// the weights by −lr·∇ of the mean cross-entropy; one step on one batch
// against central differences of the loss (dropout off).
func TestPlainGradient(t *testing.T) {
	a := tiny
	a.Drop1, a.Drop2 = -1, -1
	p, err := NewPlain(a)
	if err != nil {
		t.Fatal(err)
	}
	w := make([]float64, p.NumParams())
	p.Init(w, rand.New(rand.NewPCG(1, 1)))
	for i := range w {
		if w[i] == 0 {
			w[i] = 0.6
		}
	}
	rng := rand.New(rand.NewPCG(2, 2))
	x := randImages(rng, 6)
	y := []float64{0, 1, 2, 0, 1, 2}
	loss := func(v []float64) float64 {
		pr, err := p.Predict(v, x.Data)
		if err != nil {
			t.Fatal(err)
		}
		s := 0.0
		for i, l := range y {
			s -= math.Log(pr[i*3+int(l)])
		}
		return s / 6
	}
	const lr = 1e-3
	out := make([]float64, len(w))
	if err := p.Update(w, out, x.Data, y, 1, 6, lr, rng); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(w); i += max(1, len(w)/40) {
		an := (w[i] - out[i]) / lr
		old := w[i]
		const h = 1e-6
		w[i] = old + h
		lp := loss(w)
		w[i] = old - h
		lm := loss(w)
		w[i] = old
		fd := (lp - lm) / (2 * h)
		if math.Abs(fd-an) > 1e-6*math.Max(1, math.Abs(fd)) {
			t.Errorf("weight %d: update/lr %.10g, finite difference %.10g", i, an, fd)
		}
	}
}

// TestFedAvgLearnsAndFineTunes: FedAvg on the synthetic set is far above
// chance, deterministic across GOMAXPROCS, and FedAvg+FT is reported for
// both groups from the same global model.
func TestFedAvgLearnsAndFineTunes(t *testing.T) {
	ds := synthetic(t, 8, 3, 1)
	o := tinyOptions()
	ft := FineTune{Epochs: 2, Batch: 8, LR: 0.05}
	prev := runtime.GOMAXPROCS(1)
	p1, f1, err := TrainFedAvg(ds, o, ft)
	runtime.GOMAXPROCS(2)
	if err != nil {
		t.Fatal(err)
	}
	p2, f2, err := TrainFedAvg(ds, o, ft)
	runtime.GOMAXPROCS(prev)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p1.Theta, p2.Theta) || f1.Final().ExistingWeighted != f2.Final().ExistingWeighted ||
		f1.Final().NewWeighted != f2.Final().NewWeighted {
		t.Fatal("FedAvg differs between GOMAXPROCS 1 and 2")
	}
	fp, ff := p1.Final(), f1.Final()
	t.Logf("FedAvg %.1f%% / %.1f%%, FedAvg+FT %.1f%% / %.1f%%", fp.ExistingWeighted, fp.NewWeighted,
		ff.ExistingWeighted, ff.NewWeighted)
	if fp.ExistingWeighted < 70 || fp.NewWeighted < 70 || ff.ExistingWeighted < 70 || ff.NewWeighted < 70 {
		t.Error("accuracy below 70% (chance 33%)")
	}
	if len(p1.History) != o.EvalLast || len(f1.History) != 1 || f1.Final().Round != o.Rounds {
		t.Errorf("%d FedAvg evaluations, %d FedAvg+FT (round %d)", len(p1.History), len(f1.History), f1.Final().Round)
	}
	// Momentum 0, server step 1 and one client: the global model is that
	// client's update.
	ds.Existing = ds.Existing[:1]
	o.Rounds, o.Momentum, o.ServerLR, o.EvalLast = 1, 0, 1, 0
	r, _, err := TrainFedAvg(ds, o, FineTune{})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := NewPlain(o.Arch)
	w := make([]float64, p.NumParams())
	p.Init(w, rand.New(rand.NewPCG(o.Seed, tagAvgInit)))
	out := make([]float64, len(w))
	if err := p.Update(w, out, ds.Existing[0].X, ds.Existing[0].Y, o.LocalEpochs, o.Batch, o.ClientLR,
		rand.New(rand.NewPCG(o.Seed, data.StreamID(tagAvgRound, 0, 0)))); err != nil {
		t.Fatal(err)
	}
	d := 0.0
	for j := range out {
		d = math.Max(d, math.Abs(out[j]-r.Theta[j])) // θ + (θ_k − θ) rounds
	}
	if d > 1e-13 {
		t.Errorf("one round of FedAvg with one client is not that client's update (off by %g)", d)
	}
	if _, _, err := TrainFedAvg(ds, o, FineTune{Epochs: 1}); err == nil {
		t.Error("fine-tuning with batch 0 accepted")
	}
}

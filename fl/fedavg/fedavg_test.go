package fedavg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/internal/flatnet"
	"github.com/pacpfl/pacpfl/lml"
)

var tinyArch = lml.BNN{Arch: lml.ArchMLP, InC: 1, InH: 1, InW: 2, Hidden: 4, Classes: 2}

// FedAvg with one client, one round and one local step on the whole data
// (b ≥ m) is one SGD step w⁰ − η ∇CE(w⁰) from the initialisation.
func TestOneClientOneStepIsSGD(t *testing.T) {
	ds := data.Blobs(1, 12, 5, 2)
	ds.New = nil
	o := DefaultOptions()
	o.Arch, o.Rounds, o.LocalSteps, o.Batch, o.EvalLast, o.FineTune, o.Seed = tinyArch, 1, 1, 100, 1, 0, 9
	r, err := Run(ds, o)
	if err != nil {
		t.Fatal(err)
	}
	net, err := flatnet.New(tinyArch)
	if err != nil {
		t.Fatal(err)
	}
	w := make([]float64, net.NumWeights())
	if err := flatnet.InitUniform(tinyArch, w, rand.New(rand.NewPCG(9, tagInit))); err != nil {
		t.Fatal(err)
	}
	g := make([]float64, len(w))
	if _, err := net.LossGrad(w, ds.Existing[0].X, ds.Existing[0].Y, g); err != nil {
		t.Fatal(err)
	}
	for j := range w {
		if want := w[j] - o.LR*g[j]; math.Abs(r.Global[j]-want) > 1e-15 {
			t.Fatalf("w[%d] = %v, one SGD step %v", j, r.Global[j], want)
		}
	}
	if len(r.History) != 1 || !sameRounds([]fl.RoundEval{r.BestGM}, r.History) || r.GM.MeanAccuracy != r.History[0].GM {
		t.Errorf("history %v, best %v, final %v", r.History, r.BestGM, r.GM.MeanAccuracy)
	}
}

// FedProx with μ = 0 is FedAvg, bit for bit; μ > 0 changes the model and
// pulls the local weights towards the global ones.
func TestFedProxZeroIsFedAvg(t *testing.T) {
	ds := data.Blobs(3, 40, 10, 3)
	o := DefaultOptions()
	o.Arch, o.Rounds, o.LocalSteps, o.Batch, o.ClientsPerRound, o.EvalLast, o.FineTune, o.Seed = tinyArch, 3, 4, 8, 2,
		2, 0, 4
	avg, err := Run(ds, o)
	if err != nil {
		t.Fatal(err)
	}
	p := o
	p.Mu = 0
	prox, err := Run(ds, p)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(avg.Global, prox.Global) || !sameRounds(avg.History, prox.History) {
		t.Error("FedProx with μ = 0 differs from FedAvg")
	}
	// The proximal step by hand: w ← w − η (g + μ (w − start)).
	k, err := newWorker(tinyArch)
	if err != nil {
		t.Fatal(err)
	}
	start := slices.Clone(avg.Global)
	w := slices.Clone(start)
	for j := range w {
		w[j] += 0.1 * float64(j%3)
	}
	w0 := slices.Clone(w)
	p.Mu = 0.5
	c := &ds.Existing[0]
	if _, err := k.step(w, start, c.X, c.Y, p.LR, p.Mu); err != nil {
		t.Fatal(err)
	}
	g := make([]float64, len(w))
	if _, err := k.net.LossGrad(w0, c.X, c.Y, g); err != nil {
		t.Fatal(err)
	}
	for j := range w {
		want := w0[j] - p.LR*(g[j]+p.Mu*(w0[j]-start[j]))
		if math.Abs(w[j]-want) > 1e-15 {
			t.Fatalf("proximal step w[%d] = %v, by hand %v", j, w[j], want)
		}
	}
	if a := testing.AllocsPerRun(20, func() { _, _ = k.step(w, start, c.X, c.Y, p.LR, p.Mu) }); a != 0 {
		t.Errorf("a local step allocates %v times", a)
	}
}

// A run, FedAvg+FT included, depends on its seed only.
func TestRunDeterministicAndLearns(t *testing.T) {
	ds := data.Blobs(4, 60, 100, 5)
	o := DefaultOptions()
	o.Arch, o.Rounds, o.LocalSteps, o.Batch, o.ClientsPerRound, o.EvalLast, o.FineTune, o.Seed = tinyArch, 15, 5, 16, 3,
		3, 5, 6
	o.LR = 0.1
	run := func(procs int) *Result {
		prev := runtime.GOMAXPROCS(procs)
		defer runtime.GOMAXPROCS(prev)
		r, err := Run(ds, o)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a, b := run(1), run(2)
	if !slices.Equal(a.Global, b.Global) || !sameRounds(a.History, b.History) ||
		!slices.Equal(a.FT.Accuracy, b.FT.Accuracy) ||
		!slices.Equal(a.NewFT.Accuracy, b.NewFT.Accuracy) {
		t.Fatal("GOMAXPROCS 1 and 2 differ")
	}
	if a.GM.MeanAccuracy < 85 || a.FT.MeanAccuracy < 85 || a.NewGM == nil {
		t.Errorf("GM %.1f %%, FedAvg+FT %.1f %%", a.GM.MeanAccuracy, a.FT.MeanAccuracy)
	}
}

func TestBadSettings(t *testing.T) {
	ds := data.Blobs(2, 10, 5, 1)
	for name, f := range map[string]func(*Options){
		"η = 0":      func(o *Options) { o.LR = 0 },
		"μ < 0":      func(o *Options) { o.Mu = -1 },
		"b = 0":      func(o *Options) { o.Batch = 0 },
		"T < 0":      func(o *Options) { o.Rounds = -1 },
		"784 inputs": func(o *Options) { o.Arch = lml.BNN{} },
	} {
		o := DefaultOptions()
		o.Arch = tinyArch
		f(&o)
		if _, err := Run(ds, o); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
	o := DefaultOptions()
	o.Arch, o.Rounds, o.LR = tinyArch, 3, 1e300
	if _, err := Run(ds, o); err == nil {
		t.Error("a diverging step ran without an error")
	}
}

// sameRounds reports whether two histories hold the same bits (NaN for
// the figures FedAvg has not).
func sameRounds(a, b []fl.RoundEval) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

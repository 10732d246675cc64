package pfedbayes

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl/internal/meanfield"
	"github.com/pacpfl/pacpfl/lml"
)

// tinyArch is 2 inputs → 3 hidden → 2 classes: W1 [3,2], b1 [3], W2 [2,3], b2 [2].
var tinyArch = lml.BNN{Arch: lml.ArchMLP, InC: 1, InH: 1, InW: 2, Hidden: 3, Classes: 2}

// One client step against a hand computation: the network's forward and
// backward written out for the tiny MLP, the reparameterised gradients of
// (pFB-27) and the two SGD steps (pFB-27, pFB-28) with the KL gradients of
// docs/math.md §8.1.
func TestStepByHand(t *testing.T) {
	w, err := newWorker(tinyArch)
	if err != nil {
		t.Fatal(err)
	}
	const nw = 3*2 + 3 + 2*3 + 2
	if w.net.NumWeights() != nw {
		t.Fatalf("%d weights", w.net.NumWeights())
	}
	r := rand.New(rand.NewPCG(7, 7))
	vi, vw := make([]float64, 2*nw), make([]float64, 2*nw)
	for j := 0; j < nw; j++ {
		vi[j], vw[j] = r.NormFloat64(), r.NormFloat64()
		vi[nw+j], vw[nw+j] = -1+0.5*r.NormFloat64(), -1+0.5*r.NormFloat64()
	}
	x := []float64{0.5, -1, 1.5, 0.25, -0.7, 0.9}
	y := []float64{1, 0, 1}
	const n = 40 // the client's data size in (n/b)
	o := Options{Zeta: 3, LR1: 0.01, LR2: 0.02, MC: 1, NoiseStd: 1}
	mi, ri := slices.Clone(vi[:nw]), slices.Clone(vi[nw:])
	mw, rw := slices.Clone(vw[:nw]), slices.Clone(vw[nw:])
	// The same step with Adam (fresh moments) on copies, same draws.
	wa, err := newWorker(tinyArch)
	if err != nil {
		t.Fatal(err)
	}
	via, vwa := slices.Clone(vi), slices.Clone(vw)
	wa.begin(via, vwa)
	fresh := func() *adamState { return &adamState{m: make([]float64, 2*nw), s: make([]float64, 2*nw)} }
	wa.adamQ, wa.adamW = fresh(), fresh()
	ns := r.Uint64()
	wa.nrm = meanfield.NewNormals(rand.New(rand.NewPCG(ns, 1)))
	if _, err := wa.step(x, y, n, &o); err != nil {
		t.Fatal(err)
	}
	w.begin(vi, vw)
	w.nrm = meanfield.NewNormals(rand.New(rand.NewPCG(ns, 1)))
	if _, err := w.step(x, y, n, &o); err != nil {
		t.Fatal(err)
	}
	eps := w.eps
	sp := func(u float64) float64 { return math.Log1p(math.Exp(u)) }
	sg := func(u float64) float64 { return 1 / (1 + math.Exp(-u)) }
	th := make([]float64, nw)
	for j := range th {
		th[j] = mi[j] + sp(ri[j])*eps[j]
	}
	g := handGrad(th, x, y)
	for j := 0; j < nw; j++ {
		// Personalised step: ∇Ω = n·∇CE through θ = μ + σ g, plus ζ ∇KL.
		sq, sw := sp(ri[j]), sp(rw[j])
		d := mi[j] - mw[j]
		dmu := float64(n)*g[j] + o.Zeta*d/(sw*sw)
		drho := (float64(n)*g[j]*eps[j] + o.Zeta*(-1/sq+sq/(sw*sw))) * sg(ri[j])
		wantMi, wantRi := mi[j]-o.LR1*dmu, ri[j]-o.LR1*drho
		// Localised global step on KL(q_{v_i}‖w) at the new v_i.
		sq = sp(wantRi)
		d = wantMi - mw[j]
		wantMw := mw[j] - o.LR2*(-d/(sw*sw))
		wantRw := rw[j] - o.LR2*(1/sw-(sq*sq+d*d)/(sw*sw*sw))*sg(rw[j])
		// Adam's first step is η g/(|g| + ε) (bias-corrected moments g, g²).
		adam := func(eta, g float64) float64 { return eta * g / (math.Abs(g) + 1e-8) }
		aMi, aRi := mi[j]-adam(o.LR1, dmu), ri[j]-adam(o.LR1, drho)
		sq = sp(aRi)
		d = aMi - mw[j]
		aMw := mw[j] - adam(o.LR2, -d/(sw*sw))
		aRw := rw[j] - adam(o.LR2, (1/sw-(sq*sq+d*d)/(sw*sw*sw))*sg(rw[j]))
		for _, c := range []struct {
			name      string
			got, want float64
		}{{"μ_i", vi[j], wantMi}, {"ρ_i", vi[nw+j], wantRi}, {"μ_w", vw[j], wantMw}, {"ρ_w", vw[nw+j], wantRw},
			{"Adam μ_i", via[j], aMi}, {"Adam ρ_i", via[nw+j], aRi}, {"Adam μ_w", vwa[j], aMw},
			{"Adam ρ_w", vwa[nw+j], aRw}} {
			if math.Abs(c.got-c.want) > 1e-12*math.Max(1, math.Abs(c.want)) {
				t.Errorf("%s[%d] = %.15g, by hand %.15g", c.name, j, c.got, c.want)
			}
		}
	}
	// σ and σ′ follow the new ρ's.
	for j := 0; j < nw; j++ {
		if math.Abs(w.sigQ[j]-sp(vi[nw+j])) > 1e-15 || math.Abs(w.sigW[j]-sp(vw[nw+j])) > 1e-15 {
			t.Fatalf("σ of weight %d not refreshed", j)
		}
	}
	// The step does not allocate, with either optimiser.
	for _, k := range []*worker{w, wa} {
		if a := testing.AllocsPerRun(20, func() {
			if _, err := k.step(x, y, n, &o); err != nil {
				t.Fatal(err)
			}
		}); a != 0 {
			t.Errorf("a client step allocates %v times", a)
		}
	}
}

// K draws average the data term: with K = 2 the step equals the mean of
// the gradients of the two draws it made.
func TestStepMonteCarloDraws(t *testing.T) {
	w, err := newWorker(tinyArch)
	if err != nil {
		t.Fatal(err)
	}
	nw := w.net.NumWeights()
	vi, vw := make([]float64, 2*nw), make([]float64, 2*nw)
	for j := 0; j < nw; j++ {
		vi[j], vw[j] = 0.3*float64(j%5)-0.5, 0.1*float64(j%3)
		vi[nw+j], vw[nw+j] = -2, -2.5
	}
	x, y := []float64{0.5, -1, 1.5, 0.25}, []float64{1, 0}
	w.begin(vi, vw)
	w.nrm = meanfield.NewNormals(rand.New(rand.NewPCG(1, 2)))
	o := Options{Zeta: 1, LR1: 1e-3, LR2: 1e-3, MC: 2, NoiseStd: 1}
	mi := slices.Clone(vi[:nw])
	// Replay the two draws by hand through the same network.
	probe := meanfield.NewNormals(rand.New(rand.NewPCG(1, 2)))
	want := make([]float64, nw)
	g := make([]float64, nw)
	th := make([]float64, nw)
	for range 2 {
		for j := range th {
			th[j] = mi[j] + math.Log1p(math.Exp(vi[nw+j]))*probe.Norm()
		}
		if _, err := w.net.LossGrad(th, x, y, g); err != nil {
			t.Fatal(err)
		}
		for j := range want {
			want[j] += 10 * g[j] / 2 // n/K with n = 10
		}
	}
	if _, err := w.step(x, y, 10, &o); err != nil {
		t.Fatal(err)
	}
	for j := range want {
		if math.Abs(w.gMu[j]-want[j]) > 1e-12 {
			t.Fatalf("∂/∂μ[%d] of the data term %v, mean of the draws %v", j, w.gMu[j], want[j])
		}
	}
}

// A run depends on its seed only: GOMAXPROCS 1 and 2 give the same
// models and scores; with S < N the server averages S of the clients.
func TestRunDeterministic(t *testing.T) {
	ds := data.Blobs(4, 30, 20, 3)
	o := Options{Arch: tinyArch, Rho0: -2.5, MuInit: 0.1, Zeta: 10, LR1: 1e-3, LR2: 1e-3, MC: 2, Batch: 8,
		LocalSteps: 3,
		Beta:       0.9, Rounds: 4, ClientsPerRound: 3, EvalLast: 2, EvalDraws: 2, PersonalSteps: 1, NoiseStd: 1,
		Seed: 5}
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
	if !slices.Equal(a.Global, b.Global) || len(a.History) != 2 || fmt.Sprint(a.History) != fmt.Sprint(b.History) {
		t.Fatalf("GOMAXPROCS 1 and 2 differ: %v vs %v", a.History, b.History)
	}
	o.Optimizer = Adam
	if c, d := run(1), run(2); !slices.Equal(c.Global, d.Global) || slices.Equal(c.Global, a.Global) {
		t.Fatal("Adam: GOMAXPROCS 1 and 2 differ, or Adam gave SGD's model")
	}
	o.Optimizer = SGD
	for i := range a.Clients {
		if !slices.Equal(a.Clients[i], b.Clients[i]) {
			t.Fatalf("client %d's state differs", i)
		}
	}
	if a.NewGM == nil || len(a.NewGM.Accuracy) != 1 || a.History[1].Round != 4 {
		t.Errorf("new clients %v, history %v", a.NewGM, a.History)
	}
	o.Seed++
	if c := run(2); slices.Equal(c.Global, a.Global) {
		t.Error("another seed gave the same model")
	}
}

// pFedBayes learns the blobs: the personalised and the global model beat
// chance clearly after a few rounds.
func TestRunLearns(t *testing.T) {
	ds := data.Blobs(3, 60, 200, 4)
	o := DefaultOptions()
	o.Arch = lml.BNN{Arch: lml.ArchMLP, InC: 1, InH: 1, InW: 2, Hidden: 8, Classes: 2}
	o.Rounds, o.EvalLast, o.Batch, o.LocalSteps, o.ClientsPerRound, o.Seed = 30, 1, 20, 10, 3, 1
	r, err := Run(ds, o)
	if err != nil {
		t.Fatal(err)
	}
	if r.PM.MeanAccuracy < 85 || r.GM.MeanAccuracy < 85 {
		t.Errorf("PM %.1f %%, GM %.1f %% after %d rounds", r.PM.MeanAccuracy, r.GM.MeanAccuracy, o.Rounds)
	}
}

func TestBadSettings(t *testing.T) {
	ds := data.Blobs(2, 10, 5, 1)
	for name, f := range map[string]func(*Options){
		"ζ = 0":      func(o *Options) { o.Zeta = 0 },
		"η₁ = NaN":   func(o *Options) { o.LR1 = math.NaN() },
		"β = 1.5":    func(o *Options) { o.Beta = 1.5 },
		"K = 0":      func(o *Options) { o.MC = 0 },
		"ρ⁰ = +Inf":  func(o *Options) { o.Rho0 = math.Inf(1) },
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
	o.Arch, o.Rounds, o.LR1, o.LR2 = tinyArch, 3, 1e6, 1e6
	if _, err := Run(ds, o); err == nil {
		t.Error("diverging step sizes ran without an error")
	}
}

// handGrad is the gradient of the mean cross-entropy of the tiny MLP
// (tinyArch) at θ on the rows of x, forward and backward written out.
func handGrad(th, x, y []float64) []float64 {
	W1, b1, W2, b2 := th[0:6], th[6:9], th[9:15], th[15:17]
	g := make([]float64, len(th))
	gW1, gb1, gW2, gb2 := g[0:6], g[6:9], g[9:15], g[15:17]
	b := float64(len(y))
	for s := range y {
		xs := x[2*s : 2*s+2]
		var h [3]float64
		for u := range 3 {
			h[u] = math.Max(0, W1[2*u]*xs[0]+W1[2*u+1]*xs[1]+b1[u])
		}
		var z [2]float64
		for c := range 2 {
			z[c] = W2[3*c]*h[0] + W2[3*c+1]*h[1] + W2[3*c+2]*h[2] + b2[c]
		}
		mx := math.Max(z[0], z[1])
		den := math.Exp(z[0]-mx) + math.Exp(z[1]-mx)
		var dz [2]float64
		for c := range 2 {
			dz[c] = math.Exp(z[c]-mx) / den / b
		}
		dz[int(y[s])] -= 1 / b
		for c := range 2 {
			gb2[c] += dz[c]
			for u := range 3 {
				gW2[3*c+u] += dz[c] * h[u]
			}
		}
		for u := range 3 {
			if h[u] <= 0 {
				continue
			}
			dh := dz[0]*W2[u] + dz[1]*W2[3+u]
			gb1[u] += dh
			gW1[2*u] += dh * xs[0]
			gW1[2*u+1] += dh * xs[1]
		}
	}
	return g
}

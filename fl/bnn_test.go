package fl

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/pacpfl/pacpfl/conv"
	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/lml"
)

// tinyImages is a Fashion-MNIST stand-in: 10 classes of 6×6 images, each a
// fixed random prototype of its class plus pixel noise, split by the real
// labels5 protocol (8 training and 12 test images per label per client, 2
// new clients).
func tinyImages(t testing.TB, seed uint64) *data.Dataset {
	t.Helper()
	const classes, side, perClass = 10, 6, 140
	rng := rand.New(rand.NewPCG(99, 1)) // the prototypes are the same for every seed
	proto := make([]float64, classes*side*side)
	for i := range proto {
		proto[i] = 255 * rng.Float64()
	}
	rng = rand.New(rand.NewPCG(seed, 2))
	im := &data.Images{Name: "tiny", Rows: side, Cols: side, Classes: classes}
	for c := range classes {
		for range perClass {
			for p := range side * side {
				v := proto[c*side*side+p] + 60*rng.NormFloat64()
				im.Pixels = append(im.Pixels, uint8(math.Max(0, math.Min(255, v))))
			}
			im.Labels = append(im.Labels, uint8(c))
		}
	}
	ds, err := data.Labels5(im, data.Labels5Config{Train: 8, Test: 12, New: 2, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func tinyBNN() *BNNModel {
	b := NewBNNModel(lml.BNN{Arch: lml.ArchMLP, InC: 1, InH: 6, InW: 6, Hidden: 16, Classes: 10})
	b.Samples = 3
	b.Posterior = lml.BNNPosteriorOptions{Particles: 3, Steps: 40, LR: 1e-2, Batch: 16, AlphaSamples: 12}
	return b
}

func tinyBNNOptions(seed uint64) BNNOptions {
	o := DefaultBNNOptions()
	o.Server = Config{K: 2, Rounds: 80, ClientsPerRound: 5, Batch: 16, LR: 1e-2, Optimizer: "adam", Tau: 0.5,
		Seed: seed}
	o.Bounds.PriorSamples = 0
	return o
}

// A client update is the estimator's gradient of each particle on the
// batch the stream picks, with scale m_i/b.
func TestBNNClientUpdate(t *testing.T) {
	ds := tinyImages(t, 1)
	b := tinyBNN()
	c, err := b.NewClient(&ds.Existing[0])
	if err != nil {
		t.Fatal(err)
	}
	prior, err := BNNHyperPrior(b.Model, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	const k = 2
	d := b.Dim()
	phis := make([]float64, k*d)
	rng := rand.New(rand.NewPCG(3, 4))
	for r := range k {
		prior.Sample(phis[r*d:(r+1)*d], rng)
	}
	for _, batch := range []int{0, 10} {
		grad := make([]float64, k*d)
		mean, err := c.Update(phis, k, d, batch, rand.New(rand.NewPCG(5, 6)), grad)
		if err != nil {
			t.Fatal(err)
		}
		// The same draws by hand: the batch first, then each particle's noise.
		rng := rand.New(rand.NewPCG(5, 6))
		x, y := ds.Existing[0].X, ds.Existing[0].Y
		if batch > 0 {
			var rs data.RowSampler
			if x, y, err = rs.Sample(x, y, b.Model.D(), batch, rng); err != nil {
				t.Fatal(err)
			}
		}
		e, err := lml.NewBNNEstimator(b.Model, b.Samples, conv.Options{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		want := 0.0
		for r := range k {
			g := make([]float64, d)
			v, err := e.LML(phis[r*d:(r+1)*d], x, y, float64(len(ds.Existing[0].Y))/float64(len(y)), rng, g)
			if err != nil {
				t.Fatal(err)
			}
			want += v / k
			for i := range g {
				if math.Abs(g[i]-grad[r*d+i]) > 1e-9*math.Max(1, math.Abs(g[i])) {
					t.Fatalf("batch %d, particle %d, coordinate %d: update %v, estimator %v", batch, r, i, grad[r*d+i],
						g[i])
				}
			}
		}
		if math.Abs(mean-want) > 1e-9*math.Abs(want) {
			t.Errorf("batch %d: mean LML %v, want %v", batch, mean, want)
		}
	}
	if _, err := c.Update(phis, k, d+1, 0, rng, make([]float64, k*(d+1))); err == nil {
		t.Error("wrong dφ: no error")
	}
	if _, err := b.NewClient(&data.ClientData{X: []float64{1}, Y: []float64{0}}); err == nil {
		t.Error("ragged client data: no error")
	}
}

// A short PAC-PFL run with a small MLP on the tiny images: the clients'
// training LML improves and the personalised predictive beats chance.
func TestBNNPACPFLEndToEnd(t *testing.T) {
	ds := tinyImages(t, 2)
	o := tinyBNNOptions(7)
	var ticks []int // the personalisation's progress: 1, 2, …, every client once
	o.Personalised = func(e RoundEvent) {
		if e.Rounds != len(ds.Existing)+len(ds.New) {
			t.Errorf("progress total %d, want %d clients", e.Rounds, len(ds.Existing)+len(ds.New))
		}
		ticks = append(ticks, e.Round) // the race detector checks the calls are serialised
	}
	res, err := RunPACPFLBNN(ds, tinyBNN(), o)
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range ticks {
		if d != i+1 {
			t.Fatalf("personalisation progress %v, want 1..%d", ticks, len(ds.Existing)+len(ds.New))
		}
	}
	if len(ticks) != len(ds.Existing)+len(ds.New) {
		t.Errorf("%d progress calls for %d clients", len(ticks), len(ds.Existing)+len(ds.New))
	}
	h := res.Train.MeanLML
	first, last := Mean(h[:10]), Mean(h[len(h)-10:])
	t.Logf("mean client LML: first rounds %.1f, last rounds %.1f; accuracy existing %.1f%%, new %.1f%%; CE %.3f / %.3f",
		first, last, res.ExistingClass.MeanAccuracy, res.NewClass.MeanAccuracy, res.ExistingClass.MeanCE,
		res.NewClass.MeanCE)
	if !(last > first+10) {
		t.Errorf("training LML did not improve: %.1f → %.1f", first, last)
	}
	if res.ExistingClass.MeanAccuracy < 50 || res.NewClass.MeanAccuracy < 50 {
		t.Errorf("accuracy %.1f%% (existing), %.1f%% (new): the clients hold 5 labels each, chance is 20%%",
			res.ExistingClass.MeanAccuracy, res.NewClass.MeanAccuracy)
	}
	if len(res.ExistingClass.Accuracy) != len(ds.Existing) || len(res.NewClass.CE) != len(ds.New) {
		t.Errorf("per-client metrics: %d existing, %d new", len(res.ExistingClass.Accuracy), len(res.NewClass.CE))
	}
}

// The run is bit-identical across GOMAXPROCS 1 and 2: particles, client
// LMLs and every per-client metric, for PAC-PFL and both baselines.
func TestBNNDeterministicAcrossGOMAXPROCS(t *testing.T) {
	ds := tinyImages(t, 3)
	run := func(procs int) []*MethodResult {
		prev := runtime.GOMAXPROCS(procs)
		defer runtime.GOMAXPROCS(prev)
		o := tinyBNNOptions(11)
		o.Server.Rounds = 20
		b := tinyBNN()
		b.Posterior.Steps = 10
		p, err := RunPACPFLBNN(ds, b, o)
		if err != nil {
			t.Fatal(err)
		}
		v, err := RunVanillaBNN(ds, b, 11)
		if err != nil {
			t.Fatal(err)
		}
		q, err := RunPooledBNN(ds, b, 11)
		if err != nil {
			t.Fatal(err)
		}
		return []*MethodResult{p, v, q}
	}
	a, b := run(1), run(2)
	if !slices.Equal(a[0].Train.Particles, b[0].Train.Particles) ||
		!slices.Equal(a[0].Train.MeanLML, b[0].Train.MeanLML) {
		t.Fatal("PAC-PFL particles or LMLs differ between GOMAXPROCS 1 and 2")
	}
	for i, r := range a {
		s := b[i]
		if !slices.Equal(r.ExistingClass.Accuracy, s.ExistingClass.Accuracy) ||
			!slices.Equal(r.ExistingClass.CE, s.ExistingClass.CE) ||
			!slices.Equal(r.NewClass.Accuracy, s.NewClass.Accuracy) || !slices.Equal(r.NewClass.CE, s.NewClass.CE) {
			t.Errorf("%s: metrics differ between GOMAXPROCS 1 and 2", r.Method)
		}
	}
}

// Vanilla and Pooled learn something on the tiny images, each in its own
// way: Vanilla personalises, Pooled does not.
func TestBNNBaselinesRun(t *testing.T) {
	ds := tinyImages(t, 4)
	b := tinyBNN()
	v, err := RunVanillaBNN(ds, b, 5)
	if err != nil {
		t.Fatal(err)
	}
	p, err := RunPooledBNN(ds, b, 5)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("vanilla %.1f%% / %.1f%%, pooled %.1f%% / %.1f%%", v.ExistingClass.MeanAccuracy, v.NewClass.MeanAccuracy,
		p.ExistingClass.MeanAccuracy, p.NewClass.MeanAccuracy)
	for _, r := range []*MethodResult{v, p} {
		if r.ExistingClass.MeanAccuracy < 30 {
			t.Errorf("%s: existing-client accuracy %.1f%%", r.Method, r.ExistingClass.MeanAccuracy)
		}
	}
	bad := *ds
	bad.Classes = 7
	if _, err := RunVanillaBNN(&bad, b, 5); err == nil {
		t.Error("class count mismatch: no error")
	}
}

// The bounds of a BNN run: finite, in the order the theory gives (the
// new-client bound is the looser), and the LogZCFunc plug-in is the
// estimator's many-sample estimate with scale β/m_i.
func TestBNNBounds(t *testing.T) {
	ds := tinyImages(t, 5)
	b := tinyBNN()
	prior, err := BNNHyperPrior(b.Model, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, loss := range []lml.Loss{{Kind: lml.ClippedNLL, PMin: 0.01}, {Kind: lml.ZeroOne}} {
		o := BNNBoundOptions{Loss: loss, Delta: 0.05, PriorSamples: 4, WeightDraws: 6, Seed: 1}
		bd, err := ComputeBNNBounds(ds, b, prior, o, 0.5)
		if err != nil {
			t.Fatal(err)
		}
		_, hi := loss.Range()
		if math.IsNaN(bd.Server) || bd.Server <= 0 || bd.NewClient < bd.Server || bd.B != hi || bd.A != 0 {
			t.Errorf("loss %+v: bounds %+v", loss, bd)
		}
		t.Logf("loss %+v: server %.3f, new client %.3f (loss range [0, %.3g])", loss, bd.Server, bd.NewClient, hi)
	}
	phi := make([]float64, b.Dim())
	prior.Sample(phi, rand.New(rand.NewPCG(1, 2)))
	f := b.BoundedLogZ(ds.Existing, 40, lml.Loss{Kind: lml.ZeroOne}, 6)
	got, err := f(phi, 1, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	e, err := lml.NewBNNEstimator(b.Model, b.Samples, conv.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	c := &ds.Existing[1]
	want, err := e.LogZ(phi, c.X, c.Y, 40/float64(len(c.Y)), lml.Loss{Kind: lml.ZeroOne}, 6,
		rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("BoundedLogZ %v, estimator %v", got, want)
	}
	if _, err := ComputeBNNBounds(ds, b, prior, BNNBoundOptions{Loss: lml.Loss{}, Delta: 0.05, PriorSamples: 2},
		0.5); err == nil {
		t.Error("unbounded NLL: no error")
	}
}

package methods

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/fedavg"
	"github.com/pacpfl/pacpfl/fl/fedvi"
	"github.com/pacpfl/pacpfl/fl/genfl"
	"github.com/pacpfl/pacpfl/fl/pfedbayes"
	"github.com/pacpfl/pacpfl/harness"
	"github.com/pacpfl/pacpfl/lml"
)

var (
	_ harness.Method = PACPFLBNN{}
	_ harness.Method = VanillaBNN{}
	_ harness.Method = PooledBNN{}
	_ harness.Method = PFedBayes{}
	_ harness.Method = FedAvg{}
	_ harness.Method = FedVI{}
	_ harness.Method = FedVIFedAvg{}
	_ harness.Method = GenFL{}
)

// tinyImages: 8×8 images of 3 classes (a bright row, column or diagonal on
// noise) over 5 clients by a Dirichlet(0.5) over labels, 2 new clients.
func tinyImages(t *testing.T, seed uint64) *data.Dataset {
	t.Helper()
	const n = 600
	rng := rand.New(rand.NewPCG(seed, 99))
	im := &data.Images{Name: "tiny", Rows: 8, Cols: 8, Classes: 3, Pixels: make([]uint8, n*64),
		Labels: make([]uint8, n)}
	for i := range n {
		c := i % 3
		im.Labels[i] = uint8(c)
		p := im.Pixels[i*64 : (i+1)*64]
		for j := range p {
			p[j] = uint8(rng.IntN(80))
		}
		for k := range 8 {
			switch c {
			case 0:
				p[3*8+k] = 255
			case 1:
				p[k*8+3] = 255
			default:
				p[k*8+k] = 255
			}
		}
	}
	ds, err := data.Dirichlet(im, data.DirichletConfig{Clients: 5, New: 2, Alpha: 0.5, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

var tinyBNNArch = lml.BNN{Arch: lml.ArchMLP, InC: 1, InH: 8, InW: 8, Hidden: 6, Classes: 3}

func tinyBNNModel() *fl.BNNModel {
	b := fl.NewBNNModel(tinyBNNArch)
	b.Samples = 2
	b.Posterior = lml.BNNPosteriorOptions{Particles: 2, Steps: 5, LR: 1e-2, Batch: 16, AlphaSamples: 4}
	return b
}

// tinyClassification is every classification method, small, with 4 rounds.
func tinyClassification(t *testing.T) []harness.Method {
	t.Helper()
	p := DefaultPACPFLBNN()
	p.Model = tinyBNNModel
	p.Options.Server = fl.Config{K: 2, Rounds: 4, ClientsPerRound: 3, Batch: 16, LR: 1e-2, Optimizer: "adam", Tau: 0.5}
	p.Options.Bounds.PriorSamples = 0
	b := DefaultPFedBayes()
	b.Options.Arch, b.Options.Rounds, b.Options.EvalLast, b.Options.LocalSteps = tinyBNNArch, 4, 2, 2
	b.Options.ClientsPerRound = 3
	avg, ft := FedAvgPair(fedavg.Options{})
	a := DefaultFedAvg().Options
	a.Arch, a.Rounds, a.EvalLast, a.LocalSteps, a.FineTune, a.ClientsPerRound = tinyBNNArch, 4, 2, 2, 2, 3
	avg.Options, ft.Options = a, a
	x := DefaultFedProx()
	x.Options.Arch, x.Options.Rounds, x.Options.EvalLast, x.Options.LocalSteps, x.Options.ClientsPerRound = tinyBNNArch,
		4, 2, 2, 3
	v := DefaultFedVI()
	v.Options.Arch = fedvi.Arch{InH: 8, InW: 8, Conv1: 2, Conv2: 3, Embed: 6, Global: 4, PHidden: 5}
	v.Options.Rounds, v.Options.ClientsPerRound, v.Options.EvalLast, v.Options.Batch = 4, 3, 2, 32
	va, vt := FedVIFedAvgPair(v.Options, fedvi.FineTune{Epochs: 1, Batch: 16, LR: 0.02})
	g := DefaultGenFL()
	g.Options.Arch = genfl.Arch{In: 64, Hidden: []int{6}, Classes: 3}
	g.Options.PriorFed.Rounds, g.Options.PosteriorFed.Rounds, g.Options.PersonalEpochs, g.Options.TestDraws = 3, 2, 1, 2
	g.Options.PriorFed.LocalEpochs = 1
	return []harness.Method{p, VanillaBNN{Model: tinyBNNModel}, PooledBNN{Model: tinyBNNModel}, b, avg, ft, x, v, va,
		vt, g}
}

// Each method is its package's run with the seed set, to the bit, and
// reports its rounds; FedAvg and FedAvg+FT of a pair train once per seed.
func TestClassificationRunIsThePackageRun(t *testing.T) {
	ds := tinyImages(t, 3)
	const seed = 21
	ms := tinyClassification(t)
	direct := func(m harness.Method) (*fl.MethodResult, error) {
		switch m := m.(type) {
		case PACPFLBNN:
			o := m.Options
			o.Server.Seed, o.Bounds.Seed = seed, seed
			return fl.RunPACPFLBNN(ds, tinyBNNModel(), o)
		case VanillaBNN:
			return fl.RunVanillaBNN(ds, tinyBNNModel(), seed)
		case PooledBNN:
			return fl.RunPooledBNN(ds, tinyBNNModel(), seed)
		case PFedBayes:
			o := m.Options
			o.Seed = seed
			return pfedbayes.RunMethod(ds, o)
		case FedAvg:
			o := m.Options
			o.Seed = seed
			name := fedavg.MethodFedAvg
			if o.Mu > 0 {
				name = fedavg.MethodFedProx
			}
			avg, ft, err := fedavg.RunMethods(ds, o, name)
			if m.FineTuned {
				return ft, err
			}
			return avg, err
		case FedVI:
			o := m.Options
			a := fedvi.Paper(ds.Classes)
			a.InH, a.InW, a.Conv1, a.Conv2, a.Embed, a.Global, a.PHidden = 8, 8, 2, 3, 6, 4, 5
			o.Arch, o.Seed = a, seed
			r, _, err := fedvi.RunMethod(ds, o)
			return r, err
		case FedVIFedAvg:
			o := m.Options
			a := fedvi.Paper(ds.Classes)
			a.InH, a.InW, a.Conv1, a.Conv2, a.Embed, a.Global, a.PHidden = 8, 8, 2, 3, 6, 4, 5
			o.Arch, o.Seed = a, seed
			plain, tuned, err := fedvi.TrainFedAvg(ds, o, m.FineTune)
			if err != nil {
				return nil, err
			}
			r := plain
			if m.FineTuned {
				r = tuned
			}
			return fedviResult(m.Name(), r, ds), nil
		case GenFL:
			o := m.Options
			o.Reseed(seed)
			o.PriorFed.Fraction, o.PosteriorFed.Fraction = 1, 1 // 10/5 users per round, capped
			return genfl.RunMethod(ds, o, o.TestDraws)
		}
		t.Fatalf("no direct run for %T", m)
		return nil, nil
	}
	for _, m := range ms {
		if err := m.(interface{ Validate() error }).Validate(); err != nil {
			t.Fatalf("%s: %v", m.Name(), err)
		}
		rounds := map[string]int{}
		got, err := m.Run(context.Background(), ds, seed, harness.ObserverFunc(func(e harness.Event) {
			if e.Kind == harness.Round {
				rounds[e.Phase]++
			}
		}))
		if err != nil {
			t.Fatalf("%s: %v", m.Name(), err)
		}
		want, err := direct(m)
		if err != nil {
			t.Fatal(err)
		}
		if got.Method != m.Name() || !sameClassBits(got, want) {
			t.Errorf("%s (%q): Run %+v, direct %+v", m.Name(), got.Method, got.ExistingClass, want.ExistingClass)
		}
		switch m.Name() {
		case fl.MethodVanilla, fl.MethodPooled:
		case fedavg.MethodFedAvgFT, MethodFedVIFedAvgFT:
			if rounds[""] != 0 {
				t.Errorf("%s retrained its pair's run (%d rounds)", m.Name(), rounds[""])
			}
		case genfl.MethodGenFL:
			if rounds[PhasePriorERM] != 3 {
				t.Errorf("GenFL: %d prior rounds reported", rounds[PhasePriorERM])
			}
		default:
			if rounds[""] != 4 {
				t.Errorf("%s: %d rounds reported, ran 4", m.Name(), rounds[""])
			}
		}
		if m.Name() == fl.MethodPACPFL && rounds[PhasePersonalisation] != len(ds.Existing)+len(ds.New) {
			t.Errorf("PAC-PFL: %d personalisation steps for %d clients", rounds[PhasePersonalisation],
				len(ds.Existing)+len(ds.New))
		}
	}
	// A pair retrains on another seed.
	avg, ft := FedAvgPair(ms[4].(FedAvg).Options)
	n := 0
	count := harness.ObserverFunc(func(e harness.Event) { n++ })
	for _, s := range []uint64{1, 1, 2} {
		if _, err := avg.Run(context.Background(), ds, s, count); err != nil {
			t.Fatal(err)
		}
		if _, err := ft.Run(context.Background(), ds, s, count); err != nil {
			t.Fatal(err)
		}
	}
	if n != 2*4 {
		t.Errorf("three seeds (two distinct) of the pair trained %d rounds, want 8", n)
	}
}

// A context done after round 2 ends every round-based method with
// ctx.Err(), and a done context ends the others before any work.
func TestClassificationStopsOnTheContext(t *testing.T) {
	ds := tinyImages(t, 3)
	for _, m := range tinyClassification(t) {
		ctx, cancel := context.WithCancel(context.Background())
		training := 0
		_, err := m.Run(ctx, ds, 1, harness.ObserverFunc(func(e harness.Event) {
			if e.Kind == harness.Round {
				if training++; training == 2 {
					cancel()
				}
			}
		}))
		cancel()
		switch m.Name() {
		case fl.MethodVanilla, fl.MethodPooled:
			if _, err := m.Run(ctx, ds, 1, nil); !errors.Is(err, context.Canceled) {
				t.Errorf("%s with a done context: %v", m.Name(), err)
			}
			continue
		}
		if !errors.Is(err, context.Canceled) || training != 2 {
			t.Errorf("%s: %v after %d rounds, want context.Canceled after 2", m.Name(), err, training)
		}
	}
}

func TestClassificationValidate(t *testing.T) {
	_, ft := FedAvgPair(fedavg.FedProxOptions())
	if err := ft.Validate(); err == nil || !strings.Contains(err.Error(), "FedProx") {
		t.Errorf("FedAvg+FT of FedProx: %v", err)
	}
	o := fedavg.DefaultOptions()
	o.FineTune = 0
	if _, ft := FedAvgPair(o); ft.Validate() == nil {
		t.Error("FedAvg+FT without fine-tuning steps accepted")
	}
	if _, vt := FedVIFedAvgPair(fedvi.DefaultOptions(), fedvi.FineTune{}); vt.Validate() == nil {
		t.Error("FedVI's FedAvg+FT without epochs accepted")
	}
	p := DefaultPACPFLBNN()
	p.Options.SigmaMu = 0
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "σ_μ") {
		t.Errorf("σ_μ = 0: %v", err)
	}
	g := DefaultGenFL()
	g.Options.TestDraws = 0
	if g.Validate() == nil {
		t.Error("GenFL with no test draws accepted")
	}
	if n := (FedAvg{Options: fedavg.FedProxOptions()}).Name(); n != fedavg.MethodFedProx {
		t.Errorf("FedProx named %q", n)
	}
}

// sameClassBits compares the classification groups of two results to the
// bit.
func sameClassBits(a, b *fl.MethodResult) bool {
	g := func(x, y *fl.ClassGroupMetrics) bool {
		if x == nil || y == nil {
			return x == y
		}
		eq := func(p, q []float64) bool {
			if len(p) != len(q) {
				return false
			}
			for i := range p {
				if p[i] != q[i] && !(p[i] != p[i] && q[i] != q[i]) {
					return false
				}
			}
			return true
		}
		return eq(x.Accuracy, y.Accuracy) && eq(x.CE, y.CE)
	}
	return g(a.ExistingClass, b.ExistingClass) && g(a.NewClass, b.NewClass) && g(a.GlobalClass, b.GlobalClass)
}

// GenFLBound is genfl.RunFLSOB or RunPFL with the seed's streams, to the
// bit, and reports its phases; a done context stops it between rounds.
func TestGenFLBoundIsThePackageRun(t *testing.T) {
	ds := tinyImages(t, 4)
	o := genfl.DefaultOptions(genfl.LearntPriorKind, genfl.Pairs, 0)
	o.Arch = genfl.Arch{In: 64, Hidden: []int{6}, Classes: 3}
	o.PriorFed.Rounds, o.PriorFed.LocalEpochs, o.PosteriorFed.Rounds, o.PosteriorFed.LocalEpochs = 2, 1, 3, 1
	o.PersonalEpochs, o.TestDraws, o.MC.N, o.ClientMC.N = 1, 2, 200, 50
	train, _ := genfl.TrainClients(ds)
	test, _ := genfl.TestClients(ds)
	for _, setting := range []string{FLSOB, PFL} {
		m := GenFLBound{Options: o, Setting: setting}
		phases := map[string]int{}
		got, err := m.Run(context.Background(), ds, 7, harness.ObserverFunc(func(e harness.Event) {
			if e.Kind == harness.Phase {
				phases["start "+e.Phase]++
			} else {
				phases[e.Phase]++
			}
		}))
		if err != nil {
			t.Fatalf("%s: %v", setting, err)
		}
		d := o
		d.Reseed(7)
		switch setting {
		case FLSOB:
			want, err := genfl.RunFLSOB(train, test, d)
			if err != nil {
				t.Fatal(err)
			}
			r := got.Detail.(*genfl.FLSOBResult)
			if r.Bound.Bound != want.Bound.Bound || r.TestError != want.TestError || r.Bound.KL != want.Bound.KL {
				t.Errorf("FL-SOB: bound %v, test %v; direct %v, %v", r.Bound.Bound, r.TestError, want.Bound.Bound,
					want.TestError)
			}
			if phases[""] != 3 || phases[PhasePriorERM] != 2 || phases[PhaseSampling] == 0 {
				t.Errorf("FL-SOB events %v", phases)
			}
		case PFL:
			want, err := genfl.RunPFL(train, test, d)
			if err != nil {
				t.Fatal(err)
			}
			r := got.Detail.(*genfl.PFLResult)
			if len(r.Clients) != len(want.Clients) || r.Clients[0].Bound.Bound != want.Clients[0].Bound.Bound ||
				r.Clients[0].TestError != want.Clients[0].TestError {
				t.Errorf("PFL: first user %+v, direct %+v", r.Clients[0], want.Clients[0])
			}
			if phases[PhasePerUser] == 0 || phases[PhasePriorERM] != 2 {
				t.Errorf("PFL events %v", phases)
			}
		}
		if len(phases) < 3 {
			t.Errorf("%s: phases %v", setting, phases)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	_, err := GenFLBound{Options: o, Setting: FLSOB}.Run(ctx, ds, 7, harness.ObserverFunc(func(e harness.Event) {
		if e.Phase == PhasePriorERM && e.Round == 1 {
			cancel()
		}
	}))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled after the prior's first round: %v", err)
	}
	if (GenFLBound{Options: o, Setting: "x"}).Validate() == nil {
		t.Error("unknown setting accepted")
	}
}

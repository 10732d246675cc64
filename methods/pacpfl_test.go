package methods

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/harness"
)

var (
	_ harness.Method = PACPFL{}
	_ harness.Method = PFedGP{}
)

// smallPACPFL is a PAC-PFL of a few rounds without bounds.
func smallPACPFL(t *testing.T) PACPFL {
	t.Helper()
	m, err := DefaultPACPFL(Polynomial)
	if err != nil {
		t.Fatal(err)
	}
	m.Options.Server.Rounds, m.Options.Server.K = 6, 2
	m.Options.Bounds.PriorSamples, m.Options.Bounds.Learned = 0, nil
	return m
}

func TestPACPFLDefaultsPerPreset(t *testing.T) {
	p, err := DefaultPACPFL(Polynomial)
	if err != nil || !reflect.DeepEqual(p.Options, fl.DefaultPACPFLOptions()) || p.Name() != fl.MethodPACPFL {
		t.Errorf("Polynomial: %+v, %v", p.Options, err)
	}
	v, _ := DefaultPACPFL(PV)
	if s := v.Options.Server; s.LR != 0.01 || s.Rounds != 500 || s.Tau != 0.005 || v.Options.SigmaP != 0.5 || s.K != 4 {
		t.Errorf("PV: %+v", v.Options)
	}
	g, _ := DefaultPFedGP(PV)
	if s := g.Options.Server; s.LR != 0.01 || s.Rounds != 500 || s.Tau != 0.005 || s.K != 1 || g.Options.SigmaP != 10 ||
		g.Options.InitSigma != 0.5 || !g.Options.ZeroMean {
		t.Errorf("pFedGP on PV: %+v", g.Options)
	}
	if g.Name() != fl.MethodPFedGP {
		t.Errorf("pFedGP named %q", g.Name())
	}
	g.Key = "k=1"
	if g.Name() != "k=1" {
		t.Errorf("Key ignored: %q", g.Name())
	}
	for _, err := range []error{errOf(DefaultPACPFL("cifar")), errOf(DefaultPFedGP("cifar"))} {
		if err == nil || !strings.Contains(err.Error(), "unknown preset") {
			t.Errorf("unknown preset: %v", err)
		}
	}
	for _, p := range []Preset{Polynomial, PV} {
		a, _ := DefaultPACPFL(p)
		b, _ := DefaultPFedGP(p)
		if a.Validate() != nil || b.Validate() != nil {
			t.Errorf("%s: defaults invalid: %v, %v", p, a.Validate(), b.Validate())
		}
	}
}

func errOf[T any](_ T, err error) error { return err }

func TestPACPFLValidateNamesTheBadOption(t *testing.T) {
	base := smallPACPFL(t)
	for _, c := range []struct {
		name string
		edit func(*PACPFL)
		want string
	}{
		{"lambda", func(m *PACPFL) { m.Lambda = -1 }, "λ"},
		{"lambda NaN", func(m *PACPFL) { m.Lambda = math.NaN() }, "λ"},
		{"sigma", func(m *PACPFL) { m.Options.SigmaP = 0 }, "σ_P"},
		{"init sigma", func(m *PACPFL) { m.Options.InitSigma = math.Inf(1) }, "initial σ"},
		{"k", func(m *PACPFL) { m.Options.Server.K = 0 }, "particles"},
		{"tau", func(m *PACPFL) { m.Options.Server.Tau = 0 }, "τ"},
		{"range", func(m *PACPFL) { m.Options.Bounds.PriorSamples, m.Options.Bounds.A = 10, 3 }, "loss range"},
		{"delta", func(m *PACPFL) { m.Options.Bounds.Learned, m.Options.Bounds.Delta = &fl.LearnedBoundOptions{}, 1 },
			"δ"},
		{"noise seed", func(m *PACPFL) { m.DPNoiseSeed = 3 }, "noise seed without"},
	} {
		m := base
		c.edit(&m)
		err := m.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %q", c.name, err, c.want)
		}
		// Run refuses it too, before any work.
		ds, _ := smallPoly(1)
		if _, rerr := m.Run(context.Background(), ds, 1, nil); rerr == nil {
			t.Errorf("%s: Run accepted it", c.name)
		}
	}
	// λ replaces τ: a valid λ with τ unset is fine.
	m := base
	m.Lambda, m.Options.Server.Tau = 40, 0
	if err := m.Validate(); err != nil {
		t.Errorf("λ with τ unset: %v", err)
	}
}

// Run is fl.RunPACPFL with the seed, τ from λ and a fresh noise stream per
// run, to the bit; it reports every round.
func TestPACPFLRunIsTheLibraryRun(t *testing.T) {
	ds, err := smallPoly(5)
	if err != nil {
		t.Fatal(err)
	}
	const seed = 9
	direct := func(o fl.PACPFLOptions, name string) *fl.MethodResult {
		t.Helper()
		o.Server.Seed, o.Bounds.Seed = seed, seed
		r, err := fl.RunPACPFL(ds, fl.NewGPModel(ds.D), o, name)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	run := func(m harness.Method) (*fl.MethodResult, []harness.Event) {
		t.Helper()
		var evs []harness.Event
		r, err := m.Run(context.Background(), ds, seed,
			harness.ObserverFunc(func(e harness.Event) { evs = append(evs, e) }))
		if err != nil {
			t.Fatal(err)
		}
		return r, evs
	}

	m := smallPACPFL(t)
	got, evs := run(m)
	if want := direct(m.Options, fl.MethodPACPFL); !sameBits(got, want) {
		t.Errorf("Run %+v, direct %+v", got.Existing, want.Existing)
	}
	if len(evs) != 6 {
		t.Fatalf("%d round events for 6 rounds", len(evs))
	}
	for i, e := range evs {
		if e.Kind != harness.Round || e.Round != i+1 || e.Rounds != 6 || e.Value != got.Train.MeanLML[i] {
			t.Errorf("event %d: %+v (round LML %v)", i, e, got.Train.MeanLML[i])
		}
	}

	// λ sets τ from each data set.
	l := m
	l.Lambda, l.Options.Server.Tau = 30, 0
	o := m.Options
	o.Server.Tau = fl.TauFromLambda(30, float64(ds.MinM()), len(ds.Existing), ds.N2(), fl.Upsilon)
	if g, _ := run(l); !sameBits(g, direct(o, fl.MethodPACPFL)) {
		t.Error("λ: not the run at τ(λ)")
	}

	// A noise seed: the same noise on every run, that of a generator
	// seeded with it.
	d := m
	d.Options.Server.DP = &fl.DPConfig{Mechanism: fl.DPLaplace, Epsilon: 50, Clip: 10}
	d.DPNoiseSeed = 77
	g1, _ := run(d)
	g2, _ := run(d)
	o = d.Options
	dp := *o.Server.DP
	dp.Noise = rand.NewPCG(77, 0x6470)
	o.Server.DP = &dp
	if !sameBits(g1, g2) || !sameBits(g1, direct(o, fl.MethodPACPFL)) {
		t.Error("DP noise seed: runs differ from each other or from the seeded generator's")
	}
	if d.Options.Server.DP.Noise != nil {
		t.Error("Run changed the method's own DP configuration")
	}
	if sameBits(g1, got) {
		t.Error("DP: no noise")
	}

	// pFedGP is the same run under its own name.
	p, _ := DefaultPFedGP(Polynomial)
	p.Options.Server.Rounds = 4
	pg, _ := run(p)
	if pg.Method != fl.MethodPFedGP || !sameBits(pg, direct(p.Options, fl.MethodPFedGP)) {
		t.Errorf("pFedGP: %q, or not the library run", pg.Method)
	}

	// The user's own hooks still run.
	h := m
	var progress, after int
	h.Options.Server.Progress = func(fl.RoundEvent) { progress++ }
	h.Options.Server.AfterRound = func(*fl.Server, int) error { after++; return nil }
	if g, _ := run(h); !sameBits(g, got) || progress != 6 || after != 6 {
		t.Errorf("own hooks: %d progress, %d after-round calls", progress, after)
	}
}

// A context done during training ends the run after the round under way;
// the harness passes the error through unwrapped.
func TestPACPFLStopsOnTheContext(t *testing.T) {
	ds, err := smallPoly(2)
	if err != nil {
		t.Fatal(err)
	}
	m := smallPACPFL(t)
	m.Options.Server.Rounds = 1000
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rounds := 0
	_, err = m.Run(ctx, ds, 1, harness.ObserverFunc(func(e harness.Event) {
		if rounds++; rounds == 3 {
			cancel()
		}
	}))
	if !errors.Is(err, context.Canceled) || rounds != 3 {
		t.Errorf("cancelled at round 3: %v after %d rounds", err, rounds)
	}

	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	e := harness.Experiment{Data: smallPoly, Methods: []harness.Method{m}, Seeds: []uint64{1, 2}}
	seen := 0
	_, err = harness.Run(ctx2, e, harness.ObserverFunc(func(ev harness.Event) {
		if seen++; seen == 2 {
			cancel2()
		}
	}))
	if err != context.Canceled || seen != 2 {
		t.Errorf("harness: %v after %d events", err, seen)
	}
}

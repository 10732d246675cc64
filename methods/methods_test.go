package methods

import (
	"context"
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/fedavg"
	"github.com/pacpfl/pacpfl/fl/fedvi"
	"github.com/pacpfl/pacpfl/fl/genfl"
	"github.com/pacpfl/pacpfl/fl/maml"
	"github.com/pacpfl/pacpfl/fl/mtl"
	"github.com/pacpfl/pacpfl/fl/pfedbayes"
	"github.com/pacpfl/pacpfl/harness"
)

var (
	_ harness.Method = Vanilla{}
	_ harness.Method = Pooled{}
	_ harness.Method = MTL{}
	_ harness.Method = MAML{}
)

func TestRegistryKnowsEveryMethodOnce(t *testing.T) {
	seen := map[string]bool{}
	for _, name := range Names("") {
		if seen[name] {
			t.Errorf("%q registered twice", name)
		}
		seen[name] = true
		in, ok := Lookup(name)
		if !ok || in.Label == "" || in.Source == "" || len(in.Tasks) == 0 {
			t.Errorf("%q: %+v", name, in)
		}
	}
	// The names the method packages use for their results.
	for _, name := range []string{fl.MethodPACPFL, fl.MethodPFedGP, fl.MethodVanilla, fl.MethodPooled, MTL{}.Name(),
		MAML{}.Name(),
		pfedbayes.MethodPFedBayes, fedavg.MethodFedAvg, fedavg.MethodFedProx, fedavg.MethodFedAvgFT, fedvi.MethodFedVI,
		genfl.MethodGenFL} {
		if !seen[name] {
			t.Errorf("%q is not registered", name)
		}
	}
	if got, want := Names(Regression),
		[]string{"pacpfl", "pfedgp", "mtl", "maml", "vanilla", "pooled"}; !reflect.DeepEqual(got, want) {
		t.Errorf("regression methods %v, want Table 6's %v", got, want)
	}
	for _, name := range Names(Classification) {
		if in, _ := Lookup(name); !slices.Contains(in.Tasks, Classification) {
			t.Errorf("%q listed for classification: %+v", name, in)
		}
	}
	if Label("genfl") != "GenFL (PFL)" || Label("pacpfl") != "PAC-PFL" || Label("nonesuch") != "nonesuch" {
		t.Errorf("labels %q %q %q", Label("genfl"), Label("pacpfl"), Label("nonesuch"))
	}
	if _, ok := Lookup("nonesuch"); ok {
		t.Error("Lookup found an unknown method")
	}
}

func TestLookupCannotChangeTheRegistry(t *testing.T) {
	in, _ := Lookup("vanilla")
	in.Tasks[0] = "changed"
	in.Label = "changed"
	if again, _ := Lookup("vanilla"); again.Tasks[0] != Regression || again.Label != "Vanilla" {
		t.Errorf("the registry changed: %+v", again)
	}
}

func TestDefaultsPerPreset(t *testing.T) {
	for _, p := range []Preset{"", Polynomial} {
		v, err := DefaultVanilla(p)
		if err != nil || v.Options != fl.DefaultVanillaOptions() {
			t.Errorf("%q: vanilla %+v, %v", p, v.Options, err)
		}
		pl, err := DefaultPooled(p)
		if err != nil || pl.Options != fl.DefaultPooledOptions() {
			t.Errorf("%q: pooled %+v, %v", p, pl.Options, err)
		}
	}
	v, _ := DefaultVanilla(PV)
	pl, _ := DefaultPooled(PV)
	if v.Options.Steps != 3000 || pl.Options.Steps != 3000 || pl.Options.Points != 300 || v.Options.LR != 1e-2 {
		t.Errorf("PV presets: vanilla %+v, pooled %+v", v.Options, pl.Options)
	}
	m, _ := DefaultMTL(PV)
	a, _ := DefaultMAML(PV)
	if !reflect.DeepEqual(m.Options, mtl.Default()) || !reflect.DeepEqual(a.Options, maml.Default()) {
		t.Error("MTL and MAML presets differ from their packages' defaults")
	}
	for _, f := range []func(Preset) error{
		func(p Preset) error { _, err := DefaultVanilla(p); return err },
		func(p Preset) error { _, err := DefaultPooled(p); return err },
		func(p Preset) error { _, err := DefaultMTL(p); return err },
		func(p Preset) error { _, err := DefaultMAML(p); return err },
	} {
		if err := f("fmnist"); err == nil || !strings.Contains(err.Error(), `"fmnist"`) {
			t.Errorf("unknown preset: %v", err)
		}
	}
}

func TestValidateNamesTheBadOption(t *testing.T) {
	v, _ := DefaultVanilla(Polynomial)
	pl, _ := DefaultPooled(Polynomial)
	m, _ := DefaultMTL(Polynomial)
	a, _ := DefaultMAML(Polynomial)
	for _, ok := range []interface{ Validate() error }{v, pl, m, a} {
		if err := ok.Validate(); err != nil {
			t.Errorf("defaults refused: %v", err)
		}
	}
	bad := func(name string, x interface{ Validate() error }, want string) {
		if err := x.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error naming %q", name, err, want)
		}
	}
	v0 := v
	v0.Options.Steps = 0
	bad("vanilla steps", v0, "Adam steps")
	v0 = v
	v0.Options.LR = math.NaN()
	bad("vanilla lr", v0, "learning rate")
	v0 = v
	v0.Options.InitSigma = -1
	bad("vanilla sigma", v0, "initial spread")
	p0 := pl
	p0.Options.Points = -3
	bad("pooled points", p0, "pooled points")
	p0 = pl
	p0.Options.LR = math.Inf(1)
	bad("pooled lr", p0, "learning rate")
	m0 := m
	m0.Options.LR = 0
	bad("mtl lr", m0, "learning rate")
	a0 := a
	a0.Options.Beta = -1
	bad("maml beta", a0, "step sizes")
}

func smallPoly(seed uint64) (*data.Dataset, error) {
	c := data.DefaultPolynomial()
	c.Existing, c.New, c.Test, c.Extra, c.Seed = 3, 2, 20, 2, seed
	return data.Polynomial(c)
}

// Each Method's Run is its package's run with the seed set, to the bit.
func TestRunIsThePackageRunWithTheSeed(t *testing.T) {
	ds, err := smallPoly(4)
	if err != nil {
		t.Fatal(err)
	}
	const seed = 11
	v, _ := DefaultVanilla(Polynomial)
	v.Options.Steps = 3
	pl, _ := DefaultPooled(Polynomial)
	pl.Options.Steps, pl.Options.Points = 3, 20
	m, _ := DefaultMTL(Polynomial)
	m.Options.Rounds, m.Options.PersonalSteps = 3, 3
	a, _ := DefaultMAML(Polynomial)
	a.Options.Rounds = 3
	direct := map[string]func() (*fl.MethodResult, error){
		"vanilla": func() (*fl.MethodResult, error) {
			o := v.Options
			o.Seed = seed
			return fl.RunVanilla(ds, fl.NewGPModel(ds.D), o)
		},
		"pooled": func() (*fl.MethodResult, error) {
			o := pl.Options
			o.Seed = seed
			return fl.RunPooled(ds, fl.NewGPModel(ds.D), o)
		},
		"mtl": func() (*fl.MethodResult, error) {
			o := m.Options
			o.Seed = seed
			return mtl.Run(ds, o)
		},
		"maml": func() (*fl.MethodResult, error) {
			o := a.Options
			o.Seed = seed
			return maml.Run(ds, o)
		},
	}
	for _, hm := range []harness.Method{v, pl, m, a} {
		got, err := hm.Run(context.Background(), ds, seed, harness.ObserverFunc(func(harness.Event) {}))
		if err != nil {
			t.Fatalf("%s: %v", hm.Name(), err)
		}
		want, err := direct[hm.Name()]()
		if err != nil {
			t.Fatal(err)
		}
		if !sameBits(got, want) {
			t.Errorf("%s: Run %+v, direct %+v", hm.Name(), got.Existing, want.Existing)
		}
		other, err := hm.Run(context.Background(), ds, seed+1, nil)
		if err != nil {
			t.Fatal(err)
		}
		if reflect.DeepEqual(other.Existing.RSMSE, got.Existing.RSMSE) {
			t.Errorf("%s: seeds %d and %d gave the same results: the seed is not used", hm.Name(), seed, seed+1)
		}
	}
	// A custom model is used: a linear mean changes Vanilla's fit.
	lin := v
	lin.Model = func(d int) *fl.GPModel {
		g := fl.NewGPModel(d)
		g.Model.MeanHidden = nil
		return g
	}
	a1, _ := v.Run(context.Background(), ds, seed, nil)
	a2, err := lin.Run(context.Background(), ds, seed, nil)
	if err != nil || reflect.DeepEqual(a1.Existing.RSMSE, a2.Existing.RSMSE) {
		t.Errorf("Vanilla ignored its Model (%v)", err)
	}
	// A done context: no work.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, hm := range []harness.Method{v, pl, m, a} {
		if _, err := hm.Run(ctx, ds, seed, nil); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a done context: %v", hm.Name(), err)
		}
	}
}

// sameBits compares the metrics of two results bit for bit (NaN included:
// a point predictor's CE).
func sameBits(a, b *fl.MethodResult) bool {
	eq := func(x, y []float64) bool {
		return slices.EqualFunc(x, y, func(p, q float64) bool { return math.Float64bits(p) == math.Float64bits(q) })
	}
	g := func(x, y fl.GroupMetrics) bool {
		return eq(x.RSMSE, y.RSMSE) && eq(x.CE, y.CE) &&
			eq([]float64{x.MeanRSMSE, x.MeanCE}, []float64{y.MeanRSMSE, y.MeanCE})
	}
	return g(a.Existing, b.Existing) && g(a.New, b.New)
}

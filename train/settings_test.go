package train

import (
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/lml"
	"github.com/pacpfl/pacpfl/option"
)

func goodSettings() Settings {
	return Settings{Options: fl.DefaultPACPFLOptions(), Polynomial: data.DefaultPolynomial(), Aggregate: "sum",
		Temperature: "m", LossRange: "-4,6", LearnedSamples: 10,
		DP: fl.DPConfig{Mechanism: fl.DPLaplace, Delta: 1e-5, Clip: 10}}
}

// fieldsOf are the fields of err's *option.FieldError (nil: none).
func fieldsOf(err error) []string {
	var fe *option.FieldError
	if errors.As(err, &fe) {
		return fe.Fields
	}
	return nil
}

// Every value out of range is refused as a FieldError naming its field by
// its path in Settings.
func TestSettingsValidate(t *testing.T) {
	good := goodSettings()
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		edit func(*Settings)
		want []string
	}{
		{func(s *Settings) { s.Options.Server.K = 0 }, []string{"Options.Server.K"}},
		{func(s *Settings) { s.Options.Bounds.Delta = 1 }, []string{"Options.Bounds.Delta"}},
		{func(s *Settings) { s.Options.Server.Optimizer = "x" }, []string{"Options.Server.Optimizer"}},
		{func(s *Settings) { s.Aggregate = "avg" }, []string{"Aggregate"}},
		{func(s *Settings) { s.Temperature = "zz" }, []string{"Temperature"}},
		{func(s *Settings) { s.Polynomial.Existing = 0 }, []string{"Polynomial.Existing"}},
		{func(s *Settings) { s.Polynomial.New = -1 }, []string{"Polynomial.New"}},
		{func(s *Settings) { s.Polynomial.Extra = -1 }, []string{"Polynomial.Extra"}},
		{func(s *Settings) { s.LearnedSamples = -1 }, []string{"LearnedSamples"}},
		{func(s *Settings) { s.LossRange = "1" }, []string{"LossRange"}},
		{func(s *Settings) { s.LossRange = "2,1" }, []string{"LossRange"}},
		{func(s *Settings) { s.LossRange = "0,Inf" }, []string{"LossRange"}},
		{func(s *Settings) { s.Lambda = math.NaN() }, []string{"Lambda", "Options.Server.Tau"}},
		{func(s *Settings) { s.DP.Epsilon = -1 }, []string{"DP.Epsilon"}},
		{func(s *Settings) { s.DP.Clip = math.Inf(1) }, []string{"DP.Clip"}},
		{func(s *Settings) { s.DP.Delta = 1 }, []string{"DP.Delta"}},
		{func(s *Settings) { s.Inference.Inducing = -1 }, []string{"Inference.Inducing"}},
		{func(s *Settings) { s.Inference.Mode = "fast" }, []string{"Inference.Mode"}},
	} {
		s := goodSettings()
		c.edit(&s)
		if got := fieldsOf(s.Validate()); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%+v: fields %q, want %q", s, got, c.want)
		}
	}
	s := goodSettings()
	s.Lambda = -1
	var fe *option.FieldError
	if !errors.As(s.Validate(), &fe) || fe.Message("-l", "-t") != "-l -1 must be positive and finite (0: use -t)" {
		t.Errorf("λ's message: %v", fe)
	}
}

// ServerConfig and PACPFL set what the text settings say: the aggregation,
// the default c, τ from λ, DP without δ for a pure mechanism, the bounds'
// range, seed and learned draws, β.
func TestSettingsOptions(t *testing.T) {
	ds, err := data.Polynomial(data.PolynomialConfig{Existing: 30, New: 1, Train: 8, Test: 2, Noise: 0.1,
		LengthScales: [2]float64{1, 1}, Order: 3, Seed: 3, ModeSeed: 1})
	if err != nil {
		t.Fatal(err)
	}
	s := goodSettings()
	s.Aggregate, s.Temperature, s.Options.Server.ClientsPerRound = "mean", "sqrt", 0
	s.Lambda, s.DP.Epsilon, s.DPNoiseSeed = 2, 1, 5
	o, err := s.PACPFL(ds, 7)
	if err != nil {
		t.Fatal(err)
	}
	c := o.Server
	wantTau := fl.TauFromLambda(2, float64(ds.MinM()), 30, ds.N2(), fl.Upsilon)
	switch {
	case c.Seed != 7 || c.Aggregation != fl.AggregateMean || c.ClientsPerRound != fl.DefaultClientsPerRound:
		t.Errorf("seed %d, aggregation %v, c %d", c.Seed, c.Aggregation, c.ClientsPerRound)
	case c.Tau != wantTau:
		t.Errorf("τ = %v, want %v", c.Tau, wantTau)
	case c.DP == nil || c.DP.Delta != 0 || c.DP.Epsilon != 1 || c.DP.Noise == nil:
		t.Errorf("DP %+v", c.DP)
	case o.Bounds.A != -4 || o.Bounds.B != 6 || o.Bounds.Seed != 7 || o.Bounds.Learned.Samples != 10:
		t.Errorf("bounds %+v", o.Bounds)
	}
	want := SyntheticInfo{Seed: 7, Aggregate: "mean", DPEpsilon: 1, DPClip: 10, DPMechanism: "laplace"}
	if info := s.Info(7); info != want {
		t.Errorf("info %+v, want %+v", info, want)
	}
	if beta, _ := fl.ParseTemperature("sqrt"); !reflect.DeepEqual(o.Beta, beta) {
		t.Errorf("β = %v", o.Beta)
	}
	// No ε, no DP; no λ, the given τ; no learned draws, no learned bound.
	s = goodSettings()
	s.LearnedSamples = 0
	if o, err = s.PACPFL(ds, 1); err != nil || o.Server.DP != nil || o.Server.Tau != s.Options.Server.Tau ||
		o.Bounds.Learned != nil {
		t.Errorf("%+v, %v", o, err)
	}
	s.Options.SigmaP = 0
	if _, err := s.PACPFL(ds, 1); !reflect.DeepEqual(fieldsOf(err), []string{"Options.SigmaP"}) {
		t.Errorf("σ_P 0: %v", err)
	}
	// c above n, and a strict batch above every m_i, are refused; a batch
	// that is not strict is left to the clients to cap.
	s = goodSettings()
	s.Options.Server.ClientsPerRound = 31
	if _, err := s.ServerConfig(ds, 1); !reflect.DeepEqual(fieldsOf(err), []string{"Options.Server.ClientsPerRound"}) {
		t.Errorf("c 31 of 30 clients: %v", err)
	}
	s = goodSettings()
	s.Options.Server.Batch = 9
	if _, err := s.ServerConfig(ds, 1); err != nil {
		t.Errorf("batch 9 of m_i 8, not strict: %v", err)
	}
	s.StrictBatch = true
	if _, err := s.ServerConfig(ds, 1); !reflect.DeepEqual(fieldsOf(err), []string{"Options.Server.Batch"}) {
		t.Errorf("strict batch 9 of m_i 8: %v", err)
	}
	s = goodSettings()
	s.DP.Epsilon, s.DP.Mechanism = 1, "foo"
	if _, err := s.ServerConfig(ds, 1); err == nil {
		t.Error("an unknown DP mechanism is accepted")
	}
}

// Dataset draws Polynomial, or PV with Polynomial's sizes, with the seed;
// DatasetBytes bounds the memory of the same data set.
func TestSettingsDataset(t *testing.T) {
	s := goodSettings()
	s.Polynomial.Existing, s.Polynomial.New, s.Polynomial.Extra = 4, 2, 1
	ds, err := s.Dataset(9)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Polynomial
	c.Seed = 9
	want, _ := data.Polynomial(c)
	if !reflect.DeepEqual(ds, want) || s.DatasetBytes() != c.MemoryBytes() {
		t.Errorf("Polynomial: %d, %d clients; bytes %v", len(ds.Existing), len(ds.New), s.DatasetBytes())
	}
	pv := data.DefaultPV()
	s.PV = &pv
	pc := pv
	pc.Existing, pc.New = 4, 2
	if s.DatasetBytes() != pc.MemoryBytes() {
		t.Errorf("PV bytes %v, want %v", s.DatasetBytes(), pc.MemoryBytes())
	}
}

// A CSV source without its columns, with a test fraction outside [0, 1)
// or an unknown task is refused, naming the field.
func TestCSVSourceValidate(t *testing.T) {
	good := CSVSource{Path: "f.csv", Spec: data.CSVSpec{ClientColumn: "c", TargetColumn: "y", Task: data.Regression},
		Federate: data.FederateConfig{TestFraction: 0.2}}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		edit func(*CSVSource)
		want string
	}{
		{func(s *CSVSource) { s.Spec.ClientColumn = "" }, "Spec.ClientColumn"},
		{func(s *CSVSource) { s.Spec.TargetColumn = "" }, "Spec.TargetColumn"},
		{func(s *CSVSource) { s.Federate.TestFraction = 1 }, "Federate.TestFraction"},
		{func(s *CSVSource) { s.Federate.TestFraction = math.NaN() }, "Federate.TestFraction"},
		{func(s *CSVSource) { s.Spec.Task = "x" }, "Spec.Task"},
	} {
		s := good
		c.edit(&s)
		if got := fieldsOf(s.Validate()); !reflect.DeepEqual(got, []string{c.want}) {
			t.Errorf("%+v: fields %q, want %q", s, got, c.want)
		}
	}
}

// BNN options out of range are refused, naming the field.
func TestBNNOptionsValidate(t *testing.T) {
	good := func() BNNOptions {
		o := BNNOptions{Options: fl.DefaultBNNOptions(), Model: fl.NewBNNModel(lml.BNN{Arch: lml.ArchMLP}), Hidden: 8}
		o.Model.Samples = lml.DefaultBNNSamples
		return o
	}
	o := good()
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		edit func(*BNNOptions)
		want []string
	}{
		{func(o *BNNOptions) { o.Hidden = -1 }, []string{"Hidden"}},
		{func(o *BNNOptions) { o.Model.Samples = 0 }, []string{"Model.Samples"}},
		{func(o *BNNOptions) { o.Options.SigmaOmega = math.Inf(1) }, []string{"Options.SigmaMu", "Options.SigmaOmega"}},
		{func(o *BNNOptions) { o.Options.Bounds.WeightDraws = 0 }, []string{"Options.Bounds.WeightDraws"}},
	} {
		o := good()
		c.edit(&o)
		if got := fieldsOf(o.Validate()); !reflect.DeepEqual(got, c.want) {
			t.Errorf("fields %q, want %q", got, c.want)
		}
	}
	o = good()
	o.Model.Posterior.Steps = -1
	if err := o.Validate(); err == nil || fieldsOf(err) != nil {
		t.Errorf("posterior steps −1: %v", err)
	}
}

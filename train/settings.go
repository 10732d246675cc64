package train

import (
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/option"
)

// Settings are the settings of a PAC-PFL run of GP clients (Algorithm 1;
// Algorithm 3 with DP) as a front end takes them from its user: the
// options, with the client temperature, the bounds' loss range and the
// aggregation as text and the server temperature τ set by λ or given, the
// synthetic data set, the GP clients' inference, and DP with a seed for
// its noise. Validate checks them before any data are made; ServerConfig
// and PACPFL turn them into the options of a run on a data set. A value
// out of range is an *option.FieldError naming the field by its path in
// Settings ("Options.Server.K", "Lambda", "DP.Clip").
type Settings struct {
	// Options are the run's options but for what the fields below set:
	// the aggregation, τ with Lambda, β, the bounds' loss range, seed and
	// learned bound, DP.
	Options fl.PACPFLOptions
	// StrictBatch refuses an Options.Server.Batch above every client's
	// m_i (a batch the user chose); without it such a batch is capped.
	StrictBatch bool
	// Polynomial is the synthetic data set (Dataset; its Seed is the
	// run's). PV, if set, replaces it, with Polynomial's Existing and New.
	Polynomial data.PolynomialConfig
	PV         *data.PVConfig
	// Inference is the GP clients' inference.
	Inference fl.GPInference
	// Aggregate is "sum" (fl.AggregateSum) or "mean" (fl.AggregateMean).
	Aggregate string
	// Temperature is the clients' β (fl.ParseTemperature).
	Temperature string
	// LossRange is the bounds' loss range "a,b" (fl.BoundOptions's A, B).
	LossRange string
	// Lambda, if not 0, sets τ = fl.TauFromLambda(λ, min m_i, …) in place
	// of Options.Server.Tau.
	Lambda float64
	// LearnedSamples are the draws from the trained hyper-posterior for
	// its bound (0: no such bound).
	LearnedSamples int
	// DP is Algorithm 3's privacy (Epsilon 0: none); Delta, δ of the
	// gaussian mechanism, must lie in (0, 1) and is dropped for the pure
	// mechanisms.
	DP fl.DPConfig
	// DPNoiseSeed seeds the DP noise (0: a secret seed from the OS).
	DPNoiseSeed uint64
}

// Validate reports the first value out of range whatever the data:
// Options.CheckRanges's, the optimiser, the aggregation, β, the data
// set's sizes, the bounds', λ, DP's and the inference's.
func (s *Settings) Validate() error {
	if err := s.Options.CheckRanges(); err != nil {
		return within("Options.", err)
	}
	p := &s.Polynomial
	switch opt := s.Options.Server.Optimizer; {
	case opt != "adam" && opt != "sgd":
		return option.Format("", []string{"Options.Server.Optimizer"}, "unknown %s %q (want adam or sgd)", opt)
	case s.Aggregate != "sum" && s.Aggregate != "mean":
		return option.Format("", []string{"Aggregate"}, "unknown %s %q (want sum or mean)", s.Aggregate)
	}
	if _, err := s.temperature(); err != nil {
		return err
	}
	switch {
	case p.Existing < 1:
		return option.Range("", "Polynomial.Existing", p.Existing, "must be at least 1")
	case p.New < 0:
		return option.Range("", "Polynomial.New", p.New, "must be ≥ 0")
	case p.Extra < 0:
		return option.Range("", "Polynomial.Extra", p.Extra, "must be ≥ 0")
	case s.LearnedSamples < 0:
		return option.Range("", "LearnedSamples", s.LearnedSamples, "must be ≥ 0 (0: skip that bound)")
	}
	if _, _, err := s.lossRange(); err != nil {
		return err
	}
	return s.validateRates()
}

// validateRates checks λ, DP's ε, γ and δ, and the inference.
func (s *Settings) validateRates() error {
	d := &s.DP
	switch {
	case !(s.Lambda >= 0) || math.IsInf(s.Lambda, 0):
		return option.Format("", []string{"Lambda", "Options.Server.Tau"},
			"%[1]s %[3]v must be positive and finite (0: use %[2]s)", s.Lambda)
	case !(d.Epsilon >= 0) || math.IsInf(d.Epsilon, 0):
		return option.Range("", "DP.Epsilon", d.Epsilon, "must be positive and finite (0: no DP)")
	case !(d.Clip > 0) || math.IsInf(d.Clip, 0):
		return option.Range("", "DP.Clip", d.Clip, "must be positive and finite")
	case !(d.Delta > 0 && d.Delta < 1):
		return option.Range("", "DP.Delta", d.Delta, "must lie in (0, 1)")
	case s.Inference.Inducing < 0:
		return option.Format("", []string{"Inference.Inducing"},
			"%s %d: want at least 1 inducing input (0: the default %d)", s.Inference.Inducing, fl.DefaultInducing)
	case s.Inference.Validate() != nil:
		return option.Format("", []string{"Inference.Mode"}, "%s %q: want exact, sparse or auto", s.Inference.Mode)
	}
	return nil
}

// within prefixes the fields of err's *option.FieldError with the path
// of the options value that holds them.
func within(prefix string, err error) error {
	var fe *option.FieldError
	if errors.As(err, &fe) {
		for i, f := range fe.Fields {
			fe.Fields[i] = prefix + f
		}
	}
	return err
}

// temperature is β parsed.
func (s *Settings) temperature() (fl.Temperature, error) {
	t, err := fl.ParseTemperature(s.Temperature)
	if err != nil {
		return t, option.Format("", []string{"Temperature"}, "%s: %v", err)
	}
	return t, nil
}

// lossRange is LossRange parsed: finite a < b.
func (s *Settings) lossRange() (a, b float64, err error) {
	field := []string{"LossRange"}
	parts := strings.Split(s.LossRange, ",")
	if len(parts) != 2 {
		return 0, 0, option.Format("", field, "%s %q: want a,b", s.LossRange)
	}
	if a, err = strconv.ParseFloat(strings.TrimSpace(parts[0]), 64); err == nil {
		b, err = strconv.ParseFloat(strings.TrimSpace(parts[1]), 64)
	}
	if err != nil || !(b > a) || math.IsInf(a, 0) || math.IsInf(b, 0) {
		return 0, 0, option.Format("", field, "%s %q: want finite a,b with a < b", s.LossRange)
	}
	return a, b, nil
}

// Dataset is the synthetic data set drawn with seed: PV if set, else
// Polynomial.
func (s *Settings) Dataset(seed uint64) (*data.Dataset, error) {
	if s.PV != nil {
		return data.PV(s.pvConfig(seed))
	}
	c := s.Polynomial
	c.Seed = seed
	return data.Polynomial(c)
}

// DatasetBytes is a lower bound on the memory of Dataset's data set: a
// front end refuses absurd sizes with it, before a crash or hours of data
// generation.
func (s *Settings) DatasetBytes() float64 {
	if s.PV != nil {
		return s.pvConfig(0).MemoryBytes()
	}
	return s.Polynomial.MemoryBytes()
}

func (s *Settings) pvConfig(seed uint64) data.PVConfig {
	c := *s.PV
	c.Existing, c.New, c.Seed = s.Polynomial.Existing, s.Polynomial.New, seed
	return c
}

// Info is what the reports of a run on a generated data set record of the
// settings: the seed, the aggregation and DP as given (also when DP is
// off). The data set's description is the caller's.
func (s *Settings) Info(seed uint64) SyntheticInfo {
	return SyntheticInfo{Seed: seed, Aggregate: s.Aggregate, DPEpsilon: s.DP.Epsilon, DPClip: s.DP.Clip,
		DPMechanism: string(s.DP.Mechanism)}
}

// ServerConfig is the validated server configuration of the settings for
// the existing clients of ds, seeded by seed, refusing a c above their
// number and a strict batch above their m_i (unless ds is a stand-in
// without samples): c defaults to
// min(n, fl.DefaultClientsPerRound), τ comes from Lambda (β = min m_i) if
// set, DP is nil without ε.
func (s *Settings) ServerConfig(ds *data.Dataset, seed uint64) (fl.Config, error) {
	n, maxM := len(ds.Existing), 0
	for i := range ds.Existing {
		maxM = max(maxM, ds.Existing[i].M())
	}
	c := s.Options.Server
	switch {
	case c.ClientsPerRound > n:
		return c, option.Format("", []string{"Options.Server.ClientsPerRound"}, "%s %d exceeds the %d existing "+
			"clients", c.ClientsPerRound, n)
	case s.StrictBatch && maxM > 0 && c.Batch > maxM:
		return c, option.Format("", []string{"Options.Server.Batch"}, "%s %d exceeds every client's sample count "+
			"(at most %d; 0 uses all of S_i)", c.Batch, maxM)
	}
	c.Seed, c.Aggregation = seed, fl.AggregateSum
	if s.Aggregate == "mean" {
		c.Aggregation = fl.AggregateMean
	}
	if c.ClientsPerRound == 0 {
		c.ClientsPerRound = min(n, fl.DefaultClientsPerRound)
	}
	if s.Lambda != 0 {
		c.Tau = fl.TauFromLambda(s.Lambda, float64(ds.MinM()), n, ds.N2(), fl.Upsilon)
	}
	if s.DP.Epsilon != 0 {
		dp := s.DP
		if dp.Mechanism != fl.DPGaussian {
			dp.Delta = 0
		}
		if s.DPNoiseSeed != 0 {
			dp.Noise = rand.NewPCG(s.DPNoiseSeed, 0x6470)
		}
		if err := dp.Validate(); err != nil {
			return c, err
		}
		c.DP = &dp
	}
	return c, c.Validate(n)
}

// PACPFL are the PAC-PFL options of the settings for ds, seeded by seed:
// ServerConfig's loop, σ_P, β and the bounds (their draws seeded by seed).
// The bounds' assumptions on ds are left to fl.PACPFLOptions.CheckBounds.
func (s *Settings) PACPFL(ds *data.Dataset, seed uint64) (fl.PACPFLOptions, error) {
	o := s.Options
	var err error
	if o.Server, err = s.ServerConfig(ds, seed); err != nil {
		return o, err
	}
	if !(o.SigmaP > 0) || math.IsInf(o.SigmaP, 0) {
		return o, option.Range("", "Options.SigmaP", o.SigmaP, "must be positive and finite")
	}
	if o.Bounds.A, o.Bounds.B, err = s.lossRange(); err != nil {
		return o, err
	}
	o.Bounds.Seed, o.Bounds.Learned = seed, nil
	if s.LearnedSamples > 0 {
		o.Bounds.Learned = &fl.LearnedBoundOptions{Samples: s.LearnedSamples}
	}
	o.Beta, err = s.temperature()
	return o, err
}

package methods

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/harness"
)

// PACPFL is fl.RunPACPFL: Algorithm 1 (3 with DP) with GP clients, then the
// existing and new clients' personalised predictions and, if
// Options.Bounds asks for them, the PAC-Bayesian bounds.
//
// Run stops between two rounds when its context is done and returns
// ctx.Err(); a round itself, and the bounds after training, run to their
// end.
type PACPFL struct {
	// Options.Server.Seed and Options.Bounds.Seed are set by Run;
	// Options.Server.ClientsPerRound 0 means min(n, 24) for n existing
	// clients; Progress and AfterRound are kept and run before the
	// observer and the context check.
	Options fl.PACPFLOptions
	Model   GPModel // nil: fl.NewGPModel
	// Lambda > 0 sets the server temperature of each data set from the
	// bound's λ (τ = λ/(λ + βn(n₂+υ)), Corollary 4.4, with β the smallest
	// client sample size) in place of Options.Server.Tau.
	Lambda float64
	// DPNoiseSeed ≠ 0 (with Options.Server.DP) gives each run its own
	// noise stream seeded by it, so that runs are reproducible and do not
	// share one noise source. The noise is then not secret: a published
	// result says so. 0 keeps Options.Server.DP.Noise (nil: secret noise).
	DPNoiseSeed uint64
	// Key is the method's name in reports; "" is fl.MethodPACPFL. A sweep
	// names its levels with it ("k=4").
	Key string
}

// pvPACPFL are the PV settings of PAC-PFL's and pFedGP's server, chosen by
// 5-fold cross-validation on the training clients of PV-EW(150) seed 1000
// (docs/math.md, "PV defaults by cross-validation"): η = 0.01, T = 500,
// σ_P = 0.5 (validation halves) and τ = 0.005 (validated on hours no
// training client saw).
func pvPACPFL(o *fl.PACPFLOptions, sigmaP bool) {
	o.Server.LR, o.Server.Rounds, o.Server.Tau = 0.01, 500, 0.005
	if sigmaP {
		o.SigmaP = 0.5
	}
}

// DefaultPACPFL is PACPFL with the defaults of preset p:
// fl.DefaultPACPFLOptions (the paper's), and on PV the cross-validated
// server settings η = 0.01, T = 500, σ_P = 0.5, τ = 0.005.
func DefaultPACPFL(p Preset) (PACPFL, error) {
	if err := p.check(); err != nil {
		return PACPFL{}, err
	}
	o := fl.DefaultPACPFLOptions()
	if p == PV {
		pvPACPFL(&o, true)
	}
	return PACPFL{Options: o}, nil
}

// Name is Key, or fl.MethodPACPFL.
func (m PACPFL) Name() string {
	if m.Key != "" {
		return m.Key
	}
	return fl.MethodPACPFL
}

// Validate reports the first option that cannot work on any data set
// (the number of clients and their sample sizes are checked by Run).
func (m PACPFL) Validate() error {
	o := m.Options
	if err := validateServer(o.Server, m.Lambda, m.DPNoiseSeed); err != nil {
		return err
	}
	switch b := o.Bounds; {
	case !(o.SigmaP > 0) || math.IsInf(o.SigmaP, 0):
		return fmt.Errorf("pacpfl: σ_P = %v must be positive and finite", o.SigmaP)
	case !(o.InitSigma >= 0) || math.IsInf(o.InitSigma, 0):
		return fmt.Errorf("pacpfl: initial σ = %v must be ≥ 0 and finite", o.InitSigma)
	case b.PriorSamples < 0 || b.FuncSamples < 0:
		return fmt.Errorf("pacpfl: negative bound samples (%d prior, %d function)", b.PriorSamples, b.FuncSamples)
	case b.PriorSamples > 0 || b.Learned != nil:
		if !(b.B > b.A) || math.IsInf(b.A, 0) || math.IsInf(b.B, 0) {
			return fmt.Errorf("pacpfl: loss range [%v, %v]: want finite a < b", b.A, b.B)
		}
		if !(b.Delta > 0 && b.Delta < 1) {
			return fmt.Errorf("pacpfl: δ = %v must be in (0, 1)", b.Delta)
		}
		if b.FuncSamples < 1 {
			return errors.New("pacpfl: the bounds need at least one function sample")
		}
	}
	return nil
}

// Run trains PAC-PFL on the existing clients of ds with the random streams
// of seed and evaluates it; each round is reported to obs (Value: the
// round's mean client ln Z^C).
func (m PACPFL) Run(ctx context.Context, ds *data.Dataset, seed uint64,
	obs harness.Observer) (*fl.MethodResult, error) {
	o, err := m.runOptions(ctx, ds, seed, obs)
	if err != nil {
		return nil, err
	}
	return fl.RunPACPFL(ds, m.Model.make(ds.D), o, fl.MethodPACPFL)
}

// runOptions are the options of one run: the seed, τ from λ, a fresh DP
// noise stream, and the round hooks that report to obs and stop on ctx.
func (m PACPFL) runOptions(ctx context.Context, ds *data.Dataset, seed uint64,
	obs harness.Observer) (fl.PACPFLOptions, error) {
	o := m.Options
	if err := m.Validate(); err != nil {
		return o, err
	}
	if err := ctx.Err(); err != nil {
		return o, err
	}
	if len(ds.Existing) == 0 {
		return o, errors.New("pacpfl: no existing clients to train on")
	}
	o.Server = serverForRun(o.Server, m.Lambda, m.DPNoiseSeed, ds, seed)
	o.Bounds.Seed = seed
	after := o.Server.AfterRound
	if obs != nil {
		o.Server.Progress = chainRounds(o.Server.Progress, obs, "")
	}
	o.Server.AfterRound = func(s *fl.Server, round int) error {
		if after != nil {
			if err := after(s, round); err != nil {
				return err
			}
		}
		return ctx.Err()
	}
	return o, nil
}

// serverForRun is the server configuration c for one run on ds with the
// streams of seed: τ from λ (if λ > 0) and, with a DP noise seed, a noise
// stream of the run's own.
func serverForRun(c fl.Config, lambda float64, noiseSeed uint64, ds *data.Dataset, seed uint64) fl.Config {
	c.Seed = seed
	if lambda > 0 {
		c.Tau = fl.TauFromLambda(lambda, float64(ds.MinM()), len(ds.Existing), ds.N2(), fl.Upsilon)
	}
	if noiseSeed != 0 && c.DP != nil {
		dp := *c.DP
		dp.Noise = rand.NewPCG(noiseSeed, dpNoiseStream)
		c.DP = &dp
	}
	return c
}

// validateServer checks a method's server configuration, λ and DP noise
// seed on any data set.
func validateServer(c fl.Config, lambda float64, noiseSeed uint64) error {
	if lambda != 0 {
		if !(lambda > 0) || math.IsInf(lambda, 0) {
			return fmt.Errorf("pacpfl: λ = %v must be positive and finite", lambda)
		}
		c.Tau = 0.5 // any valid τ: λ replaces it per data set
	}
	if err := c.Validate(max(1, c.ClientsPerRound)); err != nil {
		return fmt.Errorf("pacpfl: %w", err)
	}
	if noiseSeed != 0 && c.DP == nil {
		return errors.New("pacpfl: a DP noise seed without differential privacy")
	}
	return nil
}

// dpNoiseStream is the stream of DPNoiseSeed's generator (the one `pacpfl
// --dp-noise-seed` has always used, so that its runs stay reproducible).
const dpNoiseStream = 0x6470

// PFedGP is PAC-PFL as pFedGP (Achituve et al. 2021): one particle, a
// hyper-prior so wide that training maximises the clients' mean log
// marginal likelihood, and (Options.ZeroMean) the original's zero GP mean.
type PFedGP struct{ PACPFL }

// DefaultPFedGP is PFedGP with fl.DefaultPFedGPOptions, and on PV the
// server settings of DefaultPACPFL(PV) (η, T, τ; its initial σ stays
// PAC-PFL's σ_P).
func DefaultPFedGP(p Preset) (PFedGP, error) {
	if err := p.check(); err != nil {
		return PFedGP{}, err
	}
	o := fl.DefaultPFedGPOptions()
	if p == PV {
		pvPACPFL(&o, false)
	}
	return PFedGP{PACPFL{Options: o}}, nil
}

// Name is Key, or fl.MethodPFedGP.
func (m PFedGP) Name() string {
	if m.Key != "" {
		return m.Key
	}
	return fl.MethodPFedGP
}

// Run trains and evaluates pFedGP like PACPFL.Run.
func (m PFedGP) Run(ctx context.Context, ds *data.Dataset, seed uint64,
	obs harness.Observer) (*fl.MethodResult, error) {
	o, err := m.runOptions(ctx, ds, seed, obs)
	if err != nil {
		return nil, err
	}
	return fl.RunPACPFL(ds, m.Model.make(ds.D), o, fl.MethodPFedGP)
}

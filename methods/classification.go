package methods

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/fedavg"
	"github.com/pacpfl/pacpfl/fl/fedvi"
	"github.com/pacpfl/pacpfl/fl/genfl"
	"github.com/pacpfl/pacpfl/fl/pfedbayes"
	"github.com/pacpfl/pacpfl/harness"
	"github.com/pacpfl/pacpfl/lml"
)

// The methods of the personalised-classification comparison (Fashion-MNIST
// in pacpfl): PAC-PFL with BNN clients and its Vanilla and Pooled
// baselines, pFedBayes, FedAvg, FedProx and FedAvg+FT, FedVI and FedAvg on
// FedVI's network (with and without fine-tuning), GenFL's PFL.

// Phases of the events beyond the training rounds.
const (
	// PhasePersonalisation: the clients' posteriors after PAC-PFL's
	// training (Round of Rounds clients).
	PhasePersonalisation = "personalisation"
	// PhasePriorERM: GenFL's rounds learning its prior (Value: the mean
	// training loss).
	PhasePriorERM = "prior ERM"
)

// BNNModel makes the BNN client model of a run (a fresh one per run: the
// model keeps the estimators of its clients).
type BNNModel func() *fl.BNNModel

func (b BNNModel) make() *fl.BNNModel {
	if b == nil {
		return fl.NewBNNModel(lml.BNN{})
	}
	return b()
}

func observer(obs harness.Observer) harness.Observer {
	if obs == nil {
		return harness.ObserverFunc(func(harness.Event) {})
	}
	return obs
}

// PACPFLBNN is fl.RunPACPFLBNN: PAC-PFL with BNN clients, the clients'
// personalised posteriors and their predictions, and (Options.Bounds) the
// bounds. Run stops between two rounds when ctx is done.
type PACPFLBNN struct {
	// Options.Server.Seed and Options.Bounds.Seed are set by Run; the
	// Progress, AfterRound and Personalised hooks are kept and called
	// before the observer and the context check.
	Options fl.BNNOptions
	Model   BNNModel // nil: fl.NewBNNModel's default network
	// Lambda and DPNoiseSeed are PACPFL's: τ from the bound's λ per data
	// set, and a DP noise stream of each run's own.
	Lambda      float64
	DPNoiseSeed uint64
	Key         string // report name; "": fl.MethodPACPFL
}

// DefaultPACPFLBNN is PACPFLBNN with fl.DefaultBNNOptions (docs/math.md,
// "BNN defaults").
func DefaultPACPFLBNN() PACPFLBNN { return PACPFLBNN{Options: fl.DefaultBNNOptions()} }

// Name is Key, or fl.MethodPACPFL.
func (m PACPFLBNN) Name() string {
	if m.Key != "" {
		return m.Key
	}
	return fl.MethodPACPFL
}

// Validate reports the first option that cannot work on any data set.
func (m PACPFLBNN) Validate() error {
	o := m.Options
	if err := validateServer(o.Server, m.Lambda, m.DPNoiseSeed); err != nil {
		return err
	}
	switch {
	case !(o.SigmaMu > 0) || math.IsInf(o.SigmaMu, 0) || !(o.SigmaOmega > 0) || math.IsInf(o.SigmaOmega, 0):
		return fmt.Errorf("pacpfl: hyper-prior stds σ_μ = %v, σ_ω = %v must be positive and finite", o.SigmaMu,
			o.SigmaOmega)
	case o.Bounds.PriorSamples < 0 || o.Bounds.WeightDraws < 0:
		return fmt.Errorf("pacpfl: negative bound samples (%d prior, %d weight draws)", o.Bounds.PriorSamples,
			o.Bounds.WeightDraws)
	case o.Bounds.PriorSamples > 0 && !(o.Bounds.Delta > 0 && o.Bounds.Delta < 1):
		return fmt.Errorf("pacpfl: δ = %v must be in (0, 1)", o.Bounds.Delta)
	}
	return nil
}

// Run trains PAC-PFL on ds's existing clients with the random streams of
// seed; training rounds (Value: mean client ln Z^C) and the
// personalisation (PhasePersonalisation) go to obs.
func (m PACPFLBNN) Run(ctx context.Context, ds *data.Dataset, seed uint64,
	obs harness.Observer) (*fl.MethodResult, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	obs = observer(obs)
	o := m.Options
	o.Server = serverForRun(o.Server, m.Lambda, m.DPNoiseSeed, ds, seed)
	o.Bounds.Seed = seed
	after := o.Server.AfterRound
	o.Server.Progress = chainRounds(o.Server.Progress, obs, "")
	o.Server.AfterRound = func(s *fl.Server, round int) error {
		if after != nil {
			if err := after(s, round); err != nil {
				return err
			}
		}
		return ctx.Err()
	}
	o.Personalised = chainRounds(o.Personalised, obs, PhasePersonalisation)
	return fl.RunPACPFLBNN(ds, m.Model.make(), o)
}

// VanillaBNN is fl.RunVanillaBNN: each client's posterior under the
// hyper-prior's mean prior, no federation.
type VanillaBNN struct{ Model BNNModel }

// Name is fl.MethodVanilla.
func (VanillaBNN) Name() string { return fl.MethodVanilla }

// Validate has nothing to check.
func (VanillaBNN) Validate() error { return nil }

// Run personalises and evaluates every client of ds.
func (m VanillaBNN) Run(ctx context.Context, ds *data.Dataset, seed uint64,
	_ harness.Observer) (*fl.MethodResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return fl.RunVanillaBNN(ds, m.Model.make(), seed)
}

// PooledBNN is fl.RunPooledBNN: one posterior on the existing clients'
// pooled data, used by every client.
type PooledBNN struct{ Model BNNModel }

// Name is fl.MethodPooled.
func (PooledBNN) Name() string { return fl.MethodPooled }

// Validate has nothing to check.
func (PooledBNN) Validate() error { return nil }

// Run fits the pooled posterior and evaluates every client of ds.
func (m PooledBNN) Run(ctx context.Context, ds *data.Dataset, seed uint64,
	_ harness.Observer) (*fl.MethodResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return fl.RunPooledBNN(ds, m.Model.make(), seed)
}

// PFedBayes is pfedbayes.RunMethod (Zhang et al. 2022): personalised and
// global mean-field BNNs. Run stops between two rounds when ctx is done.
type PFedBayes struct {
	Options pfedbayes.Options // Seed, Stop set by Run; Progress kept
}

// DefaultPFedBayes is PFedBayes with the paper's settings.
func DefaultPFedBayes() PFedBayes { return PFedBayes{Options: pfedbayes.DefaultOptions()} }

// Name is pfedbayes.MethodPFedBayes.
func (PFedBayes) Name() string { return pfedbayes.MethodPFedBayes }

// Validate reports the first option that cannot work.
func (m PFedBayes) Validate() error { return m.Options.Validate() }

// Run trains and evaluates pFedBayes on ds with the random streams of seed.
func (m PFedBayes) Run(ctx context.Context, ds *data.Dataset, seed uint64,
	obs harness.Observer) (*fl.MethodResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	o := m.Options
	o.Seed, o.Progress, o.Stop = seed, chainRounds(o.Progress, observer(obs), ""), ctx.Err
	return pfedbayes.RunMethod(ds, o)
}

// chainRounds calls a method's own progress hook, then reports to obs.
func chainRounds(own func(fl.RoundEvent), obs harness.Observer, phase string) func(fl.RoundEvent) {
	return func(e fl.RoundEvent) {
		if own != nil {
			own(e)
		}
		obs.Observe(harness.Event{Kind: harness.Round, Phase: phase, Round: e.Round, Rounds: e.Rounds, Value: e.Value})
	}
}

// FedAvg is fedavg.RunMethods: FedAvg or FedProx (Options.Mu > 0) on the
// BNN architecture of the comparison, its global model evaluated on every
// client; with FineTuned, FedAvg+FT, the global model fine-tuned by each
// client (Options.FineTune steps). A FedAvg and a FedAvg+FT made by
// FedAvgPair share their training: on a seed and data set the second one
// to run reuses the first one's.
type FedAvg struct {
	Options   fedavg.Options // Seed, Stop set by Run; Progress kept
	FineTuned bool
	shared    *fedavgRun
}

// fedavgRun is the training FedAvg and FedAvg+FT share.
type fedavgRun struct {
	mu       sync.Mutex
	ds       *data.Dataset
	seed     uint64
	avg, ft  *fl.MethodResult
	finished bool
}

// DefaultFedAvg is FedAvg with the pFedBayes paper's settings.
func DefaultFedAvg() FedAvg { return FedAvg{Options: fedavg.DefaultOptions()} }

// DefaultFedProx is FedProx (μ = 0.001) with the pFedBayes paper's
// settings.
func DefaultFedProx() FedAvg { return FedAvg{Options: fedavg.FedProxOptions()} }

// FedAvgPair returns FedAvg and FedAvg+FT with options o (o.FineTune > 0),
// sharing one training per seed and data set.
func FedAvgPair(o fedavg.Options) (plain, tuned FedAvg) {
	r := &fedavgRun{}
	return FedAvg{Options: o, shared: r}, FedAvg{Options: o, FineTuned: true, shared: r}
}

// Name is fedavg.MethodFedAvgFT with FineTuned, fedavg.MethodFedProx with
// Options.Mu > 0, fedavg.MethodFedAvg otherwise.
func (m FedAvg) Name() string {
	switch {
	case m.FineTuned:
		return fedavg.MethodFedAvgFT
	case m.Options.Mu > 0:
		return fedavg.MethodFedProx
	}
	return fedavg.MethodFedAvg
}

// Validate reports the first option that cannot work.
func (m FedAvg) Validate() error {
	if m.FineTuned && m.Options.Mu > 0 {
		return errors.New("fedavg: FedAvg+FT fine-tunes FedAvg, not FedProx (μ > 0)")
	}
	if m.FineTuned && m.Options.FineTune < 1 {
		return fmt.Errorf("fedavg: FedAvg+FT needs fine-tuning steps (FineTune = %d)", m.Options.FineTune)
	}
	return m.Options.Validate()
}

// Run trains (or reuses its pair's training of) FedAvg on ds with the
// random streams of seed and evaluates it.
func (m FedAvg) Run(ctx context.Context, ds *data.Dataset, seed uint64,
	obs harness.Observer) (*fl.MethodResult, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	o := m.Options
	o.Seed, o.Progress, o.Stop = seed, chainRounds(o.Progress, observer(obs), ""), ctx.Err
	name := fedavg.MethodFedAvg
	if o.Mu > 0 {
		name = fedavg.MethodFedProx
	}
	run := func() (avg, ft *fl.MethodResult, err error) { return fedavg.RunMethods(ds, o, name) }
	var avg, ft *fl.MethodResult
	var err error
	if r := m.shared; r != nil {
		r.mu.Lock()
		defer r.mu.Unlock()
		if !r.finished || r.ds != ds || r.seed != seed {
			if r.avg, r.ft, err = run(); err != nil {
				r.finished = false
				return nil, err
			}
			r.ds, r.seed, r.finished = ds, seed, true
		}
		avg, ft = r.avg, r.ft
	} else if avg, ft, err = run(); err != nil {
		return nil, err
	}
	if m.FineTuned {
		return ft, nil
	}
	return avg, nil
}

// FedVI is fedvi.RunMethod (Vedadi et al.): FedVI's personalised
// classifiers; the result's Detail is the *fedvi.Result with the weighted
// accuracies of the evaluated rounds. An Options.Arch with no Classes
// takes the data set's (its other zero sizes and rates the paper's).
type FedVI struct {
	Options fedvi.Options // Seed, Stop set by Run; Progress kept
}

// DefaultFedVI is FedVI with the paper's settings.
func DefaultFedVI() FedVI { return FedVI{Options: fedvi.DefaultOptions()} }

// Name is fedvi.MethodFedVI.
func (FedVI) Name() string { return fedvi.MethodFedVI }

// Validate reports the first option that cannot work.
func (m FedVI) Validate() error { return m.Options.Validate() }

// Run trains and evaluates FedVI on ds with the random streams of seed.
func (m FedVI) Run(ctx context.Context, ds *data.Dataset, seed uint64, obs harness.Observer) (*fl.MethodResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	o := fedviRunOptions(m.Options, ds, seed, ctx, obs)
	res, r, err := fedvi.RunMethod(ds, o)
	if err != nil {
		return nil, err
	}
	res.Detail = r
	return res, nil
}

func fedviRunOptions(o fedvi.Options, ds *data.Dataset, seed uint64, ctx context.Context,
	obs harness.Observer) fedvi.Options {
	if o.Arch.Classes == 0 {
		o.Arch.Classes = ds.Classes
		o.Arch = o.Arch.WithDefaults()
	}
	o.Seed, o.Progress, o.Stop = seed, chainRounds(o.Progress, observer(obs), ""), ctx.Err
	return o
}

// FedVIFedAvg is fedvi.TrainFedAvg as a comparison's method: FedAvg on
// FedVI's network (the FedVI paper's FedAvg row) or, with FineTuned, its
// fine-tuned models (FineTune). The pair from FedVIFedAvgPair shares one
// training per seed and data set. The result's Detail is the
// *fedvi.Result.
type FedVIFedAvg struct {
	Options   fedvi.Options // as FedVI's
	FineTune  fedvi.FineTune
	FineTuned bool
	shared    *fedviAvgRun
}

type fedviAvgRun struct {
	mu           sync.Mutex
	ds           *data.Dataset
	seed         uint64
	plain, tuned *fedvi.Result
	finished     bool
}

// Method names of FedAvg on FedVI's network.
const (
	MethodFedVIFedAvg   = "fedvi-fedavg"
	MethodFedVIFedAvgFT = "fedvi-fedavg-ft"
)

// FedVIFedAvgPair returns FedAvg and FedAvg+FT on FedVI's network with
// options o and fine-tuning ft, sharing one training per seed and data set.
func FedVIFedAvgPair(o fedvi.Options, ft fedvi.FineTune) (plain, tuned FedVIFedAvg) {
	r := &fedviAvgRun{}
	return FedVIFedAvg{Options: o, FineTune: ft, shared: r},
		FedVIFedAvg{Options: o, FineTune: ft, FineTuned: true, shared: r}
}

// Name is MethodFedVIFedAvgFT with FineTuned, MethodFedVIFedAvg otherwise.
func (m FedVIFedAvg) Name() string {
	if m.FineTuned {
		return MethodFedVIFedAvgFT
	}
	return MethodFedVIFedAvg
}

// Validate reports the first option that cannot work.
func (m FedVIFedAvg) Validate() error {
	if m.FineTuned && m.FineTune.Epochs < 1 {
		return fmt.Errorf("fedvi: FedAvg+FT needs fine-tuning epochs (%d)", m.FineTune.Epochs)
	}
	return m.Options.Validate()
}

// Run trains (or reuses its pair's training of) FedAvg on FedVI's network.
func (m FedVIFedAvg) Run(ctx context.Context, ds *data.Dataset, seed uint64,
	obs harness.Observer) (*fl.MethodResult, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	o := fedviRunOptions(m.Options, ds, seed, ctx, obs)
	ft := m.FineTune
	var plain, tuned *fedvi.Result
	var err error
	if r := m.shared; r != nil {
		r.mu.Lock()
		defer r.mu.Unlock()
		if !r.finished || r.ds != ds || r.seed != seed || (m.FineTuned && r.tuned == nil) {
			if r.plain, r.tuned, err = fedvi.TrainFedAvg(ds, o, ft); err != nil {
				r.finished = false
				return nil, err
			}
			r.ds, r.seed, r.finished = ds, seed, true
		}
		plain, tuned = r.plain, r.tuned
	} else {
		if !m.FineTuned {
			ft.Epochs = 0
		}
		if plain, tuned, err = fedvi.TrainFedAvg(ds, o, ft); err != nil {
			return nil, err
		}
	}
	r := plain
	if m.FineTuned {
		r = tuned
	}
	return fedviResult(m.Name(), r, ds), nil
}

// fedviResult is r as method name's result, the run in Detail.
func fedviResult(name string, r *fedvi.Result, ds *data.Dataset) *fl.MethodResult {
	out := r.MethodResult(name, ds)
	out.Detail = r
	return out
}

// GenFL is genfl.RunMethod (Jobic, Haddouche, Guedj 2023, Alg. 3): a prior
// learnt on half of every existing client's data, each client's posterior
// from the other half, its predictive on its test images. With fewer users
// than the paper's 100, Run raises the fraction C of users per round so
// that 10 of them (or all) take part in each round. Run stops between two
// rounds of either federation when ctx is done.
type GenFL struct {
	// Options: Run sets the seeds (Reseed), the federations' Stop and
	// Fraction; Phase and PriorFed.Progress are kept.
	Options genfl.Options
}

// DefaultGenFL is GenFL with the paper's PFL settings: a learnt prior and
// the pairs estimator (genfl.DefaultOptions).
func DefaultGenFL() GenFL {
	return GenFL{Options: genfl.DefaultOptions(genfl.LearntPriorKind, genfl.Pairs, 0)}
}

// Name is genfl.MethodGenFL.
func (GenFL) Name() string { return genfl.MethodGenFL }

// Validate reports the first option that cannot work on any data set.
func (m GenFL) Validate() error {
	if err := m.Options.Arch.Validate(); err != nil {
		return err
	}
	if m.Options.TestDraws < 1 {
		return fmt.Errorf("genfl: %d test draws per image (want ≥ 1)", m.Options.TestDraws)
	}
	return nil
}

// Run trains and evaluates GenFL on ds with the random streams of seed;
// phases go to obs (Phase events), and the prior's rounds as PhasePriorERM
// rounds with their mean loss.
func (m GenFL) Run(ctx context.Context, ds *data.Dataset, seed uint64, obs harness.Observer) (*fl.MethodResult, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	obs = observer(obs)
	o := m.Options
	o.Reseed(seed)
	k := len(ds.Existing)
	c := math.Min(1, math.Max(o.PriorFed.Fraction, 10/float64(max(k, 1))))
	o.PriorFed.Fraction, o.PosteriorFed.Fraction = c, c
	o.PriorFed.Stop, o.PosteriorFed.Stop = ctx.Err, ctx.Err
	phase := o.Phase
	o.PriorFed.Progress = chainRounds(o.PriorFed.Progress, obs, PhasePriorERM)
	o.Phase = func(name string) {
		if phase != nil {
			phase(name)
		}
		obs.Observe(harness.Event{Kind: harness.Phase, Phase: name, Value: math.NaN()})
	}
	return genfl.RunMethod(ds, o, o.TestDraws)
}

// Phases of GenFLBound beyond GenFL's rounds.
const (
	// PhaseSampling: FEDBOUND's Monte Carlo step (Round of Rounds pairs,
	// or weight draws with the full estimator).
	PhaseSampling = "FEDBOUND sampling"
	// PhasePerUser: PFL's per-user personalisation and bounds (Round of
	// Rounds users).
	PhasePerUser = "per-user"
)

// GenFL settings of GenFLBound.
const (
	// FLSOB: GenFL + FEDBOUND (Alg. 1/2): one posterior for the users'
	// pooled distribution and its certified 0–1 error.
	FLSOB = "flsob"
	// PFL: each user's personalised posterior and its own certificate
	// (Alg. 3/4).
	PFL = "pfl"
)

// GenFLBound is GenFL's certificate experiment (Jobic, Haddouche, Guedj
// 2023, Tables 1 and 2): genfl.RunFLSOB or genfl.RunPFL on the data set's
// users (training images for the prior and the bound, test images for the
// measured error). The result's Detail is the *genfl.FLSOBResult or
// *genfl.PFLResult; its groups are empty (the figures are the bound's).
// Progress: Phase events, the prior's rounds (PhasePriorERM, Value: mean
// loss), GenFL's rounds (Value: mean objective), FEDBOUND's sampling
// (PhaseSampling) and PFL's users (PhasePerUser). Run stops between two
// rounds of either federation when ctx is done.
type GenFLBound struct {
	// Options: Run sets the seeds (Reseed) and the progress and Stop
	// hooks.
	Options genfl.Options
	Setting string // FLSOB or PFL
}

// Name is genfl.MethodGenFL.
func (GenFLBound) Name() string { return genfl.MethodGenFL }

// Validate reports the first option that cannot work on any data set.
func (m GenFLBound) Validate() error {
	if m.Setting != FLSOB && m.Setting != PFL {
		return fmt.Errorf("genfl: unknown setting %q (%s or %s)", m.Setting, FLSOB, PFL)
	}
	return m.Options.Arch.Validate()
}

// Run trains GenFL on ds's existing users and certifies it.
func (m GenFLBound) Run(ctx context.Context, ds *data.Dataset, seed uint64,
	obs harness.Observer) (*fl.MethodResult, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	train, err := genfl.TrainClients(ds)
	if err != nil {
		return nil, err
	}
	test, err := genfl.TestClients(ds)
	if err != nil {
		return nil, err
	}
	obs = observer(obs)
	o := m.Options
	o.Reseed(seed)
	o.PriorFed.Stop, o.PosteriorFed.Stop = ctx.Err, ctx.Err
	o.PriorFed.Progress, o.PosteriorFed.Progress = chainRounds(nil, obs, PhasePriorERM), chainRounds(nil, obs, "")
	o.MC.Progress, o.UserProgress = chainRounds(nil, obs, PhaseSampling), chainRounds(nil, obs, PhasePerUser)
	o.Phase = func(name string) {
		obs.Observe(harness.Event{Kind: harness.Phase, Phase: name, Value: math.NaN()})
	}
	start := time.Now()
	out := &fl.MethodResult{Method: genfl.MethodGenFL}
	if m.Setting == FLSOB {
		out.Detail, err = genfl.RunFLSOB(train, test, o)
	} else {
		out.Detail, err = genfl.RunPFL(train, test, o)
	}
	if err != nil {
		return nil, err
	}
	out.Elapsed = time.Since(start)
	out.Seconds = out.Elapsed.Seconds()
	return out, nil
}

package main

import (
	"flag"
	"fmt"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/train"
)

// trainFlags are the parameters of a PAC-PFL run (Algorithm 1, 3 with DP),
// bound directly to the library's options in small flag groups: each
// command registers exactly the groups it reads, and a group it does not
// register keeps the library's defaults (newTrainFlags).
type trainFlags struct {
	o    fl.PACPFLOptions      // the server loop, σ_P and the bounds
	poly data.PolynomialConfig // the synthetic data set's sizes
	dp   fl.DPConfig           // Algorithm 3 (Epsilon 0: no DP)
	gi   fl.GPInference        // the GP clients' inference (Seed: seed)
	seed uint64                // --seed (train, server, client, tune)
	// aggregate, beta and lossRange are parsed by train.Settings.
	aggregate, beta, lossRange string
	lambda                     float64 // --lambda: sets τ (0: --tau)
	dpNoiseSeed                uint64
	learnedSamples             int // --bound-trained-samples (0: no learned bound)
	pfedgpMean                 string
	baselineSteps              int
	baselineSet                bool            // --baseline-steps given (else each method's data-set default)
	net                        gpNetFlags      // experiment and tune: the GP networks
	pv                         *data.PVConfig  // replaces the Polynomial data set (experiment pv, tune pv)
	dpSweep                    bool            // experiment --dp-sweep: ε comes from the sweep
	kSweep                     bool            // experiment --k-sweep: k comes from the sweep
	dpDeltaSet                 bool            // --dp-delta given (afterParse; false in a sweep's ε = 0 run)
	given                      map[string]bool // the flags on the command line (afterParse)
}

// newTrainFlags returns the flags with the library's defaults (the DP
// flags' with the values docs/math.md chose for the CLI).
func newTrainFlags() trainFlags {
	o := fl.DefaultPACPFLOptions()
	return trainFlags{o: o, poly: data.DefaultPolynomial(), seed: 1,
		dp:        fl.DPConfig{Mechanism: fl.DPLaplace, Delta: 1e-5, Clip: 10},
		gi:        fl.GPInference{Mode: fl.InferenceAuto},
		aggregate: "sum", beta: "m", lossRange: fmt.Sprintf("%g,%g", o.Bounds.A, o.Bounds.B),
		learnedSamples: fl.DefaultLearnedSamples, pfedgpMean: "linear", baselineSteps: fl.DefaultVanillaOptions().Steps}
}

// registerSVGD registers the server's SVGD loop and the clients'
// temperature β.
func (f *trainFlags) registerSVGD(fs *flag.FlagSet) {
	s := &f.o.Server
	fs.IntVar(&s.K, "k", s.K, "number of SVGD particles (priors) k")
	fs.IntVar(&s.Rounds, "rounds", s.Rounds, "server iterations T")
	fs.IntVar(&s.Rounds, "T", s.Rounds, "shorthand for --rounds")
	fs.IntVar(&s.ClientsPerRound, "clients-per-round", s.ClientsPerRound, "clients sampled per round c (0: min(n, 24))")
	fs.IntVar(&s.ClientsPerRound, "c", s.ClientsPerRound, "shorthand for --clients-per-round")
	fs.IntVar(&s.Batch, "batch", s.Batch, "client mini-batch size b (0: all of S_i, the exact LML)")
	fs.Float64Var(&s.LR, "lr", s.LR, "server learning rate η")
	fs.StringVar(&s.Optimizer, "optimizer", s.Optimizer, "SVGD optimiser: adam or sgd (plain ascent)")
	fs.StringVar(&f.aggregate, "aggregate", f.aggregate,
		"aggregation of client gradients: sum (τ·n/c·Σ, unbiased for eq. 40) or mean (Algorithm 1 literally)")
	fs.StringVar(&f.beta, "beta", f.beta, "client temperature β of training, personalisation and the bounds: m (β = "+
		"m_i, Bayes posterior and LML, as the paper), sqrt (β = √m_i) or a number")
}

// registerSeed registers --seed: the comparisons (experiment) have
// --seeds and --seed-base instead.
func registerSeed(fs *flag.FlagSet, seed *uint64) {
	fs.Uint64Var(seed, "seed", *seed, "random seed (data, initialisation, client sampling)")
}

// registerTemp registers the server's temperature and hyper-prior; tune
// searches them, so it does not register them.
func (f *trainFlags) registerTemp(fs *flag.FlagSet) {
	fs.Float64Var(&f.o.SigmaP, "sigma-p", f.o.SigmaP, "hyper-prior std σ_P (also the initial particle spread)")
	fs.Float64Var(&f.lambda, "lambda", f.lambda,
		"server constant λ; sets τ = λ/(λ + βn(n₂+υ)), β = min m_i (exclusive with --tau)")
	fs.Float64Var(&f.o.Server.Tau, "tau", f.o.Server.Tau, "server temperature τ")
}

// registerDP registers differentially private training (Algorithm 3,
// corrected).
func (f *trainFlags) registerDP(fs *flag.FlagSet) {
	d := &f.dp
	fs.Float64Var(&d.Epsilon, "dp-epsilon", d.Epsilon,
		"differentially private training (Algorithm 3, corrected): the guaranteed ε (0: no DP)")
	fs.StringVar((*string)(&d.Mechanism), "dp-mechanism", string(d.Mechanism), "DP mechanism: laplace (pure ε-DP, L1 "+
		"clip), gaussian ((ε, δ)-DP, L2 clip, Rényi accounting) or paper (Algorithm 3 as printed; its ε is not a "+
		"guarantee)")
	fs.Float64Var(&d.Delta, "dp-delta", d.Delta, "δ of (ε, δ)-DP for --dp-mechanism gaussian")
	fs.Float64Var(&d.Clip, "dp-clip", d.Clip, "DP clip norm γ of each client's whole k×dφ update (L1 for laplace, L2 "+
		"for gaussian, L2 per particle row for paper); 10 chosen on Polynomial data seed 1000 (docs/math.md)")
	fs.Uint64Var(&f.dpNoiseSeed, "dp-noise-seed", f.dpNoiseSeed, "seed of the DP noise, for reproducible runs (0: a "+
		"secret seed from the OS; with a known seed the guarantee does not hold against whoever knows it)")
}

// registerBounds registers the PAC-Bayesian bounds of a trained run; the
// comparisons (experiment, tune) compute none, so they do not register
// them.
func (f *trainFlags) registerBounds(fs *flag.FlagSet) {
	b := &f.o.Bounds
	fs.Float64Var(&b.Delta, "delta", b.Delta, "confidence δ of the bounds")
	fs.IntVar(&f.learnedSamples, "bound-trained-samples", f.learnedSamples,
		"draws from the trained hyper-posterior for its bound (0: skip that bound)")
	fs.StringVar(&f.lossRange, "loss-range", f.lossRange, "loss range a,b of the bounds (the NLL is clipped to it)")
	fs.IntVar(&b.PriorSamples, "bound-samples", b.PriorSamples, "hyper-prior draws for ln Z^S (0: skip the bounds)")
	fs.IntVar(&b.FuncSamples, "func-samples", b.FuncSamples, "GP function draws per ln Z^C of the bounds")
}

// registerData registers the synthetic data set's sizes (a CSV file brings
// its own clients, so train --data FILE.csv does not register them).
func (f *trainFlags) registerData(fs *flag.FlagSet) {
	p := &f.poly
	fs.IntVar(&p.Existing, "clients", p.Existing, "existing clients n of the Polynomial data set")
	fs.IntVar(&p.New, "new-clients", p.New, "new clients of the Polynomial data set")
	fs.IntVar(&p.Extra, "extra", p.Extra, "personalisation-only samples m̃_i per existing client")
}

// registerComparison registers the baselines' settings of experiment
// polynomial and pv.
func (f *trainFlags) registerComparison(fs *flag.FlagSet) {
	fs.IntVar(&f.baselineSteps, "baseline-steps", f.baselineSteps,
		"Adam steps of the Vanilla and Pooled fits (PV: Vanilla's and Pooled's own defaults, docs/math.md)")
	fs.StringVar(&f.pfedgpMean, "pfedgp-mean", f.pfedgpMean, "pFedGP's GP mean: linear (chosen by the paper's "+
		"cross-validation), zero (the original pFedGP) or nn (PAC-PFL's mean network)")
}

// gpInferenceHelp is --gp-inference's help: where auto switches and why.
var gpInferenceHelp = fmt.Sprintf("how a GP client computes ln Z^C and predicts: exact (dense Cholesky of its m×m "+
	"kernel matrix: about m³ flop and 3·m² doubles per particle), "+
	"sparse (the Titsias lower bound with --inducing M inputs chosen from the client's own rows by k-means++ "+
	"seeding: about 4·m·M² flop and O(M²) memory; docs/math.md), "+
	"or auto: exact up to %d rows per client (about a second and 400 MB per particle on two cores), sparse above",
	fl.AutoExactMaxRows)

// registerInference registers --gp-inference and --inducing (the GP
// commands).
func (f *trainFlags) registerInference(fs *flag.FlagSet) {
	fs.StringVar(&f.gi.Mode, "gp-inference", f.gi.Mode, gpInferenceHelp)
	fs.IntVar(&f.gi.Inducing, "inducing", f.gi.Inducing, fmt.Sprintf("inducing inputs M of a sparse GP client (0: "+
		"%d, or the client's rows if fewer; more than a sparse client's rows is an error)", fl.DefaultInducing))
}

// inference is the GP inference of the flags; the run's seed, with each
// client's data, seeds the choice of its inducing inputs.
func (f *trainFlags) inference() fl.GPInference {
	gi := f.gi
	gi.Seed = f.seed
	return gi
}

// registerTraining registers the groups of one PAC-PFL training run
// (train, server, client): all but the comparisons' and the GP networks';
// synthetic: the data set is generated (the data group), not a CSV file.
func (f *trainFlags) registerTraining(fs *flag.FlagSet, synthetic bool) {
	f.registerSVGD(fs)
	registerSeed(fs, &f.seed)
	f.registerTemp(fs)
	f.registerDP(fs)
	f.registerBounds(fs)
	if synthetic {
		f.registerData(fs)
	}
	f.registerInference(fs)
}

// The validation of the training flags (train, experiment, tune, server,
// client): train.Settings checks their values before any data are made or
// read, and what depends on the data (c ≤ n, the batch against m_i, the
// bound assumptions, memory) on the first seed's data, still before any
// work; the checks here are those of which flags were given.

// settings are the training flags as the library's settings.
func (f *trainFlags) settings() *train.Settings {
	return &train.Settings{Options: f.o, StrictBatch: f.given["batch"], Polynomial: f.poly, PV: f.pv,
		Inference: f.gi, Aggregate: f.aggregate, Temperature: f.beta, LossRange: f.lossRange, Lambda: f.lambda,
		LearnedSamples: f.learnedSamples, DP: f.dp, DPNoiseSeed: f.dpNoiseSeed}
}

// settingsFlags name the fields of train.Settings by their flags.
var settingsFlags = map[string]string{
	"Options.Server.K": "k", "Options.Server.Rounds": "rounds", "Options.Server.ClientsPerRound": "clients-per-round",
	"Options.Server.Batch": "batch", "Options.Server.LR": "lr", "Options.Server.Tau": "tau",
	"Options.Server.Optimizer": "optimizer", "Options.SigmaP": "sigma-p", "Options.Bounds.Delta": "delta",
	"Options.Bounds.PriorSamples": "bound-samples", "Options.Bounds.FuncSamples": "func-samples",
	"Aggregate": "aggregate", "Temperature": "beta", "Polynomial.Existing": "clients", "Polynomial.New": "new-clients",
	"Polynomial.Extra": "extra", "LearnedSamples": "bound-trained-samples", "LossRange": "loss-range",
	"Lambda": "lambda", "DP.Epsilon": "dp-epsilon", "DP.Clip": "dp-clip", "DP.Delta": "dp-delta",
	"Inference.Inducing": "inducing", "Inference.Mode": "gp-inference",
}

// settingsError is an error of the settings as a usage error naming the
// flags.
func settingsError(err error) error {
	return fieldUsage(err, func(field string) string { return settingsFlags[field] })
}

// validate checks the training flags that do not depend on the data. fs
// tells which flags were given.
func (f *trainFlags) validate(fs *flag.FlagSet) error {
	given := func(name string) bool { return flagSet(fs, name) }
	for _, pair := range [][2]string{{"rounds", "T"}, {"clients-per-round", "c"}} {
		if given(pair[0]) && given(pair[1]) {
			// The flag package lets the last one win, silently.
			return usagef("--%s and -%s are the same flag: give one", pair[0], pair[1])
		}
	}
	if err := f.settings().Validate(); err != nil {
		return settingsError(err)
	}
	if f.lambda != 0 && f.given["tau"] {
		return usagef("--lambda and --tau both set τ: give only one")
	}
	if f.dp.Epsilon == 0 && !f.dpSweep {
		for _, name := range []string{"dp-mechanism", "dp-delta", "dp-clip", "dp-noise-seed"} {
			if given(name) {
				return usagef("--%s needs --dp-epsilon > 0 (without it training is not private)", name)
			}
		}
	}
	return nil
}

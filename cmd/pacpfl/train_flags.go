package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
)

// trainFlags are the parameters of a PAC-PFL run (Algorithm 1, 3 with DP)
// as small flag groups: each command registers exactly the groups it reads
// (newTrainFlags gives every group its defaults, so a group a command does
// not register keeps them).
type trainFlags struct {
	svgdFlags
	seed uint64 // --seed (train, server, client, tune)
	tempFlags
	dpFlags
	boundsFlags
	dataFlags
	gpInferenceFlags
	comparisonFlags
	net     gpNetFlags      // experiment and tune: the GP networks
	dpSweep bool            // experiment --dp-sweep: ε comes from the sweep
	kSweep  bool            // experiment --k-sweep: k comes from the sweep
	given   map[string]bool // the flags on the command line
}

// newTrainFlags returns the flags with every group's defaults, taken from
// the groups' own registrations (on a set nobody parses) so that the
// defaults are written once: a group a command does not register keeps
// them.
func newTrainFlags() trainFlags {
	var f trainFlags
	scratch := flag.NewFlagSet("", flag.ContinueOnError)
	f.svgdFlags.register(scratch)
	registerSeed(scratch, &f.seed)
	f.tempFlags.register(scratch)
	f.dpFlags.register(scratch)
	f.boundsFlags.register(scratch)
	f.dataFlags.register(scratch)
	f.gpInferenceFlags.register(scratch)
	f.comparisonFlags.register(scratch)
	return f
}

// svgdFlags are the server's SVGD loop and the clients' temperature β.
type svgdFlags struct {
	k, rounds, clientsPerRound, batch int
	lr                                float64
	optimizer, aggregate              string
	beta                              string
}

func (g *svgdFlags) register(fs *flag.FlagSet) {
	d := fl.DefaultPACPFLOptions()
	fs.IntVar(&g.k, "k", d.Server.K, "number of SVGD particles (priors) k")
	fs.IntVar(&g.rounds, "rounds", d.Server.Rounds, "server iterations T")
	fs.IntVar(&g.rounds, "T", d.Server.Rounds, "shorthand for --rounds")
	fs.IntVar(&g.clientsPerRound, "clients-per-round", 0, "clients sampled per round c (0: min(n, 24))")
	fs.IntVar(&g.clientsPerRound, "c", 0, "shorthand for --clients-per-round")
	fs.IntVar(&g.batch, "batch", 0, "client mini-batch size b (0: all of S_i, the exact LML)")
	fs.Float64Var(&g.lr, "lr", d.Server.LR, "server learning rate η")
	fs.StringVar(&g.optimizer, "optimizer", "adam", "SVGD optimiser: adam or sgd (plain ascent)")
	fs.StringVar(&g.aggregate, "aggregate", "sum", "aggregation of client gradients: sum (τ·n/c·Σ, unbiased for eq. 40) or mean (Algorithm 1 literally)")
	fs.StringVar(&g.beta, "beta", "m", "client temperature β of training, personalisation and the bounds: m (β = m_i, Bayes posterior and LML, as the paper), sqrt (β = √m_i) or a number")
}

// registerSeed registers --seed: the comparisons (experiment) have
// --seeds and --seed-base instead.
func registerSeed(fs *flag.FlagSet, seed *uint64) {
	fs.Uint64Var(seed, "seed", 1, "random seed (data, initialisation, client sampling)")
}

// tempFlags are the server's temperature and hyper-prior; tune searches
// them, so it does not register them.
type tempFlags struct {
	sigmaP, lambda, tau float64
	tauSet              bool // --tau given explicitly (it excludes --lambda)
}

func (g *tempFlags) register(fs *flag.FlagSet) {
	d := fl.DefaultPACPFLOptions()
	fs.Float64Var(&g.sigmaP, "sigma-p", d.SigmaP, "hyper-prior std σ_P (also the initial particle spread)")
	fs.Float64Var(&g.lambda, "lambda", 0, "server constant λ; sets τ = λ/(λ + βn(n₂+υ)), β = min m_i (exclusive with --tau)")
	fs.Float64Var(&g.tau, "tau", d.Server.Tau, "server temperature τ")
}

// dpFlags are differentially private training (Algorithm 3, corrected).
type dpFlags struct {
	dpEpsilon, dpClip, dpDelta float64
	dpMechanism                string
	dpNoiseSeed                uint64
	dpDeltaSet                 bool // --dp-delta given explicitly
}

func (g *dpFlags) register(fs *flag.FlagSet) {
	fs.Float64Var(&g.dpEpsilon, "dp-epsilon", 0, "differentially private training (Algorithm 3, corrected): the guaranteed ε (0: no DP)")
	fs.StringVar(&g.dpMechanism, "dp-mechanism", string(fl.DPLaplace), "DP mechanism: laplace (pure ε-DP, L1 clip), gaussian ((ε, δ)-DP, L2 clip, Rényi accounting) or paper (Algorithm 3 as printed; its ε is not a guarantee)")
	fs.Float64Var(&g.dpDelta, "dp-delta", 1e-5, "δ of (ε, δ)-DP for --dp-mechanism gaussian")
	fs.Float64Var(&g.dpClip, "dp-clip", 10, "DP clip norm γ of each client's whole k×dφ update (L1 for laplace, L2 for gaussian, L2 per particle row for paper); 10 chosen on Polynomial data seed 1000 (docs/math.md)")
	fs.Uint64Var(&g.dpNoiseSeed, "dp-noise-seed", 0, "seed of the DP noise, for reproducible runs (0: a secret seed from the OS; with a known seed the guarantee does not hold against whoever knows it)")
}

// boundsFlags are the PAC-Bayesian bounds of a trained run; the
// comparisons (experiment, tune) compute none, so they do not register
// them.
type boundsFlags struct {
	delta                     float64
	lossRange                 string
	learnedSamples            int
	boundSamples, funcSamples int
}

func (g *boundsFlags) register(fs *flag.FlagSet) {
	d := fl.DefaultPACPFLOptions()
	fs.Float64Var(&g.delta, "delta", d.Bounds.Delta, "confidence δ of the bounds")
	fs.IntVar(&g.learnedSamples, "bound-trained-samples", fl.DefaultLearnedSamples, "draws from the trained hyper-posterior for its bound (0: skip that bound)")
	fs.StringVar(&g.lossRange, "loss-range", fmt.Sprintf("%g,%g", d.Bounds.A, d.Bounds.B), "loss range a,b of the bounds (the NLL is clipped to it)")
	fs.IntVar(&g.boundSamples, "bound-samples", d.Bounds.PriorSamples, "hyper-prior draws for ln Z^S (0: skip the bounds)")
	fs.IntVar(&g.funcSamples, "func-samples", d.Bounds.FuncSamples, "GP function draws per ln Z^C of the bounds")
}

// dataFlags size the synthetic data set (a CSV file brings its own
// clients, so train --data FILE.csv does not register them).
type dataFlags struct {
	clients, newClients, extra int
	// pv, when set, replaces the Polynomial data set (experiment pv, tune pv).
	pv *data.PVConfig
}

func (g *dataFlags) register(fs *flag.FlagSet) {
	dp := data.DefaultPolynomial()
	fs.IntVar(&g.clients, "clients", dp.Existing, "existing clients n of the Polynomial data set")
	fs.IntVar(&g.newClients, "new-clients", dp.New, "new clients of the Polynomial data set")
	fs.IntVar(&g.extra, "extra", dp.Extra, "personalisation-only samples m̃_i per existing client")
}

// comparisonFlags are the baselines' settings of experiment polynomial
// and pv.
type comparisonFlags struct {
	pfedgpMean    string
	baselineSteps int
	baselineSet   bool // --baseline-steps given (else each method's data-set default)
}

func (g *comparisonFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&g.baselineSteps, "baseline-steps", fl.DefaultVanillaOptions().Steps, "Adam steps of the Vanilla and Pooled fits (PV: Vanilla's and Pooled's own defaults, docs/math.md)")
	fs.StringVar(&g.pfedgpMean, "pfedgp-mean", "linear", "pFedGP's GP mean: linear (chosen by the paper's cross-validation), zero (the original pFedGP) or nn (PAC-PFL's mean network)")
}

// gpInferenceFlags are --gp-inference and --inducing (the GP commands).
type gpInferenceFlags struct {
	gpInference string
	inducing    int
}

// gpInferenceHelp is --gp-inference's help: where auto switches and why.
var gpInferenceHelp = fmt.Sprintf("how a GP client computes ln Z^C and predicts: exact (dense Cholesky of its m×m kernel matrix: about m³ flop and 3·m² doubles per particle), "+
	"sparse (the Titsias lower bound with --inducing M inputs chosen from the client's own rows by k-means++ seeding: about 4·m·M² flop and O(M²) memory; docs/math.md), "+
	"or auto: exact up to %d rows per client (about a second and 400 MB per particle on two cores), sparse above", fl.AutoExactMaxRows)

func (g *gpInferenceFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&g.gpInference, "gp-inference", fl.InferenceAuto, gpInferenceHelp)
	fs.IntVar(&g.inducing, "inducing", 0, fmt.Sprintf("inducing inputs M of a sparse GP client (0: %d, or the client's rows if fewer; more than a sparse client's rows is an error)", fl.DefaultInducing))
}

// inference is the GP inference of the flags; the run's seed, with each
// client's data, seeds the choice of its inducing inputs.
func (f *trainFlags) inference() fl.GPInference {
	return fl.GPInference{Mode: f.gpInference, Inducing: f.inducing, Seed: f.seed}
}

// registerTraining registers the groups of one PAC-PFL training run
// (train, server, client): all but the comparisons' and the GP networks';
// synthetic: the data set is generated (the data group), not a CSV file.
func (f *trainFlags) registerTraining(fs *flag.FlagSet, synthetic bool) {
	f.svgdFlags.register(fs)
	registerSeed(fs, &f.seed)
	f.tempFlags.register(fs)
	f.dpFlags.register(fs)
	f.boundsFlags.register(fs)
	if synthetic {
		f.dataFlags.register(fs)
	}
	f.gpInferenceFlags.register(fs)
}

// The validation of the training flags (train, experiment, tune, server,
// client): every group checks its values, by the name the user typed, before
// any data are made or read; what depends on the data (c ≤ n, the batch
// against m_i, the bound assumptions, memory) is checked by options on the
// first seed's data, still before any work.

// validate checks the training flags that do not depend on the data. fs
// tells which flags were given.
func (f *trainFlags) validate(fs *flag.FlagSet) error {
	given := func(name string) bool { return flagSet(fs, name) }
	for _, check := range []func() error{
		func() error { return f.svgdFlags.check(given) },
		f.dataFlags.check,
		f.boundsFlags.check,
		f.tempFlags.check,
		func() error { return f.dpFlags.check(given, f.dpSweep) },
	} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// checkPositive refuses a value of flag name that is not positive and
// finite (NaN too).
func checkPositive(name string, v float64) error {
	if !(v > 0) || math.IsInf(v, 0) {
		return usagef("--%s %v must be positive and finite", name, v)
	}
	return nil
}

// check validates the server loop's flags and β.
func (g *svgdFlags) check(given func(string) bool) error {
	for _, pair := range [][2]string{{"rounds", "T"}, {"clients-per-round", "c"}} {
		if given(pair[0]) && given(pair[1]) {
			// The flag package lets the last one win, silently.
			return usagef("--%s and -%s are the same flag: give one", pair[0], pair[1])
		}
	}
	switch {
	case g.k < 1:
		return usagef("--k %d must be at least 1", g.k)
	case g.rounds < 0:
		return usagef("--rounds %d must be ≥ 0", g.rounds)
	case g.clientsPerRound < 0:
		return usagef("--clients-per-round %d must be at least 1 (or 0: min(n, %d))", g.clientsPerRound,
			fl.DefaultClientsPerRound)
	case g.batch < 0:
		return usagef("--batch %d must be at least 1 (or 0: all of S_i, the exact LML)", g.batch)
	case g.optimizer != "adam" && g.optimizer != "sgd":
		return usagef("unknown --optimizer %q (want adam or sgd)", g.optimizer)
	case g.aggregate != "sum" && g.aggregate != "mean":
		return usagef("unknown --aggregate %q (want sum or mean)", g.aggregate)
	}
	if err := checkPositive("lr", g.lr); err != nil {
		return err
	}
	if _, err := fl.ParseTemperature(g.beta); err != nil {
		return usagef("--beta: %v", err)
	}
	return nil
}

// check validates the data set's sizes.
func (g *dataFlags) check() error {
	switch {
	case g.clients < 1:
		return usagef("--clients %d must be at least 1", g.clients)
	case g.newClients < 0:
		return usagef("--new-clients %d must be ≥ 0", g.newClients)
	case g.extra < 0:
		return usagef("--extra %d must be ≥ 0", g.extra)
	}
	return nil
}

// check validates the bounds' flags.
func (g *boundsFlags) check() error {
	switch {
	case g.boundSamples < 0:
		return usagef("--bound-samples %d must be ≥ 0 (0: skip the bounds)", g.boundSamples)
	case g.funcSamples < 1:
		return usagef("--func-samples %d must be at least 1", g.funcSamples)
	case g.learnedSamples < 0:
		return usagef("--bound-trained-samples %d must be ≥ 0 (0: skip that bound)", g.learnedSamples)
	case !(g.delta > 0 && g.delta < 1):
		return usagef("--delta %v must lie in (0, 1)", g.delta)
	}
	if _, _, err := parseRange(g.lossRange); err != nil {
		return usageError{err}
	}
	return nil
}

// check validates the temperature's flags.
func (g *tempFlags) check() error {
	if !(g.lambda >= 0) || math.IsInf(g.lambda, 0) {
		return usagef("--lambda %v must be positive and finite (0: use --tau)", g.lambda)
	}
	if err := checkPositive("tau", g.tau); err != nil {
		return err
	}
	if err := checkPositive("sigma-p", g.sigmaP); err != nil {
		return err
	}
	if g.lambda != 0 && g.tauSet {
		return usagef("--lambda and --tau both set τ: give only one")
	}
	return nil
}

// check validates the DP flags; sweep: --dp-sweep gives ε.
func (g *dpFlags) check(given func(string) bool, sweep bool) error {
	if !(g.dpEpsilon >= 0) || math.IsInf(g.dpEpsilon, 0) {
		// NaN used to run silently without DP.
		return usagef("--dp-epsilon %v must be positive and finite (0: no DP)", g.dpEpsilon)
	}
	if err := checkPositive("dp-clip", g.dpClip); err != nil {
		return err
	}
	if given("dp-delta") && !(g.dpDelta > 0 && g.dpDelta < 1) {
		return usagef("--dp-delta %v must lie in (0, 1)", g.dpDelta)
	}
	if g.dpEpsilon == 0 && !sweep {
		for _, name := range []string{"dp-mechanism", "dp-delta", "dp-clip", "dp-noise-seed"} {
			if given(name) {
				return usagef("--%s needs --dp-epsilon > 0 (without it training is not private)", name)
			}
		}
	}
	return nil
}

// options are the bound options of the flags (the bounds' draws seeded
// by seed).
func (g *boundsFlags) options(seed uint64) (fl.BoundOptions, error) {
	a, b, err := parseRange(g.lossRange)
	if err != nil {
		return fl.BoundOptions{}, usageError{err}
	}
	if g.boundSamples < 0 || g.funcSamples < 1 {
		return fl.BoundOptions{}, usagef("--bound-samples must be ≥ 0 and --func-samples ≥ 1")
	}
	if g.learnedSamples < 0 {
		return fl.BoundOptions{}, usagef("--bound-trained-samples %d must be ≥ 0", g.learnedSamples)
	}
	o := fl.BoundOptions{A: a, B: b, Delta: g.delta, PriorSamples: g.boundSamples, FuncSamples: g.funcSamples, Seed: seed}
	if g.learnedSamples > 0 {
		o.Learned = &fl.LearnedBoundOptions{Samples: g.learnedSamples}
	}
	return o, nil
}

// config is the server configuration of the loop's flags (seeded by
// seed); serverConfig adds what depends on the data and the other groups.
func (g *svgdFlags) config(seed uint64) (fl.Config, error) {
	s := fl.Config{K: g.k, Rounds: g.rounds, ClientsPerRound: g.clientsPerRound, Batch: g.batch, LR: g.lr,
		Optimizer: g.optimizer, Seed: seed}
	switch g.aggregate {
	case "sum":
		s.Aggregation = fl.AggregateSum
	case "mean":
		s.Aggregation = fl.AggregateMean
	default:
		return s, usagef("unknown --aggregate %q (want sum or mean)", g.aggregate)
	}
	return s, nil
}

// serverTau is the server temperature τ of the flags for the existing
// clients of ds: --tau, or --lambda's with β = min m_i.
func (g *tempFlags) serverTau(ds *data.Dataset) (float64, error) {
	if g.lambda != 0 && g.tauSet {
		// λ sets τ; silently preferring one of the two would run a
		// temperature the user did not ask for.
		return 0, usagef("--lambda and --tau both set τ: give only one")
	}
	if g.lambda == 0 {
		return g.tau, nil
	}
	if err := checkPositive("lambda", g.lambda); err != nil {
		return 0, err
	}
	return fl.TauFromLambda(g.lambda, float64(ds.MinM()), len(ds.Existing), ds.N2(), fl.Upsilon), nil
}

// config is the DP configuration of the flags (nil: --dp-epsilon 0, no
// DP).
func (g *dpFlags) config() (*fl.DPConfig, error) {
	if !(g.dpEpsilon >= 0) { // NaN too: it used to run silently without DP
		return nil, usagef("--dp-epsilon %v must be ≥ 0", g.dpEpsilon)
	}
	if g.dpEpsilon == 0 {
		return nil, nil
	}
	dp := &fl.DPConfig{Mechanism: fl.DPMechanism(g.dpMechanism), Epsilon: g.dpEpsilon, Clip: g.dpClip}
	switch dp.Mechanism {
	case fl.DPGaussian:
		dp.Delta = g.dpDelta
	case fl.DPLaplace, fl.DPPaper:
		if g.dpDeltaSet {
			return nil, usagef("--dp-delta is only used by --dp-mechanism gaussian (%s is pure ε-DP)", dp.Mechanism)
		}
	}
	if g.dpNoiseSeed != 0 {
		dp.Noise = rand.NewPCG(g.dpNoiseSeed, 0x6470)
	}
	if err := dp.Validate(); err != nil {
		return nil, usageError{err}
	}
	return dp, nil
}

// parseRange parses --loss-range a,b.
func parseRange(s string) (a, b float64, err error) {
	parts := strings.Split(s, ",")
	if len(parts) != 2 {
		return 0, 0, fmt.Errorf("--loss-range %q: want a,b", s)
	}
	if a, err = strconv.ParseFloat(strings.TrimSpace(parts[0]), 64); err == nil {
		b, err = strconv.ParseFloat(strings.TrimSpace(parts[1]), 64)
	}
	if err != nil || !(b > a) || math.IsInf(a, 0) || math.IsInf(b, 0) {
		return 0, 0, fmt.Errorf("--loss-range %q: want finite a,b with a < b", s)
	}
	return a, b, nil
}

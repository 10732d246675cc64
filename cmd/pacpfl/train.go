package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/internal/cliprogress"
	"github.com/pacpfl/pacpfl/report"
)

func init() {
	register(&command{
		name:    "train",
		summary: "train PAC-PFL (GP clients on Polynomial, or --model bnn on Fashion-MNIST) and print metrics and bounds",
		run:     runTrain,
	})
}

// trainFlags are the Algorithm 1/3 parameters shared by train and experiment.
type trainFlags struct {
	k, rounds, clientsPerRound, batch int
	lr, sigmaP, lambda, tau           float64
	optimizer, aggregate              string
	seed                              uint64
	dpEpsilon, dpClip, dpDelta        float64
	dpMechanism                       string
	dpNoiseSeed                       uint64
	dpDeltaSet                        bool // --dp-delta given explicitly
	delta                             float64
	lossRange                         string
	beta                              string
	learnedSamples                    int
	boundSamples, funcSamples         int
	clients, newClients, extra        int
	// pv, when set, replaces the Polynomial data set (experiment pv, tune pv).
	pv            *data.PVConfig
	net           gpNetFlags      // experiment and tune: the GP networks
	pfedgpMean    string          // experiment only
	tauSet        bool            // --tau given explicitly (it excludes --lambda)
	dpSweep       bool            // experiment --dp-sweep: ε comes from the sweep
	kSweep        bool            // experiment --k-sweep: k comes from the sweep
	given         map[string]bool // the flags on the command line
	baselineSteps int             // experiment only
	baselineSet   bool            // --baseline-steps given (else each method's data-set default)
	gpInference   string          // --gp-inference (GP commands)
	inducing      int             // --inducing
}

// gpInferenceHelp is --gp-inference's help: where auto switches and why.
var gpInferenceHelp = fmt.Sprintf("how a GP client computes ln Z^C and predicts: exact (dense Cholesky of its m×m kernel matrix: about m³ flop and 3·m² doubles per particle), "+
	"sparse (the Titsias lower bound with --inducing M inputs chosen from the client's own rows by k-means++ seeding: about 4·m·M² flop and O(M²) memory; docs/math.md), "+
	"or auto: exact up to %d rows per client (about a second and 400 MB per particle on two cores), sparse above", fl.AutoExactMaxRows)

// addGPInferenceFlags registers --gp-inference and --inducing.
func addGPInferenceFlags(fs *flag.FlagSet, f *trainFlags) {
	fs.StringVar(&f.gpInference, "gp-inference", fl.InferenceAuto, gpInferenceHelp)
	fs.IntVar(&f.inducing, "inducing", 0, fmt.Sprintf("inducing inputs M of a sparse GP client (0: %d, or the client's rows if fewer; more than a sparse client's rows is an error)", fl.DefaultInducing))
}

// inference is the GP inference of the flags; the run's seed, with each
// client's data, seeds the choice of its inducing inputs.
func (f *trainFlags) inference() fl.GPInference {
	return fl.GPInference{Mode: f.gpInference, Inducing: f.inducing, Seed: f.seed}
}

func addTrainFlags(fs *flag.FlagSet, f *trainFlags) {
	d := fl.DefaultPACPFLOptions()
	dp := data.DefaultPolynomial()
	fs.IntVar(&f.k, "k", d.Server.K, "number of SVGD particles (priors) k")
	fs.IntVar(&f.rounds, "rounds", d.Server.Rounds, "server iterations T")
	fs.IntVar(&f.rounds, "T", d.Server.Rounds, "shorthand for --rounds")
	fs.IntVar(&f.clientsPerRound, "clients-per-round", 0, "clients sampled per round c (0: min(n, 24))")
	fs.IntVar(&f.clientsPerRound, "c", 0, "shorthand for --clients-per-round")
	fs.IntVar(&f.batch, "batch", 0, "client mini-batch size b (0: all of S_i, the exact LML)")
	fs.Float64Var(&f.lr, "lr", d.Server.LR, "server learning rate η")
	fs.StringVar(&f.optimizer, "optimizer", "adam", "SVGD optimiser: adam or sgd (plain ascent)")
	fs.StringVar(&f.aggregate, "aggregate", "sum", "aggregation of client gradients: sum (τ·n/c·Σ, unbiased for eq. 40) or mean (Algorithm 1 literally)")
	fs.Float64Var(&f.sigmaP, "sigma-p", d.SigmaP, "hyper-prior std σ_P (also the initial particle spread)")
	fs.Float64Var(&f.lambda, "lambda", 0, "server constant λ; sets τ = λ/(λ + βn(n₂+υ)), β = min m_i (exclusive with --tau)")
	fs.Float64Var(&f.tau, "tau", d.Server.Tau, "server temperature τ")
	fs.Uint64Var(&f.seed, "seed", 1, "random seed (data, initialisation, client sampling)")
	fs.Float64Var(&f.dpEpsilon, "dp-epsilon", 0, "differentially private training (Algorithm 3, corrected): the guaranteed ε (0: no DP)")
	fs.StringVar(&f.dpMechanism, "dp-mechanism", string(fl.DPLaplace), "DP mechanism: laplace (pure ε-DP, L1 clip), gaussian ((ε, δ)-DP, L2 clip, Rényi accounting) or paper (Algorithm 3 as printed; its ε is not a guarantee)")
	fs.Float64Var(&f.dpDelta, "dp-delta", 1e-5, "δ of (ε, δ)-DP for --dp-mechanism gaussian")
	fs.Float64Var(&f.dpClip, "dp-clip", 10, "DP clip norm γ of each client's whole k×dφ update (L1 for laplace, L2 for gaussian, L2 per particle row for paper); 10 chosen on Polynomial data seed 1000 (docs/math.md)")
	fs.Uint64Var(&f.dpNoiseSeed, "dp-noise-seed", 0, "seed of the DP noise, for reproducible runs (0: a secret seed from the OS; with a known seed the guarantee does not hold against whoever knows it)")
	fs.Float64Var(&f.delta, "delta", d.Bounds.Delta, "confidence δ of the bounds")
	fs.StringVar(&f.beta, "beta", "m", "client temperature β of training, personalisation and the bounds: m (β = m_i, Bayes posterior and LML, as the paper), sqrt (β = √m_i) or a number")
	fs.IntVar(&f.learnedSamples, "bound-trained-samples", fl.DefaultLearnedSamples, "draws from the trained hyper-posterior for its bound (0: skip that bound)")
	fs.StringVar(&f.lossRange, "loss-range", fmt.Sprintf("%g,%g", d.Bounds.A, d.Bounds.B), "loss range a,b of the bounds (the NLL is clipped to it)")
	fs.IntVar(&f.boundSamples, "bound-samples", d.Bounds.PriorSamples, "hyper-prior draws for ln Z^S (0: skip the bounds)")
	fs.IntVar(&f.funcSamples, "func-samples", d.Bounds.FuncSamples, "GP function draws per ln Z^C of the bounds")
	fs.IntVar(&f.clients, "clients", dp.Existing, "existing clients n of the Polynomial data set")
	fs.IntVar(&f.newClients, "new-clients", dp.New, "new clients of the Polynomial data set")
	fs.IntVar(&f.extra, "extra", dp.Extra, "personalisation-only samples m̃_i per existing client")
}

// afterParse records which flags were given explicitly, validates them and
// checks, before any work, that the --json output can be created: a run of
// hours should not end in "no such directory".
func (f *trainFlags) afterParse(fs *flag.FlagSet, jsonPath string) error {
	f.given = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) {
		f.given[fl.Name] = true
		switch fl.Name {
		case "tau":
			f.tauSet = true
		case "dp-delta":
			f.dpDeltaSet = true
		}
	})
	if err := f.validate(fs); err != nil {
		return err
	}
	if err := f.net.validate(); err != nil {
		return err
	}
	if fs.Lookup("gp-inference") != nil {
		if f.inducing < 0 {
			return usagef("--inducing %d: want at least 1 inducing input (0: the default %d)", f.inducing, fl.DefaultInducing)
		}
		if err := f.inference().Validate(); err != nil {
			return usagef("--gp-inference %q: want exact, sparse or auto", f.gpInference)
		}
	}
	if jsonPath == "" {
		return nil
	}
	return checkOutput("--json", jsonPath)
}

// reportStreams splits stdout between the text report and --json: with
// --json - the JSON alone goes to stdout, so that it can be piped, and the
// text goes to stderr.
func reportStreams(jsonPath string, stdout, stderr io.Writer) (text, js io.Writer) {
	if jsonPath == "-" {
		return stderr, stdout
	}
	return stdout, stdout
}

// usageError is bad input: exit status 2.
type usageError struct{ error }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// dataset builds the data set of the flags: Polynomial, or PV when f.pv is
// set.
func (f *trainFlags) dataset(seed uint64) (*data.Dataset, error) {
	if f.pv != nil {
		c := *f.pv
		c.Existing, c.New, c.Seed = f.clients, f.newClients, seed
		if err := memoryError(fmt.Sprintf("--clients %d --new-clients %d", c.Existing, c.New), c.MemoryBytes()); err != nil {
			return nil, err
		}
		ds, err := data.PV(c)
		if err != nil {
			return nil, usageError{err}
		}
		return ds, nil
	}
	c := data.DefaultPolynomial()
	c.Existing, c.New, c.Extra, c.Seed = f.clients, f.newClients, f.extra, seed
	// A lower bound that turns an absurd --clients or --extra into a
	// message instead of an out-of-memory crash or hours of data generation.
	if err := memoryError(fmt.Sprintf("--clients %d --new-clients %d --extra %d", c.Existing, c.New, c.Extra), c.MemoryBytes()); err != nil {
		return nil, err
	}
	ds, err := data.Polynomial(c)
	if err != nil {
		return nil, usageError{err}
	}
	return ds, nil
}

// options turns the flags into validated PAC-PFL options for ds.
func (f *trainFlags) options(ds *data.Dataset, seed uint64) (fl.PACPFLOptions, error) {
	o := fl.DefaultPACPFLOptions()
	s, err := f.serverConfig(ds, seed)
	if err != nil {
		return o, err
	}
	o.Server = s
	o.SigmaP = f.sigmaP
	if !(f.sigmaP > 0) || math.IsInf(f.sigmaP, 0) {
		return o, usagef("--sigma-p %v must be positive and finite", f.sigmaP)
	}
	if err := f.net.validate(); err != nil {
		return o, err
	}
	o.Bounds.PriorSamples, o.Bounds.FuncSamples = f.boundSamples, f.funcSamples
	plan := o.MemoryPlan(f.gpModel(ds.D, false).Dim())
	what := map[string]string{"particles": fmt.Sprintf("--k %d", f.k),
		"bounds": fmt.Sprintf("--bound-samples %d --func-samples %d", f.boundSamples, f.funcSamples)}
	if err := memoryError(what[plan.Dominant()], plan.Bytes()); err != nil {
		return o, err
	}
	a, b, err := parseRange(f.lossRange)
	if err != nil {
		return o, usageError{err}
	}
	if f.boundSamples < 0 || f.funcSamples < 1 {
		return o, usagef("--bound-samples must be ≥ 0 and --func-samples ≥ 1")
	}
	if o.Beta, err = fl.ParseTemperature(f.beta); err != nil {
		return o, usagef("--beta: %v", err)
	}
	if f.learnedSamples < 0 {
		return o, usagef("--bound-trained-samples %d must be ≥ 0", f.learnedSamples)
	}
	o.Bounds = fl.BoundOptions{A: a, B: b, Delta: f.delta, PriorSamples: f.boundSamples, FuncSamples: f.funcSamples, Seed: seed}
	if f.learnedSamples > 0 {
		o.Bounds.Learned = &fl.LearnedBoundOptions{Samples: f.learnedSamples}
	}
	// Check the bound assumptions now rather than after training.
	if err := o.CheckBounds(ds); err != nil {
		return o, usagef("%v (or pass --bound-samples 0 --bound-trained-samples 0 to skip the bounds)", err)
	}
	return o, nil
}

// serverConfig turns the flags of Algorithm 1 (3 with DP) into a validated
// server configuration for the existing clients of ds (--lambda sets τ with
// β = min m_i).
func (f *trainFlags) serverConfig(ds *data.Dataset, seed uint64) (fl.Config, error) {
	n := len(ds.Existing)
	s := fl.Config{K: f.k, Rounds: f.rounds, ClientsPerRound: f.clientsPerRound, Batch: f.batch, LR: f.lr, Optimizer: f.optimizer, Seed: seed}
	switch f.aggregate {
	case "sum":
		s.Aggregation = fl.AggregateSum
	case "mean":
		s.Aggregation = fl.AggregateMean
	default:
		return s, usagef("unknown --aggregate %q (want sum or mean)", f.aggregate)
	}
	if err := f.checkData(ds); err != nil {
		return s, err
	}
	if s.ClientsPerRound == 0 {
		s.ClientsPerRound = min(n, fl.DefaultClientsPerRound)
	}
	s.Tau = f.tau
	if f.lambda != 0 && f.tauSet {
		// λ sets τ; silently preferring one of the two would run a
		// temperature the user did not ask for.
		return s, usagef("--lambda and --tau both set τ: give only one")
	}
	if f.lambda != 0 {
		if !(f.lambda > 0) || math.IsInf(f.lambda, 0) {
			return s, usagef("--lambda %v must be positive and finite", f.lambda)
		}
		s.Tau = fl.TauFromLambda(f.lambda, float64(ds.MinM()), n, ds.N2(), fl.Upsilon)
	}
	if !(f.dpEpsilon >= 0) { // NaN too: it used to run silently without DP
		return s, usagef("--dp-epsilon %v must be ≥ 0", f.dpEpsilon)
	}
	if f.dpEpsilon > 0 {
		dp, err := f.dpConfig()
		if err != nil {
			return s, err
		}
		s.DP = dp
	}
	if err := s.Validate(n); err != nil {
		return s, usageError{err}
	}
	return s, nil
}

// dpConfig builds the DP configuration of the flags.
func (f *trainFlags) dpConfig() (*fl.DPConfig, error) {
	dp := &fl.DPConfig{Mechanism: fl.DPMechanism(f.dpMechanism), Epsilon: f.dpEpsilon, Clip: f.dpClip}
	switch dp.Mechanism {
	case fl.DPGaussian:
		dp.Delta = f.dpDelta
	case fl.DPLaplace, fl.DPPaper:
		if f.dpDeltaSet {
			return nil, usagef("--dp-delta is only used by --dp-mechanism gaussian (%s is pure ε-DP)", dp.Mechanism)
		}
	}
	if f.dpNoiseSeed != 0 {
		dp.Noise = rand.NewPCG(f.dpNoiseSeed, 0x6470)
	}
	if err := dp.Validate(); err != nil {
		return nil, usageError{err}
	}
	return dp, nil
}

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

func runTrain(args []string, stdout, stderr io.Writer) int {
	if csvDataArg(args) {
		return runTrainCSV(args, stdout, stderr) // train_csv.go
	}
	fs := newFlagSet("train", stderr)
	var f trainFlags
	var bf bnnFlags
	addTrainFlags(fs, &f)
	addGPInferenceFlags(fs, &f)
	addBNNFlags(fs, &bf)
	quiet := fs.Bool("quiet", false, "no progress output")
	jsonPath := fs.String("json", "", "also write the results as JSON to `FILE`")
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	if err := bf.resolve(fs); err != nil {
		return fail(stderr, "train", err)
	}
	if err := f.afterParse(fs, *jsonPath); err != nil {
		return fail(stderr, "train", err)
	}
	if bf.model == modelBNN {
		return runTrainBNN(&f, &bf, *quiet, *jsonPath, stdout, stderr)
	}
	stdout, jsonOut := reportStreams(*jsonPath, stdout, stderr)
	start := time.Now()
	ds, err := f.dataset(f.seed)
	if err != nil {
		return fail(stderr, "train", err)
	}
	o, err := f.options(ds, f.seed)
	if err != nil {
		return fail(stderr, "train", err)
	}
	ctx, stop := signalContext()
	defer stop()
	prog := newProgress(stderr, "train", o.Server.Rounds, *quiet)
	prog.hideLML = o.Server.DP != nil
	o.Server.Progress, o.Server.AfterRound = prog.update, stopOn(ctx)
	g := fl.NewGPModel(ds.D)
	g.Inference = f.inference()
	res, err := fl.RunPACPFL(ds, g, o, fl.MethodPACPFL)
	prog.done()
	if err != nil {
		return fail(stderr, "train", err)
	}
	if err := writeTrainReport(stdout, jsonOut, &f, ds, o, res, start, *jsonPath); err != nil {
		return fail(stderr, "train", err)
	}
	return exitOK
}

// writeTrainReport prints the report of a PAC-PFL run on Polynomial and
// writes it as JSON to jsonPath (if set): pacpfl train and pacpfl server.
func writeTrainReport(stdout, jsonOut io.Writer, f *trainFlags, ds *data.Dataset, o fl.PACPFLOptions, res *fl.MethodResult, start time.Time, jsonPath string) error {
	text := report.TrainText{
		Header: fmt.Sprintf("PAC-PFL on Polynomial: n=%d existing (m_i=%d), %d new clients; k=%d, T=%d, c=%d, τ=%.4g, σ_P=%g, β=%s, seed %d; GP inference %s",
			len(ds.Existing), ds.MinM(), len(ds.New), o.Server.K, o.Server.Rounds, o.Server.ClientsPerRound, o.Server.Tau, o.SigmaP, o.Beta, f.seed, f.inference()),
		LML: "mean client LML", Train: res.Train, NoRounds: o.Server.Rounds == 0, Private: o.Server.DP != nil,
		Existing: report.RegressionLine(len(ds.Existing), res.Existing.MeanRSMSE, res.Existing.MeanCE),
		New:      report.RegressionLine(len(ds.New), res.New.MeanRSMSE, res.New.MeanCE),
		Bounds:   res,
	}
	if err := text.WriteText(stdout); err != nil || jsonPath == "" {
		return err
	}
	rep := report.NewTrain(res, o.Server.DP != nil)
	rep.Dataset, rep.Seed, rep.TotalSeconds = "polynomial", f.seed, time.Since(start).Seconds()
	rep.Config = map[string]any{
		"k": o.Server.K, "rounds": o.Server.Rounds, "clients_per_round": o.Server.ClientsPerRound,
		"batch": o.Server.Batch, "lr": o.Server.LR, "optimizer": o.Server.Optimizer, "aggregate": f.aggregate,
		"sigma_p": o.SigmaP, "tau": o.Server.Tau, "dp_epsilon": f.dpEpsilon, "dp_clip": f.dpClip,
		"dp_mechanism": f.dpMechanism, "beta": o.Beta.String(),
		"clients": len(ds.Existing), "new_clients": len(ds.New), "extra": f.extra,
		"gp_inference": f.inference().Mode, "inducing": f.inference().Inducing,
	}
	return writeJSON(jsonOut, jsonPath, rep)
}

// fmtMetric is report.Metric: x, or "–" for an undefined (NaN) figure.
func fmtMetric(format string, x float64) string { return report.Metric(format, x) }

// fail prints err and returns 2 for bad input, 1 otherwise.
func fail(stderr io.Writer, cmd string, err error) int {
	if errors.Is(err, context.Canceled) {
		// Outputs are written after the run: an interrupted one wrote
		// none.
		fmt.Fprintf(stderr, "pacpfl %s: interrupted; no output written\n", cmd)
		return exitInterrupted
	}
	fmt.Fprintf(stderr, "pacpfl %s: %v\n", cmd, err)
	var ue usageError
	if errors.As(err, &ue) || errors.Is(err, fl.ErrTooManyInducing) {
		return exitUsage
	}
	return exitError
}

// progress reports training progress on stderr (cliprogress.Bar): a
// redrawn bar on a terminal, otherwise one log line every few seconds;
// nothing with --quiet.
type progress struct {
	bar     *cliprogress.Bar
	hideLML bool   // DP runs: the client LMLs are not covered by the guarantee
	unit    string // what is counted: "round" unless set
}

// logEvery is the interval of the log lines when stderr is not a terminal.
const logEvery = cliprogress.LogEvery

func newProgress(w io.Writer, label string, total int, quiet bool) *progress {
	return &progress{bar: cliprogress.New(w, label, total, quiet), unit: "round"}
}

func (p *progress) update(round int, lml float64) {
	p.bar.Unit, p.bar.HideValue = p.unit, p.hideLML
	p.bar.Update(round, lml)
}

func (p *progress) done() { p.bar.Done() }

package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/klauspost/cpuid/v2"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/genfl"
	"github.com/pacpfl/pacpfl/harness"
	"github.com/pacpfl/pacpfl/methods"
	"github.com/pacpfl/pacpfl/papers"
	"github.com/pacpfl/pacpfl/report"
)

// genflFlags are the settings of GenFL/FEDBOUND (SPEC §12) shared by
// experiment genfl and the genfl method of experiment fmnist.
type genflFlags struct {
	prior, objective, estimator, setting string
	hidden                               intList
	sigmaPrior, klPenalty                float64
	rounds, localEpochs                  int
	priorRounds, priorEpochs             int
	personalEpochs                       int
	fraction, lr, momentum               float64
	priorMomentum, dropout               float64
	batch                                int
	delta, deltaPrime, pMin              float64
	mcSamples, clientMCSamples, stack    int
	testDraws                            int
}

func addGenFLFlags(fs *flag.FlagSet, g *genflFlags) {
	fs.StringVar(&g.prior, "prior", "learnt", "prior: learnt (ERM on the first half of every user's data; posterior and bound on the second) or random (data-free, truncated normal means)")
	fs.StringVar(&g.objective, "objective", "f1", "training objective: f1 (Pinsker relaxation) or f2 (quadratic relaxation)")
	g.hidden = intList(genfl.DefaultHidden())
	fs.Var(&g.hidden, "hidden", "hidden layer widths of the MLP (the seed's parameter count is that of 600,600,600)")
	fs.Float64Var(&g.sigmaPrior, "sigma-prior", genfl.DefaultSigmaPrior, "σ of the Gaussian prior over every weight")
	fs.Float64Var(&g.klPenalty, "kl-penalty", 0, "factor of KL(Q‖P) in the objective only (0: 1 with a learnt prior, 0.1 with a random one, as the seed)")
	fs.IntVar(&g.rounds, "rounds", 0, "GenFL rounds (0: 10 with a learnt prior, 200 with a random one)")
	fs.IntVar(&g.localEpochs, "local-epochs", 0, "local epochs E per round (0: 5 with a learnt prior, 1 with a random one)")
	fs.IntVar(&g.priorRounds, "prior-rounds", genfl.DefaultPriorRounds, "rounds of the learnt prior's federated ERM")
	fs.IntVar(&g.priorEpochs, "prior-epochs", genfl.DefaultPriorEpochs, "local epochs of the learnt prior's federated ERM")
	fs.IntVar(&g.personalEpochs, "personal-epochs", genfl.DefaultPersonalEpochs, "pfl: epochs of each user's personalisation")
	fs.Float64Var(&g.fraction, "fraction", genfl.DefaultFraction, "fraction C of the users sampled each round")
	fs.Float64Var(&g.lr, "lr", genfl.DefaultLR, "SGD learning rate")
	fs.Float64Var(&g.momentum, "momentum", genfl.DefaultMomentum, "SGD momentum of GenFL and the personalisation")
	fs.Float64Var(&g.priorMomentum, "prior-momentum", genfl.DefaultPriorMomentum, "SGD momentum of the learnt prior's ERM")
	fs.Float64Var(&g.dropout, "dropout", genfl.DefaultDropout, "dropout of the learnt prior's ERM")
	fs.IntVar(&g.batch, "batch", genfl.DefaultBatch, "mini-batch size")
	fs.Float64Var(&g.delta, "delta", genfl.DefaultDelta, "δ of McAllester's bound (also in the objective)")
	fs.Float64Var(&g.deltaPrime, "delta-prime", genfl.DefaultDeltaPrime, "δ′ of the bound's Monte Carlo step")
	fs.Float64Var(&g.pMin, "p-min", genfl.DefaultPMin, "probability floor of the bounded cross-entropy")
	fs.StringVar(&g.estimator, "estimator", "pairs", "FEDBOUND's sampling: pairs (n independent (weight draw, training example) pairs, exact by local reparameterisation) or full (Alg. 2 as printed: every user evaluates n weight draws on all its examples)")
	fs.IntVar(&g.mcSamples, "mc-samples", 0, "n of FEDBOUND (0: 150000 pairs, the seed's n; 100 weight draws per user with --estimator full)")
	fs.IntVar(&g.clientMCSamples, "client-mc-samples", genfl.DefaultClientMCSamples, "pfl: n of each user's own bound")
	fs.IntVar(&g.stack, "stack", genfl.DefaultStack, "--estimator full: weight samples evaluated together")
	fs.IntVar(&g.testDraws, "test-draws", genfl.DefaultTestDraws, "weight draws per test image of the Gibbs test error")
	fs.StringVar(&g.setting, "setting", "", "flsob (GenFL + the global FEDBOUND) or pfl (Alg. 3/4: personalised posteriors and per-user bounds); default flsob for --partition iid, pfl for shards")
}

// options validates the flags and returns the run's options: the seed's
// (genfl.DefaultOptions for the prior and the estimator) with every flag
// given, or left at a default of its own, in place.
func (g *genflFlags) options(seed uint64, workers int) (genfl.Options, error) {
	var o genfl.Options
	prior, err := genfl.ParsePriorKind(g.prior)
	if err != nil {
		return o, usageError{err}
	}
	obj, err := genfl.ParseObjective(g.objective)
	if err != nil {
		return o, usageError{err}
	}
	est, err := genfl.ParseEstimator(g.estimator)
	if err != nil {
		return o, usageError{err}
	}
	o = genfl.DefaultOptions(prior, est, seed)
	// 0 keeps the default of the prior (rounds, local epochs, KL factor)
	// or of the estimator (n).
	if g.klPenalty != 0 {
		o.Objective.KLPenalty = g.klPenalty
	}
	positive := map[string]float64{"sigma-prior": g.sigmaPrior, "kl-penalty": o.Objective.KLPenalty, "lr": g.lr}
	for _, name := range []string{"sigma-prior", "kl-penalty", "lr"} {
		if v := positive[name]; !(v > 0) || math.IsInf(v, 0) {
			return o, usagef("--%s %v must be positive and finite", name, v)
		}
	}
	counts := []struct {
		name string
		v    int
	}{{"rounds", g.rounds}, {"local-epochs", g.localEpochs}, {"prior-rounds", g.priorRounds}, {"prior-epochs", g.priorEpochs},
		{"personal-epochs", g.personalEpochs}, {"batch", g.batch}, {"mc-samples", g.mcSamples}, {"client-mc-samples", g.clientMCSamples},
		{"stack", g.stack}, {"test-draws", g.testDraws}}
	for _, c := range counts {
		min := 1
		if c.name == "rounds" || c.name == "local-epochs" || c.name == "mc-samples" {
			min = 0 // 0: the default
		}
		if c.v < min {
			return o, usagef("--%s %d must be at least %d", c.name, c.v, max(min, 1))
		}
	}
	switch {
	case !(g.fraction > 0 && g.fraction <= 1):
		return o, usagef("--fraction %v must lie in (0, 1]", g.fraction)
	case !(g.momentum >= 0 && g.momentum < 1) || !(g.priorMomentum >= 0 && g.priorMomentum < 1):
		return o, usagef("--momentum %v and --prior-momentum %v must lie in [0, 1)", g.momentum, g.priorMomentum)
	case !(g.dropout >= 0 && g.dropout < 1):
		return o, usagef("--dropout %v must lie in [0, 1)", g.dropout)
	case !(g.delta > 0 && g.deltaPrime > 0 && g.delta+g.deltaPrime < 1):
		return o, usagef("--delta %v and --delta-prime %v must be positive with δ + δ′ < 1", g.delta, g.deltaPrime)
	case !(g.pMin > 0 && g.pMin < 1):
		return o, usagef("--p-min %v must lie in (0, 1)", g.pMin)
	case len(g.hidden) == 0:
		return o, usagef("--hidden needs at least one width")
	}
	for _, h := range g.hidden {
		if h < 1 {
			return o, usagef("--hidden widths must be at least 1, got %v", g.hidden)
		}
	}
	o.Arch.Hidden = slices.Clone([]int(g.hidden))
	o.SigmaPrior, o.Dropout = g.sigmaPrior, g.dropout
	pf := &o.PriorFed
	pf.Rounds, pf.Fraction, pf.LocalEpochs, pf.Batch, pf.LR, pf.Momentum = g.priorRounds, g.fraction, g.priorEpochs, g.batch, g.lr, g.priorMomentum
	qf := &o.PosteriorFed
	if g.rounds != 0 {
		qf.Rounds = g.rounds
	}
	if g.localEpochs != 0 {
		qf.LocalEpochs = g.localEpochs
	}
	qf.Fraction, qf.Batch, qf.LR, qf.Momentum = g.fraction, g.batch, g.lr, g.momentum
	o.PersonalEpochs = g.personalEpochs
	o.Objective.Objective, o.Objective.Delta, o.Objective.PMin = obj, g.delta, g.pMin
	o.DeltaPrime = g.deltaPrime
	if g.mcSamples != 0 {
		o.MC.N = g.mcSamples
	}
	o.MC.Stack, o.ClientMC.N, o.ClientMC.Stack = g.stack, g.clientMCSamples, g.stack
	o.TestDraws = g.testDraws
	o.Workers, o.PriorFed.Workers, o.PosteriorFed.Workers, o.MC.Workers, o.ClientMC.Workers = workers, workers, workers, workers, workers
	return o, nil
}

// genflSeed is one seed's figures. For PFL, Bound, TestError, TrainError
// and KL are the means over the users, and the Client* fields their spread.
type genflSeed struct {
	Seed          uint64       `json:"seed"`
	Bound         report.Float `json:"bound"`
	TestError     report.Float `json:"test_error"`
	TrainError    report.Float `json:"train_error"`
	KL            report.Float `json:"kl"`
	M             int          `json:"m"`
	SamplingTerm  report.Float `json:"sampling_term"`
	Pinsker       report.Float `json:"pinsker_bound,omitempty"`
	Quadratic     report.Float `json:"quadratic_bound,omitempty"`
	MeanNetError  report.Float `json:"posterior_mean_test_error"`
	PriorError    report.Float `json:"prior_mean_test_error"`
	Holds         bool         `json:"bound_above_test_error"`
	ClientBound   *spread      `json:"client_bound,omitempty"`
	ClientTest    *spread      `json:"client_test_error,omitempty"`
	ClientsAbove  int          `json:"clients_bound_above_test_error,omitempty"`
	MCSeconds     float64      `json:"mc_seconds"`
	EvalsPerSec   float64      `json:"mc_evaluations_per_second"`
	PriorSeconds  float64      `json:"prior_seconds"`
	TrainSeconds  float64      `json:"posterior_seconds"`
	TotalSeconds  float64      `json:"seconds"`
	mcEvaluations int64
}

type spread struct {
	Min  report.Float `json:"min"`
	Mean report.Float `json:"mean"`
	Max  report.Float `json:"max"`
}

// genflReport is the --json output of experiment genfl (the schema
// plus the settings and the per-seed figures).
type genflReport struct {
	Dataset    string         `json:"dataset"`
	Partition  string         `json:"partition"`
	Prior      string         `json:"prior"`
	Objective  string         `json:"objective"`
	Setting    string         `json:"setting"`
	Bound      report.Summary `json:"bound"`
	TestError  report.Summary `json:"test_error"`
	TrainError report.Summary `json:"train_error"`
	KL         report.Summary `json:"kl"`
	BoundIs    string         `json:"bound_is"`
	Confidence float64        `json:"confidence"`
	Delta      float64        `json:"delta"`
	DeltaPrime float64        `json:"delta_prime"`
	Estimator  string         `json:"estimator"`
	MCSamples  int            `json:"mc_samples"`
	Arch       string         `json:"arch"`
	KLPenalty  float64        `json:"kl_penalty"`
	Rounds     int            `json:"rounds"`
	Epochs     int            `json:"local_epochs"`
	HoldsAll   bool           `json:"bound_above_test_error_every_seed"`
	Seeds      []genflSeed    `json:"per_seed"`
	Seconds    float64        `json:"seconds"`
	CPU        string         `json:"cpu"`
}

func genflUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: pacpfl experiment genfl [--partition iid|shards] [--prior learnt|random] [--objective f1|f2] [--seeds N] [--seed-base S] [--json FILE] [flags]")
}

// runExperimentGenFL is pacpfl experiment genfl: GenFL + FEDBOUND (FL-SOB)
// or Alg. 3/4 (PFL) on Fashion-MNIST over several seeds.
func runExperimentGenFL(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("experiment genfl", stderr)
	var g genflFlags
	addGenFLFlags(fs, &g)
	partition := fs.String("partition", "iid", "users: iid (label-blind random draws) or shards (label-sorted shards, McMahan et al.)")
	clients := fs.Int("clients", 100, "number of users K")
	trainPer := fs.Int("train-per-client", 540, "iid: training images per user")
	testPer := fs.Int("test-per-client", 60, "iid: test images per user")
	shardSize := fs.Int("shard-size", 300, "shards: images per shard (2 shards per user, 10 % of them test)")
	dataDir := fs.String("data-dir", "", "directory of the Fashion-MNIST IDX files (default $"+data.DataDirEnv+", then "+data.FashionMNISTDebianDir+")")
	seeds := fs.Int("seeds", 5, "number of seeds")
	seedBase := fs.Uint64("seed-base", 1, "first seed; seeds are seed-base, seed-base+1, …")
	quiet := fs.Bool("quiet", false, "no progress output")
	jsonPath := fs.String("json", "", "also write the results as JSON to `FILE`")
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	fail := func(err error) int { return fail(stderr, "experiment genfl", err) }
	if *partition != "iid" && *partition != "shards" {
		return fail(usagef("unknown --partition %q (iid or shards)", *partition))
	}
	if g.setting == "" {
		g.setting = map[string]string{"iid": "flsob", "shards": "pfl"}[*partition]
	}
	if g.setting != "flsob" && g.setting != "pfl" {
		return fail(usagef("unknown --setting %q (flsob or pfl)", g.setting))
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"clients", *clients}, {"train-per-client", *trainPer}, {"test-per-client", *testPer}, {"shard-size", *shardSize}} {
		if c.v < 1 {
			return fail(usagef("--%s %d must be at least 1", c.name, c.v))
		}
	}
	if err := checkSeeds(*seeds, *seedBase); err != nil {
		return fail(err)
	}
	o0, err := g.options(*seedBase, 0)
	if err != nil {
		return fail(err)
	}
	if *jsonPath != "" {
		if err := checkOutput("--json", *jsonPath); err != nil {
			return fail(err)
		}
	}
	stdout, jsonOut := reportStreams(*jsonPath, stdout, stderr)
	start := time.Now()
	im, err := data.FashionMNIST(*dataDir)
	if err != nil {
		return fail(usageError{err})
	}
	rep := genflReport{Dataset: dataFMNIST, Partition: *partition, Prior: o0.Prior.String(), Objective: o0.Objective.Objective.String(),
		Setting: g.setting, Confidence: 1 - g.delta - g.deltaPrime, Delta: g.delta, DeltaPrime: g.deltaPrime,
		Estimator: o0.MC.Estimator.String(), MCSamples: o0.MC.N, Arch: o0.Arch.String(), KLPenalty: o0.Objective.KLPenalty,
		Rounds: o0.PosteriorFed.Rounds, Epochs: o0.PosteriorFed.LocalEpochs, HoldsAll: true, CPU: cpuName()}
	if g.setting == "pfl" {
		rep.MCSamples = o0.ClientMC.N
	}
	exp := harness.Experiment{Seeds: seedRange(*seeds, *seedBase),
		Methods: []harness.Method{methods.GenFLBound{Options: o0, Setting: g.setting}},
		Data: func(seed uint64) (*data.Dataset, error) {
			var ds *data.Dataset
			var err error
			if *partition == "iid" {
				ds, err = data.IID(im, data.IIDConfig{Clients: *clients, Train: *trainPer, Test: *testPer, Seed: seed})
			} else {
				ds, err = data.Shards(im, data.ShardsConfig{Clients: *clients, ShardSize: *shardSize, Seed: seed})
			}
			if err != nil {
				return nil, usageError{err}
			}
			return ds, nil
		}}
	obs := &genflObserver{w: stderr, quiet: *quiet, full: o0.MC.Estimator == genfl.Full, onDone: func(ev harness.Event) {
		r := newGenFLSeed(ev.Seed, ev.Result)
		rep.HoldsAll = rep.HoldsAll && r.Holds
		rep.Seeds = append(rep.Seeds, r)
		if !*quiet {
			fmt.Fprintf(stderr, "experiment genfl: seed %d: bound %.4f, test error %.4f, train error %.4f, KL %.1f (%.0fs)\n",
				ev.Seed, r.Bound, r.TestError, r.TrainError, r.KL, r.TotalSeconds)
		}
	}}
	ctx, stop := signalContext()
	defer stop()
	if _, err := harness.Run(ctx, exp, obs); err != nil {
		return fail(err)
	}
	col := func(f func(genflSeed) report.Float) []float64 {
		var xs []float64
		for _, r := range rep.Seeds {
			xs = append(xs, float64(f(r)))
		}
		return xs
	}
	rep.Bound = report.Summarise(col(func(r genflSeed) report.Float { return r.Bound }))
	rep.TestError = report.Summarise(col(func(r genflSeed) report.Float { return r.TestError }))
	rep.TrainError = report.Summarise(col(func(r genflSeed) report.Float { return r.TrainError }))
	rep.KL = report.Summarise(col(func(r genflSeed) report.Float { return r.KL }))
	rep.BoundIs = boundStatement(&rep, rep.Seeds[0].M)
	rep.Seconds = time.Since(start).Seconds()
	testImages := *clients * *testPer
	if *partition == "shards" {
		testImages = 0 // per user, not pooled
	}
	printGenFLReport(stdout, &rep, o0, *clients, testImages)
	if *jsonPath != "" {
		if err := writeJSON(jsonOut, *jsonPath, rep); err != nil {
			return fail(err)
		}
	}
	return exitOK
}

// newGenFLSeed is one seed's row of the report from GenFLBound's result.
func newGenFLSeed(seed uint64, mr *fl.MethodResult) genflSeed {
	var r genflSeed
	switch res := mr.Detail.(type) {
	case *genfl.FLSOBResult:
		b := res.Bound
		r = genflSeed{Seed: seed, Bound: report.Float(b.Bound), TestError: report.Float(res.TestError), TrainError: report.Float(res.TrainError),
			KL: report.Float(b.KL), M: b.M, SamplingTerm: report.Float(b.SamplingAdd), Pinsker: report.Float(b.PinskerAtN), Quadratic: report.Float(b.QuadAtN),
			MeanNetError: report.Float(res.MeanTest), PriorError: report.Float(res.PriorTest), Holds: b.Bound >= res.TestError,
			MCSeconds: b.MC.Seconds, EvalsPerSec: float64(b.MC.Evals) / b.MC.Seconds, mcEvaluations: b.MC.Evals,
			PriorSeconds: res.Timings.Prior, TrainSeconds: res.Timings.Posterior}
	case *genfl.PFLResult:
		var bs, ts, trs, kls, samp []float64
		above := 0
		var evals int64
		var mcs float64
		for _, c := range res.Clients {
			bs = append(bs, c.Bound.Bound)
			ts = append(ts, c.TestError)
			trs = append(trs, c.TrainError)
			kls = append(kls, c.Bound.KL)
			samp = append(samp, c.Bound.SamplingAdd)
			if c.Bound.Bound >= c.TestError {
				above++
			}
			evals += c.Bound.MC.Evals
			mcs += c.Bound.MC.Seconds
		}
		sb, st := genfl.SpreadOf(bs), genfl.SpreadOf(ts)
		r = genflSeed{Seed: seed, Bound: report.Float(sb.Mean), TestError: report.Float(st.Mean), TrainError: report.Float(fl.Mean(trs)),
			KL: report.Float(fl.Mean(kls)), M: res.Clients[0].Bound.M, SamplingTerm: report.Float(fl.Mean(samp)),
			PriorError: report.Float(res.PriorTest), MeanNetError: report.Float(math.NaN()), Holds: sb.Mean >= st.Mean,
			ClientBound: &spread{report.Float(sb.Min), report.Float(sb.Mean), report.Float(sb.Max)},
			ClientTest:  &spread{report.Float(st.Min), report.Float(st.Mean), report.Float(st.Max)}, ClientsAbove: above,
			MCSeconds: mcs, EvalsPerSec: float64(evals) / mcs, mcEvaluations: evals,
			PriorSeconds: res.Timings.Prior, TrainSeconds: res.Timings.Posterior}
	}
	r.TotalSeconds = mr.Seconds
	return r
}

// genflObserver prints experiment genfl's progress: each phase as it
// starts, then its rounds or counts every few seconds.
type genflObserver struct {
	w           io.Writer
	quiet, full bool
	onDone      func(harness.Event)
	gp          *genflProgress
}

// Observe implements harness.Observer.
func (o *genflObserver) Observe(ev harness.Event) {
	if o.gp == nil {
		o.gp = newGenFLProgress(o.w, fmt.Sprintf("seed %d (%d/%d)", ev.Seed, ev.SeedIndex+1, ev.Seeds), o.quiet)
	}
	switch ev.Kind {
	case harness.Phase:
		o.gp.phase(ev.Phase)
	case harness.Round:
		switch ev.Phase {
		case methods.PhasePriorERM:
			o.gp.rounds("prior ERM", "loss")(ev.Round, ev.Rounds, ev.Value)
		case "":
			o.gp.rounds("GenFL", "objective")(ev.Round, ev.Rounds, ev.Value)
		case methods.PhaseSampling:
			unit := "pairs"
			if o.full {
				unit = "weight draws"
			}
			o.gp.count("FEDBOUND sampling", unit)(ev.Round, ev.Rounds)
		case methods.PhasePerUser:
			o.gp.count("per-user", "users")(ev.Round, ev.Rounds)
		}
	case harness.Done:
		o.gp = nil
		o.onDone(ev)
	}
}

// boundStatement says what the printed bound is a bound on.
func boundStatement(rep *genflReport, m int) string {
	n := fmt.Sprintf("n = %d Monte Carlo %s", rep.MCSamples, map[string]string{"pairs": "(weight draw, training image) pairs", "full": "weight draws per user"}[rep.Estimator])
	if rep.Setting == "pfl" {
		return fmt.Sprintf("for each user k separately, with probability ≥ %.2f (1 − δ − δ′, δ = %g, δ′ = %g) over its sample S²_k and the %s, the expected 0–1 error on user k's image distribution of its stochastic classifier Q_k (a fresh weight draw W ∼ Q_k per prediction) is ≤ its bound; assumes user k's images are i.i.d. from that distribution (for label-sorted shards this is an assumption, not a fact of the split)",
			rep.Confidence, rep.Delta, rep.DeltaPrime, n)
	}
	return fmt.Sprintf("with probability ≥ %.2f (1 − δ − δ′, δ = %g, δ′ = %g) over the users' pooled training sample (the m = %d images the prior did not see) and the %s, the expected 0–1 error of the stochastic classifier Q (a fresh weight draw W ∼ Q per prediction) on a Fashion-MNIST image drawn like the pool's is ≤ the bound; assumes the pool's images are i.i.d. (the users' images are a label-blind random draw from it)",
		rep.Confidence, rep.Delta, rep.DeltaPrime, m, n)
}

func printGenFLReport(w io.Writer, rep *genflReport, o genfl.Options, clients, testImages int) {
	what := "GenFL + FEDBOUND (FL-SOB, Alg. 1/2)"
	if rep.Setting == "pfl" {
		what = "PFL: GenFL personalisation + per-user FEDBOUND (Alg. 3/4)"
	}
	fmt.Fprintf(w, "%s on Fashion-MNIST, %s partition, %d users, %s prior, objective %s (KL penalty %g), MLP %s, %d rounds × %d local epochs\n\n",
		what, rep.Partition, clients, rep.Prior, rep.Objective, rep.KLPenalty, rep.Arch, rep.Rounds, rep.Epochs)
	if rep.Setting == "pfl" {
		fmt.Fprintln(w, "| seed | bound (mean over users) | test error (mean) | bound min / max | test error min / max | users with bound ≥ test error | KL (mean) | m_k | seconds |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
		for _, r := range rep.Seeds {
			fmt.Fprintf(w, "| %d | %.4f | %.4f | %.4f / %.4f | %.4f / %.4f | %d of %d | %.1f | %d | %.0f |\n", r.Seed, r.Bound, r.TestError,
				r.ClientBound.Min, r.ClientBound.Max, r.ClientTest.Min, r.ClientTest.Max, r.ClientsAbove, clients, r.KL, r.M, r.TotalSeconds)
		}
	} else {
		fmt.Fprintln(w, "| seed | bound | test error | train error | KL(Q‖P) | KL/m | sampling term | posterior-mean test error | prior-mean test error | seconds |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
		for _, r := range rep.Seeds {
			fmt.Fprintf(w, "| %d | %.4f | %.4f | %.4f | %.1f | %.2g | %.4f | %.4f | %.4f | %.0f |\n", r.Seed, r.Bound, r.TestError, r.TrainError,
				r.KL, float64(r.KL)/float64(r.M), r.SamplingTerm, r.MeanNetError, r.PriorError, r.TotalSeconds)
		}
	}
	f := func(s report.Summary) string {
		if math.IsNaN(float64(s.CI95)) {
			return fmt.Sprintf("%.4f ± –", s.Mean)
		}
		return fmt.Sprintf("%.4f ± %.4f", s.Mean, s.CI95)
	}
	fmt.Fprintf(w, "\nmean ± 95%% CI over %d seeds: bound %s, test error %s, train error %s, KL %s\n",
		len(rep.Seeds), f(rep.Bound), f(rep.TestError), f(rep.TrainError), f(rep.KL))
	fmt.Fprintf(w, "\nThe bound: %s.\n", rep.BoundIs)
	if rep.Setting == "pfl" {
		fmt.Fprintln(w, "Test errors are Gibbs errors (the stochastic classifier) on each user's own held-out images (10 % of its data), estimates with few images.")
	} else {
		fmt.Fprintf(w, "Test error: Q's Gibbs error on the users' %d pooled held-out images (%d weight draws each), an unbiased estimate of what the bound bounds; train error: FEDBOUND's Monte Carlo estimate of Q's error on the bound's sample.\n",
			testImages, o.TestDraws)
		verdict := "holds (bound ≥ test error) on every seed"
		if !rep.HoldsAll {
			verdict = "is BELOW the measured test error on some seed"
		}
		fmt.Fprintf(w, "The bound %s; it is %s.\n", verdict, map[bool]string{true: "non-vacuous (< 1) on every seed", false: "vacuous on some seed"}[allBelowOne(rep)])
		var mcs, evs float64
		for _, r := range rep.Seeds {
			mcs += r.MCSeconds
			evs += float64(r.mcEvaluations)
		}
		fmt.Fprintf(w, "Sampling step: %s estimator, n = %d; the sampling term (bound − bound with the Monte Carlo error taken as exact) is in the table; %.3g evaluations/s (samples·images/s) on %s.\n",
			rep.Estimator, rep.MCSamples, evs/mcs, rep.CPU)
	}
	if rep.Setting == "flsob" {
		fmt.Fprintln(w, "\nThe seed's Table 1 (MNIST, not Fashion-MNIST; 100 users, bound / test error):")
		for _, t := range papers.GenFLTable1() {
			fmt.Fprintf(w, "  %s prior, %s (%s): %.3f / %.3f\n", t.Prior, t.Objective, t.Note, t.Bound, t.TestError)
		}
	} else {
		// One group per prior: "learnt prior f1 b / e, f2 b / e; random …".
		rows := papers.GenFLTable2()
		var groups []string
		for i := 0; i < len(rows); {
			var cells []string
			j := i
			for ; j < len(rows) && rows[j].Prior == rows[i].Prior; j++ {
				cells = append(cells, fmt.Sprintf("%s %.3f / %.3f", rows[j].Objective, rows[j].Bound, rows[j].TestError))
			}
			groups = append(groups, rows[i].Prior+" prior "+strings.Join(cells, ", "))
			i = j
		}
		text := strings.Join(groups, "; ")
		fmt.Fprintf(w, "\nThe seed's Table 2 (MNIST, label-sorted shards; mean bound / mean test error): %s.\n", text)
	}
	fmt.Fprintf(w, "\n%d seeds (%d..%d), wall time %.0fs on %s\n", len(rep.Seeds), rep.Seeds[0].Seed, rep.Seeds[len(rep.Seeds)-1].Seed, rep.Seconds, rep.CPU)
}

func allBelowOne(rep *genflReport) bool {
	for _, r := range rep.Seeds {
		if !(r.Bound < 1) {
			return false
		}
	}
	return true
}

// cpuName names the CPU and the cores used, for every figure printed.
func cpuName() string {
	c := cpuid.CPU
	return fmt.Sprintf("%s (family %d model %d), GOMAXPROCS %d", strings.TrimSpace(c.BrandName), c.Family, c.Model, runtime.GOMAXPROCS(0))
}

// genflProgress reports the phases of a GenFL run on stderr: one line every
// few seconds per phase (rounds of training, pairs of the bound's sampling).
type genflProgress struct {
	w      io.Writer
	label  string
	quiet  bool
	start  time.Time
	last   time.Time
	pstart time.Time
}

func newGenFLProgress(w io.Writer, label string, quiet bool) *genflProgress {
	now := time.Now()
	return &genflProgress{w: w, label: label, quiet: quiet, start: now, last: now, pstart: now}
}

func (p *genflProgress) phase(name string) {
	p.pstart = time.Now()
	p.last = time.Time{}
	if !p.quiet {
		fmt.Fprintf(p.w, "%s: %s…\n", p.label, name)
	}
}

func (p *genflProgress) line(what string, done, total int, extra string) {
	if p.quiet {
		return
	}
	now := time.Now()
	if now.Sub(p.last) < logEvery && done != total {
		return
	}
	p.last = now
	el := now.Sub(p.pstart)
	eta := time.Duration(0)
	if done > 0 {
		eta = time.Duration(float64(el) * float64(total-done) / float64(done))
	}
	const width = 20
	filled := width * done / max(1, total)
	fmt.Fprintf(p.w, "%s: %s [%s%s] %d/%d%s, elapsed %s, ETA %s\n", p.label, what, strings.Repeat("=", filled), strings.Repeat(" ", width-filled),
		done, total, extra, el.Round(time.Second), eta.Round(time.Second))
}

func (p *genflProgress) rounds(what, value string) func(round, rounds int, v float64) {
	return func(round, rounds int, v float64) {
		p.line(what+" round", round, rounds, fmt.Sprintf(", mean %s %.4f", value, v))
	}
}

func (p *genflProgress) count(what, unit string) func(done, total int) {
	return func(done, total int) { p.line(what+" "+unit, done, total, "") }
}

func (p *genflProgress) done() {}

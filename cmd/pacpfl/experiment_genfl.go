package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl/genfl"
	"github.com/pacpfl/pacpfl/harness"
	"github.com/pacpfl/pacpfl/methods"
	"github.com/pacpfl/pacpfl/report"
	"github.com/pacpfl/pacpfl/runlog"
)

// genflFlags are the settings of GenFL/FEDBOUND shared by
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

// addGenFLFlags registers the flags of GenFL; their defaults are the
// paper's (genfl.DefaultOptions with a learnt prior and FEDBOUND's pairs),
// and 0 leaves a setting that depends on the prior or the estimator at
// DefaultOptions' choice.
func addGenFLFlags(fs *flag.FlagSet, g *genflFlags) {
	d := genfl.DefaultOptions(genfl.LearntPriorKind, genfl.Pairs, 0)
	r := genfl.DefaultOptions(genfl.RandomPriorKind, genfl.Full, 0)
	byPrior := func(what string, learnt, random any) string {
		return fmt.Sprintf("%s (0: %v with a learnt prior, %v with a random one", what, learnt, random)
	}
	fs.StringVar(&g.prior, "prior", d.Prior.String(), "prior: learnt (ERM on the first half of every user's data; "+
		"posterior and bound on the second) or random (data-free, truncated normal means)")
	fs.StringVar(&g.objective, "objective", d.Objective.Objective.String(),
		"training objective: f1 (Pinsker relaxation) or f2 (quadratic relaxation)")
	g.hidden = intList(d.Arch.Hidden)
	fs.Var(&g.hidden, "hidden", "hidden layer widths of the MLP (the seed's parameter count is that of 600,600,600)")
	fs.Float64Var(&g.sigmaPrior, "sigma-prior", d.SigmaPrior, "σ of the Gaussian prior over every weight")
	fs.Float64Var(&g.klPenalty, "kl-penalty", 0, byPrior("factor of KL(Q‖P) in the objective only",
		d.Objective.KLPenalty, r.Objective.KLPenalty)+", as the paper)")
	fs.IntVar(&g.rounds, "rounds", 0, byPrior("GenFL rounds", d.PosteriorFed.Rounds, r.PosteriorFed.Rounds)+")")
	fs.IntVar(&g.localEpochs, "local-epochs", 0,
		byPrior("local epochs E per round", d.PosteriorFed.LocalEpochs, r.PosteriorFed.LocalEpochs)+")")
	fs.IntVar(&g.priorRounds, "prior-rounds", d.PriorFed.Rounds, "rounds of the learnt prior's federated ERM")
	fs.IntVar(&g.priorEpochs, "prior-epochs", d.PriorFed.LocalEpochs,
		"local epochs of the learnt prior's federated ERM")
	fs.IntVar(&g.personalEpochs, "personal-epochs", d.PersonalEpochs, "pfl: epochs of each user's personalisation")
	fs.Float64Var(&g.fraction, "fraction", d.PosteriorFed.Fraction, "fraction C of the users sampled each round")
	fs.Float64Var(&g.lr, "lr", d.PosteriorFed.LR, "SGD learning rate")
	fs.Float64Var(&g.momentum, "momentum", d.PosteriorFed.Momentum, "SGD momentum of GenFL and the personalisation")
	fs.Float64Var(&g.priorMomentum, "prior-momentum", d.PriorFed.Momentum, "SGD momentum of the learnt prior's ERM")
	fs.Float64Var(&g.dropout, "dropout", d.Dropout, "dropout of the learnt prior's ERM")
	fs.IntVar(&g.batch, "batch", d.PosteriorFed.Batch, "mini-batch size")
	fs.Float64Var(&g.delta, "delta", d.Objective.Delta, "δ of McAllester's bound (also in the objective)")
	fs.Float64Var(&g.deltaPrime, "delta-prime", d.DeltaPrime, "δ′ of the bound's Monte Carlo step")
	fs.Float64Var(&g.pMin, "p-min", d.Objective.PMin, "probability floor of the bounded cross-entropy")
	fs.StringVar(&g.estimator, "estimator", d.MC.Estimator.String(), "FEDBOUND's sampling: pairs (n independent "+
		"(weight draw, training example) pairs, exact by local reparameterisation) or full (Alg. 2 as printed: every "+
		"user evaluates n weight draws on all its examples)")
	fs.IntVar(&g.mcSamples, "mc-samples", 0, fmt.Sprintf(
		"n of FEDBOUND (0: %d pairs, the paper's n; %d weight draws per user with --estimator full)", d.MC.N, r.MC.N))
	fs.IntVar(&g.clientMCSamples, "client-mc-samples", d.ClientMC.N, "pfl: n of each user's own bound")
	fs.IntVar(&g.stack, "stack", d.MC.Stack, "--estimator full: weight samples evaluated together")
	fs.IntVar(&g.testDraws, "test-draws", d.TestDraws, "weight draws per test image of the Gibbs test error")
	fs.StringVar(&g.setting, "setting", "", "flsob (GenFL + the global FEDBOUND) or pfl (Alg. 3/4: personalised "+
		"posteriors and per-user bounds); default flsob for --partition iid, pfl for shards")
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
	if err := g.check(o.Objective.KLPenalty); err != nil {
		return o, err
	}
	o.Arch.Hidden = slices.Clone([]int(g.hidden))
	o.SigmaPrior, o.Dropout = g.sigmaPrior, g.dropout
	pf := &o.PriorFed
	pf.Rounds, pf.Fraction, pf.LocalEpochs, pf.Batch, pf.LR, pf.Momentum = g.priorRounds, g.fraction, g.priorEpochs,
		g.batch, g.lr, g.priorMomentum
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
	o.Workers, o.PriorFed.Workers, o.PosteriorFed.Workers, o.MC.Workers, o.ClientMC.Workers = workers, workers, workers,
		workers, workers
	return o, nil
}

func genflUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: pacpfl experiment genfl [--partition iid|shards] [--prior learnt|random] [--objective "+
		"f1|f2] [--seeds N] [--seed-base S] [--json FILE] [flags]")
}

// runExperimentGenFL is pacpfl experiment genfl: GenFL + FEDBOUND (FL-SOB)
// or Alg. 3/4 (PFL) on Fashion-MNIST over several seeds.
func runExperimentGenFL(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("experiment genfl", stderr)
	var g genflFlags
	addGenFLFlags(fs, &g)
	d := methods.DefaultGenFLData()
	fs.StringVar(&d.Partition, "partition", d.Partition,
		"users: iid (label-blind random draws) or shards (label-sorted shards, McMahan et al.)")
	fs.IntVar(&d.Clients, "clients", d.Clients, "number of users K")
	fs.IntVar(&d.Train, "train-per-client", d.Train, "iid: training images per user")
	fs.IntVar(&d.Test, "test-per-client", d.Test, "iid: test images per user")
	fs.IntVar(&d.ShardSize, "shard-size", d.ShardSize,
		"shards: images per shard (2 shards per user, 10 % of them test)")
	dataDir := fs.String("data-dir", "",
		"directory of the Fashion-MNIST IDX files (default $"+data.DataDirEnv+", then "+data.FashionMNISTDebianDir+")")
	seeds := fs.Int("seeds", 5, "number of seeds")
	seedBase := fs.Uint64("seed-base", 1, "first seed; seeds are seed-base, seed-base+1, …")
	quiet := fs.Bool("quiet", false, "no progress output")
	jsonPath := fs.String("json", "", "also write the results as JSON to `FILE`")
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	fail := func(err error) int { return fail(stderr, "experiment genfl", err) }
	if err := g.checkData(d); err != nil {
		return fail(err)
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
	start := time.Now()
	im, err := data.FashionMNIST(*dataDir)
	if err != nil {
		return fail(usageError{err})
	}
	deal := d.Data(im)
	exp := harness.Experiment{Seeds: harness.Seeds(*seeds, *seedBase),
		Methods: []harness.Method{methods.GenFLBound{Options: o0, Setting: g.setting}},
		Data: func(seed uint64) (*data.Dataset, error) {
			ds, err := deal(seed)
			if err != nil {
				return nil, usageError{err}
			}
			return ds, nil
		}}
	obs := &runlog.GenFL{W: stderr, Quiet: *quiet, Full: o0.MC.Estimator == genfl.Full}
	ctx, stop := signalContext()
	defer stop()
	hr, err := harness.Run(ctx, exp, obs)
	if err != nil {
		return fail(err)
	}
	rep := report.NewGenFL(d.Partition, g.setting, o0, report.CPUName())
	if err := rep.Add(hr, time.Since(start).Seconds()); err != nil {
		return fail(err)
	}
	write := func(w io.Writer) { rep.WriteText(w, d.Clients, d.PooledTestImages(), o0.TestDraws) }
	return emitReport("experiment genfl", *jsonPath, rep, write, stdout, stderr)
}

// checkData checks the users' flags and sets the setting's default for
// the partition.
func (g *genflFlags) checkData(d methods.GenFLData) error {
	if d.Partition != methods.PartitionIID && d.Partition != methods.PartitionShards {
		return usagef("unknown --partition %q (iid or shards)", d.Partition)
	}
	if g.setting == "" {
		g.setting = d.Setting()
	}
	if g.setting != methods.FLSOB && g.setting != methods.PFL {
		return usagef("unknown --setting %q (flsob or pfl)", g.setting)
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"clients", d.Clients}, {"train-per-client", d.Train}, {"test-per-client", d.Test}, {"shard-size", d.ShardSize}} {
		if c.v < 1 {
			return usagef("--%s %d must be at least 1", c.name, c.v)
		}
	}
	return nil
}

// check validates the flags; klPenalty is the KL factor in effect.
func (g *genflFlags) check(klPenalty float64) error {
	positive := map[string]float64{"sigma-prior": g.sigmaPrior, "kl-penalty": klPenalty, "lr": g.lr}
	for _, name := range []string{"sigma-prior", "kl-penalty", "lr"} {
		if v := positive[name]; !(v > 0) || math.IsInf(v, 0) {
			return usagef("--%s %v must be positive and finite", name, v)
		}
	}
	counts := []struct {
		name string
		v    int
	}{{"rounds", g.rounds}, {"local-epochs", g.localEpochs}, {"prior-rounds", g.priorRounds},
		{"prior-epochs", g.priorEpochs},
		{"personal-epochs", g.personalEpochs}, {"batch", g.batch}, {"mc-samples", g.mcSamples},
		{"client-mc-samples", g.clientMCSamples},
		{"stack", g.stack}, {"test-draws", g.testDraws}}
	for _, c := range counts {
		min := 1
		if c.name == "rounds" || c.name == "local-epochs" || c.name == "mc-samples" {
			min = 0 // 0: the default
		}
		if c.v < min {
			return usagef("--%s %d must be at least %d", c.name, c.v, max(min, 1))
		}
	}
	switch {
	case !(g.fraction > 0 && g.fraction <= 1):
		return usagef("--fraction %v must lie in (0, 1]", g.fraction)
	case !(g.momentum >= 0 && g.momentum < 1) || !(g.priorMomentum >= 0 && g.priorMomentum < 1):
		return usagef("--momentum %v and --prior-momentum %v must lie in [0, 1)", g.momentum, g.priorMomentum)
	case !(g.dropout >= 0 && g.dropout < 1):
		return usagef("--dropout %v must lie in [0, 1)", g.dropout)
	case !(g.delta > 0 && g.deltaPrime > 0 && g.delta+g.deltaPrime < 1):
		return usagef("--delta %v and --delta-prime %v must be positive with δ + δ′ < 1", g.delta, g.deltaPrime)
	case !(g.pMin > 0 && g.pMin < 1):
		return usagef("--p-min %v must lie in (0, 1)", g.pMin)
	case len(g.hidden) == 0:
		return usagef("--hidden needs at least one width")
	}
	for _, h := range g.hidden {
		if h < 1 {
			return usagef("--hidden widths must be at least 1, got %v", g.hidden)
		}
	}
	return nil
}

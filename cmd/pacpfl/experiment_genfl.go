package main

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/genfl"
	"github.com/pacpfl/pacpfl/harness"
	"github.com/pacpfl/pacpfl/internal/flagvalue"
	"github.com/pacpfl/pacpfl/methods"
	"github.com/pacpfl/pacpfl/option"
	"github.com/pacpfl/pacpfl/report"
	"github.com/pacpfl/pacpfl/runlog"
)

// genflFlags are the settings of GenFL/FEDBOUND of experiment genfl: o
// holds the flags bound to its fields; the prior, objective and estimator
// are parsed after the flags, and --fraction, --batch, --lr and --stack
// apply to both federations and both bounds.
type genflFlags struct {
	o                                    genfl.Options
	prior, objective, estimator, setting string
	pacpflRounds                         int           // --prior pacpfl: PAC-PFL's server rounds
	fs                                   *flag.FlagSet // to name o's fields by their flags
}

// genflShared are the fields options copies from another's flag, to name
// that flag in an option.FieldError of genfl.Options.Validate.
var genflShared = map[string]string{"PriorFed.LR": "PosteriorFed.LR", "PriorFed.Batch": "PosteriorFed.Batch",
	"PriorFed.Fraction": "PosteriorFed.Fraction", "ClientMC.Stack": "MC.Stack"}

// addGenFLFlags registers the flags of GenFL; their defaults are the
// paper's (genfl.DefaultOptions with a learnt prior and FEDBOUND's pairs),
// and 0 leaves a setting that depends on the prior or the estimator at
// DefaultOptions' choice (genfl.Options.FillDefaults).
func addGenFLFlags(fs *flag.FlagSet, g *genflFlags) {
	d := genfl.DefaultOptions(genfl.LearntPriorKind, genfl.Pairs, 0)
	r := genfl.DefaultOptions(genfl.RandomPriorKind, genfl.Full, 0)
	g.o, g.fs = d, fs
	o, qf, pf := &g.o, &g.o.PosteriorFed, &g.o.PriorFed
	o.Objective.KLPenalty, qf.Rounds, qf.LocalEpochs, o.MC.N = 0, 0, 0, 0
	byPrior := func(what string, learnt, random any) string {
		return fmt.Sprintf("%s (0: %v with a learnt prior, %v with a random one", what, learnt, random)
	}
	fs.StringVar(&g.prior, "prior", d.Prior.String(), "prior: learnt (ERM on the first half of every user's data; "+
		"posterior and bound on the second), random (data-free, truncated normal means) or pacpfl (PAC-PFL's "+
		"hyper-posterior learnt on the first halves, certified the same way, printed beside the learnt prior's; "+
		"pfl, one --hidden width)")
	fs.IntVar(&g.pacpflRounds, "pacpfl-rounds", fl.DefaultBNNRounds, "--prior pacpfl: rounds of PAC-PFL's server")
	fs.StringVar(&g.objective, "objective", d.Objective.Objective.String(),
		"training objective: f1 (Pinsker relaxation) or f2 (quadratic relaxation)")
	fs.Var((*flagvalue.Ints)(&o.Arch.Hidden), "hidden",
		"hidden layer widths of the MLP (the seed's parameter count is that of 600,600,600)")
	fs.Float64Var(&o.SigmaPrior, "sigma-prior", d.SigmaPrior, "σ of the Gaussian prior over every weight")
	fs.Float64Var(&o.Objective.KLPenalty, "kl-penalty", 0, byPrior("factor of KL(Q‖P) in the objective only",
		d.Objective.KLPenalty, r.Objective.KLPenalty)+", as the paper)")
	fs.IntVar(&qf.Rounds, "rounds", 0, byPrior("GenFL rounds", d.PosteriorFed.Rounds, r.PosteriorFed.Rounds)+")")
	fs.IntVar(&qf.LocalEpochs, "local-epochs", 0,
		byPrior("local epochs E per round", d.PosteriorFed.LocalEpochs, r.PosteriorFed.LocalEpochs)+")")
	fs.IntVar(&pf.Rounds, "prior-rounds", d.PriorFed.Rounds, "rounds of the learnt prior's federated ERM")
	fs.IntVar(&pf.LocalEpochs, "prior-epochs", d.PriorFed.LocalEpochs,
		"local epochs of the learnt prior's federated ERM")
	fs.IntVar(&o.PersonalEpochs, "personal-epochs", d.PersonalEpochs, "pfl: epochs of each user's personalisation")
	fs.Float64Var(&qf.Fraction, "fraction", d.PosteriorFed.Fraction, "fraction C of the users sampled each round")
	fs.Float64Var(&qf.LR, "lr", d.PosteriorFed.LR, "SGD learning rate")
	fs.Float64Var(&qf.Momentum, "momentum", d.PosteriorFed.Momentum, "SGD momentum of GenFL and the personalisation")
	fs.Float64Var(&pf.Momentum, "prior-momentum", d.PriorFed.Momentum, "SGD momentum of the learnt prior's ERM")
	fs.Float64Var(&o.Dropout, "dropout", d.Dropout, "dropout of the learnt prior's ERM")
	fs.IntVar(&qf.Batch, "batch", d.PosteriorFed.Batch, "mini-batch size")
	fs.Float64Var(&o.Objective.Delta, "delta", d.Objective.Delta, "δ of McAllester's bound (also in the objective)")
	fs.Float64Var(&o.DeltaPrime, "delta-prime", d.DeltaPrime, "δ′ of the bound's Monte Carlo step")
	fs.Float64Var(&o.Objective.PMin, "p-min", d.Objective.PMin, "probability floor of the bounded cross-entropy")
	fs.StringVar(&g.estimator, "estimator", d.MC.Estimator.String(), "FEDBOUND's sampling: pairs (n independent "+
		"(weight draw, training example) pairs, exact by local reparameterisation) or full (Alg. 2 as printed: every "+
		"user evaluates n weight draws on all its examples)")
	fs.IntVar(&o.MC.N, "mc-samples", 0, fmt.Sprintf(
		"n of FEDBOUND (0: %d pairs, the paper's n; %d weight draws per user with --estimator full)", d.MC.N, r.MC.N))
	fs.IntVar(&o.ClientMC.N, "client-mc-samples", d.ClientMC.N, "pfl: n of each user's own bound")
	fs.IntVar(&o.MC.Stack, "stack", d.MC.Stack, "--estimator full: weight samples evaluated together")
	fs.IntVar(&o.TestDraws, "test-draws", d.TestDraws, "weight draws per test image of the Gibbs test error")
	fs.StringVar(&g.setting, "setting", "", "flsob (GenFL + the global FEDBOUND) or pfl (Alg. 3/4: personalised "+
		"posteriors and per-user bounds); default flsob for --partition iid, pfl for shards")
}

// options validates the flags and returns the run's options: the seed's
// (genfl.DefaultOptions for the prior and the estimator) with every flag
// given, or left at a default of its own, in place.
func (g *genflFlags) options(seed uint64) (genfl.Options, error) {
	o := g.o
	var err error
	prior := g.prior
	if prior == priorPACPFL { // GenFL's learnt prior beside PAC-PFL's
		prior = genfl.LearntPriorKind.String()
	}
	if o.Prior, err = genfl.ParsePriorKind(prior); err != nil {
		return o, usageError{err}
	}
	if o.Objective.Objective, err = genfl.ParseObjective(g.objective); err != nil {
		return o, usageError{err}
	}
	if o.MC.Estimator, err = genfl.ParseEstimator(g.estimator); err != nil {
		return o, usageError{err}
	}
	o.ClientMC.Estimator, o.ClientMC.Stack, o.Arch.Hidden = o.MC.Estimator, o.MC.Stack, slices.Clone(o.Arch.Hidden)
	o.PriorFed.Fraction, o.PriorFed.Batch, o.PriorFed.LR = o.PosteriorFed.Fraction, o.PosteriorFed.Batch,
		o.PosteriorFed.LR
	o.Reseed(seed)
	o.FillDefaults()
	if err := o.Validate(); err != nil {
		flags := option.FlagNames(g.fs, &g.o)
		return o, fieldUsage(err, func(field string) string { return flags[cmp.Or(genflShared[field], field)] })
	}
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
		"users: iid (label-blind random draws), shards (label-sorted shards, McMahan et al.) or labels5 (experiment "+
			"fmnist's split: one user per class holding 5 labels, --split)")
	fs.StringVar(&d.Split, "split", d.Split, "labels5: small, medium or large (training / test images per label "+
		"and user: 50/950, 200/800, 900/300)")
	fs.IntVar(&d.New, "new-clients", 0, "labels5: new users, never in training (certified with --prior pacpfl only)")
	fs.IntVar(&d.MaxImages, "max-images", 0, "labels5: at most this many images, the split's sizes scaled down "+
		"(0: no cap)")
	fs.IntVar(&d.Clients, "clients", d.Clients, "number of users K (iid, shards)")
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
	if err := g.checkData(d, option.FlagNames(fs, &d)); err != nil {
		return fail(err)
	}
	if err := checkSeeds(*seeds, *seedBase); err != nil {
		return fail(err)
	}
	o0, err := g.options(*seedBase)
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
	ms := []harness.Method{methods.GenFLBound{Options: o0, Setting: g.setting}}
	if g.prior == priorPACPFL {
		m, err := methods.NewPACPFLPriorBound(o0)
		if err != nil {
			return fail(usageError{err})
		}
		m.PACPFL.Options.Server.Rounds = g.pacpflRounds
		ms = append(ms, m)
	}
	exp := harness.Experiment{Seeds: harness.Seeds(*seeds, *seedBase), Methods: ms,
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
	var reps []*report.GenFL
	for i := range hr.Methods {
		one := *hr
		one.Methods = hr.Methods[i : i+1]
		rep := report.NewGenFL(d.Partition, g.setting, o0, report.CPUName())
		if err := rep.Add(&one, time.Since(start).Seconds()); err != nil {
			return fail(err)
		}
		reps = append(reps, rep)
	}
	write := func(w io.Writer) {
		for i, rep := range reps {
			if i > 0 {
				fmt.Fprintln(w, "\nThe same users, PAC-PFL's prior:")
			}
			rep.WriteText(w, d.Users(o0.Arch.Classes), d.PooledTestImages(), o0.TestDraws)
		}
	}
	var js any = reps[0]
	if len(reps) > 1 {
		js = map[string]*report.GenFL{"genfl": reps[0], "pacpfl": reps[1]}
	}
	return emitReport("experiment genfl", *jsonPath, js, write, stdout, stderr)
}

// priorPACPFL is --prior pacpfl: GenFL's learnt prior and, on the same
// users, PAC-PFL's (methods.PACPFLPriorBound).
const priorPACPFL = "pacpfl"

// checkData checks the users' flags (flags: those of d's fields) and sets
// the setting's default for the partition.
func (g *genflFlags) checkData(d methods.GenFLData, flags map[string]string) error {
	if err := d.Validate(); err != nil {
		return fieldUsage(err, func(field string) string { return flags[field] })
	}
	if g.setting == "" {
		g.setting = d.Setting()
	}
	if g.setting != methods.FLSOB && g.setting != methods.PFL {
		return usagef("unknown --setting %q (flsob or pfl)", g.setting)
	}
	if g.pacpflRounds < 1 {
		return usagef("--pacpfl-rounds %d: want at least 1", g.pacpflRounds)
	}
	if g.prior == priorPACPFL && (g.setting != methods.PFL || len(g.o.Arch.Hidden) != 1) {
		return usagef("--prior pacpfl needs --setting pfl and one --hidden width (PAC-PFL's MLP), not %s and %d",
			g.setting, len(g.o.Arch.Hidden))
	}
	return nil
}

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/harness"
	"github.com/pacpfl/pacpfl/methods"
	"github.com/pacpfl/pacpfl/papers"
	"github.com/pacpfl/pacpfl/report"
)

func init() {
	register(&command{
		name:    "experiment",
		summary: "compare PAC-PFL with its baselines over several seeds (pacpfl experiment polynomial|fmnist)",
		run:     runExperiment,
	})
}

// regressionMethods are the methods of experiment polynomial and pv, in
// table order.
var regressionMethods = methods.Names(methods.Regression)

func runExperiment(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || isHelp(args[0]) {
		if len(args) == 0 {
			fmt.Fprintln(stderr,
				"usage: pacpfl experiment polynomial|pv|fmnist|genfl [flags]   (pacpfl experiment -h for the flags)")
			return exitUsage
		}
		fmt.Fprintln(stdout, "usage: pacpfl experiment polynomial [--seeds 5] [--seed-base N] [--methods "+
			"pacpfl,pfedgp,mtl,maml,vanilla,pooled] [--k-sweep 1,2,4,8 | --dp-sweep ε,…] [--json FILE] [train flags]")
		fmt.Fprintln(stdout, "       pacpfl experiment pv --variant s|ew --samples 150|610 [the same flags]")
		fmnistUsage(stdout)
		genflUsage(stdout)
		fmt.Fprintln(stdout,
			"\nThe flags of experiment polynomial (pacpfl experiment fmnist -h lists those of fmnist):")
		return runExperiment([]string{"polynomial", "-h"}, stdout, stderr)
	}
	if args[0] == dataFMNIST {
		return runExperimentFMNIST(args[1:], stdout, stderr)
	}
	if args[0] == "genfl" {
		return runExperimentGenFL(args[1:], stdout, stderr)
	}
	if args[0] != "polynomial" && args[0] != "pv" {
		if strings.HasPrefix(args[0], "-") {
			fmt.Fprintf(stderr, "pacpfl experiment: the data set comes before the flags: pacpfl experiment "+
				"polynomial|pv|fmnist|genfl [flags] (got %q first)\n", args[0])
		} else {
			fmt.Fprintf(stderr, "pacpfl experiment: unknown dataset %q (available: polynomial, pv, fmnist, genfl)\n",
				args[0])
		}
		return exitUsage
	}
	x, st, ok := parseRegressionExperiment(args[0], args[1:], stderr)
	if !ok {
		return st
	}
	f := &x.f
	switch {
	case len(x.kSweep) > 0:
		return runKSweep(x, stdout, stderr)
	case f.dpSweep:
		return runDPSweep(x, stdout, stderr)
	}
	return runRegressionTable(x, stdout, stderr)
}

// regressionExperiment is experiment polynomial's or pv's parsed flags.
type regressionExperiment struct {
	f        trainFlags
	seeds    int
	seedBase uint64
	methods  stringList
	kSweep   intList
	dpSweep  floatList
	quiet    bool
	jsonPath string
}

// parseRegressionExperiment parses and checks the flags of experiment
// polynomial or pv; ok=false: exit with status.
func parseRegressionExperiment(dsName string, args []string,
	stderr io.Writer) (x *regressionExperiment, status int, ok bool) {
	x = &regressionExperiment{f: regressionFlags(dsName)}
	f := &x.f
	fs := newFlagSet("experiment "+dsName, stderr)
	// The comparison computes no bounds, and its seeds are --seeds and
	// --seed-base: it registers neither the bounds' flags nor --seed.
	f.registerSVGD(fs)
	f.registerTemp(fs)
	f.registerDP(fs)
	f.registerData(fs)
	f.net.register(fs)
	f.registerInference(fs)
	pv := addPVFlags(fs, dsName)
	fs.IntVar(&x.seeds, "seeds", 5, "number of seeds")
	fs.Uint64Var(&x.seedBase, "seed-base", 1, "first seed; seeds are seed-base, seed-base+1, …")
	x.methods = slices.Clone(regressionMethods)
	fs.Var(&x.methods, "methods", "comma-separated methods to run")
	fs.Var(&x.kSweep, "k-sweep",
		"instead of the method table: PAC-PFL's utility at each of these numbers of particles "+
			"k (e.g. 1,2,4,8; the paper's Fig. 3)")
	f.registerComparison(fs)
	fs.Var(&x.dpSweep, "dp-sweep",
		"instead of the method table: PAC-PFL's utility at each of these guaranteed ε (e.g. "+
			"1,10,100; --dp-mechanism, --dp-delta, --dp-clip apply), beside the non-private run; default data: the "+
			"paper's Fig. 4 setting, 120 existing clients")
	fs.BoolVar(&x.quiet, "quiet", false, "no progress output")
	fs.StringVar(&x.jsonPath, "json", "", "also write the results as JSON to `FILE`")
	if st, ok := parseFlags(fs, args, false); !ok {
		return nil, st, false
	}
	f.dpSweep, f.kSweep = len(x.dpSweep) > 0, len(x.kSweep) > 0
	f.baselineSet = flagSet(fs, "baseline-steps")
	check := func() error {
		if f.dpSweep && f.kSweep {
			return usagef("--dp-sweep and --k-sweep are two experiments: run them one at a time")
		}
		if f.kSweep && flagSet(fs, "k") {
			return usagef("--k-sweep sets k itself: drop --k")
		}
		if err := pv.apply(f); err != nil {
			return err
		}
		if err := f.checkExperiment(fs, x.methods, x.seeds, x.seedBase); err != nil {
			return err
		}
		return f.afterParse(fs, x.jsonPath)
	}
	if err := check(); err != nil {
		return nil, fail(stderr, "experiment", err), false
	}
	f.o.Bounds.PriorSamples, f.learnedSamples = 0, 0
	if f.dpSweep && !flagSet(fs, "clients") && f.pv == nil {
		f.poly.Existing = papers.DPClients
	}
	return x, exitOK, true
}

// runRegressionTable runs the methods of x on every seed and prints the
// paper's Table 6 beside ours.
func runRegressionTable(x *regressionExperiment, stdout, stderr io.Writer) int {
	f := &x.f
	// Every method's options are checked on the first seed's data before
	// any work: a bad flag fails at once, not after the methods before it.
	ds0, err := f.dataset(x.seedBase)
	if err != nil {
		return fail(stderr, "experiment", err)
	}
	if _, err := f.options(ds0, x.seedBase); err != nil {
		return fail(stderr, "experiment", err)
	}
	ms, err := f.regressionMethods(x.methods, ds0, x.seedBase)
	if err != nil {
		return fail(stderr, "experiment", err)
	}
	exp := harness.Experiment{Data: f.dataset, Seeds: harness.Seeds(x.seeds, x.seedBase), Methods: ms}
	hr, err := x.run("", nil, func(ctx context.Context, obs harness.Observer) (*harness.Report, error) {
		return harness.Run(ctx, exp, obs)
	}, stderr)
	if err != nil {
		return fail(stderr, "experiment", err)
	}
	rep := report.NewExperiment(f.datasetKey(), hr)
	return emitReport("experiment", x.jsonPath, rep,
		func(w io.Writer) { rep.WriteText(w, x.methods, f.poly.Existing, f.poly.New) }, stdout, stderr)
}

// checkExperiment validates the flags of experiment polynomial that train
// does not have.
func (f *trainFlags) checkExperiment(fs *flag.FlagSet, names []string, seeds int, seedBase uint64) error {
	if err := checkSeeds(seeds, seedBase); err != nil {
		return err
	}
	if f.dpSweep || f.kSweep {
		sweep := "--dp-sweep"
		if f.kSweep {
			sweep = "--k-sweep"
		}
		for _, name := range []string{"methods", "baseline-steps", "pfedgp-mean"} {
			if flagSet(fs, name) {
				return usagef("--%s does not apply to %s (which trains PAC-PFL only)", name, sweep)
			}
		}
		return nil
	}
	if err := (methods.Settings{PFedGPMean: f.pfedgpMean}).Validate(); err != nil {
		return fieldUsage(err, flagsOf(map[string]string{"PFedGPMean": "pfedgp-mean"}))
	}
	if f.baselineSteps < 1 {
		return usagef("--baseline-steps %d must be at least 1", f.baselineSteps)
	}
	// A repeated method would pool its runs as if they were more seeds and
	// print a confidence interval that is too narrow.
	return checkNames("--methods", names, regressionMethods)
}

// regressionMethods are the methods of the regression table with the
// flags' settings: PAC-PFL and pFedGP with the training flags (checked on
// ds0, the first seed's data), the baselines with their defaults for the
// data set unless --baseline-steps is given.
func (f *trainFlags) regressionMethods(names []string, ds0 *data.Dataset, seed0 uint64) ([]harness.Method, error) {
	s := methods.Settings{Preset: methods.Polynomial, GPModel: func(d int) *fl.GPModel { return f.gpModel(d, false) },
		PFedGPMean: f.pfedgpMean}
	if f.pv != nil {
		s.Preset = methods.PV
	}
	if f.baselineSet {
		s.BaselineSteps = f.baselineSteps
	}
	if i := slices.IndexFunc(names,
		func(m string) bool { return m == fl.MethodPACPFL || m == fl.MethodPFedGP }); i >= 0 {
		m, err := f.pacpfl(ds0, seed0)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", names[i], err)
		}
		s.PACPFL = &m
	}
	return methods.New(names, s)
}

// pacpfl is PAC-PFL with the training flags' settings, checked on ds0 and
// seed0. The per-data-set parts of the flags (τ from --lambda, c's
// default, the DP noise stream) are the method's to set on every run.
func (f *trainFlags) pacpfl(ds0 *data.Dataset, seed0 uint64) (methods.PACPFL, error) {
	o, err := f.options(ds0, seed0)
	if err != nil {
		return methods.PACPFL{}, err
	}
	o.Server.ClientsPerRound = f.o.Server.ClientsPerRound
	if o.Server.DP != nil {
		o.Server.DP.Noise = nil
	}
	m := methods.PACPFL{Options: o, Lambda: f.lambda, DPNoiseSeed: f.dpNoiseSeed,
		Model: func(d int) *fl.GPModel { return f.gpModel(d, false) }}
	return m, m.Validate()
}

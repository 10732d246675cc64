package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/internal/cli"
	"github.com/pacpfl/pacpfl/internal/flagvalue"
	"github.com/pacpfl/pacpfl/methods"
	"github.com/pacpfl/pacpfl/papers"
	"github.com/pacpfl/pacpfl/report"
)

func init() {
	register(&command{
		name: "tune",
		summary: "choose τ and σ_P by K-fold cross-validation on the existing clients' training data (pacpfl tune " +
			"polynomial)",
		run: runTune,
	})
}

// floatList is the flag.Value of comma-separated positive numbers.
type floatList = flagvalue.Floats

// tuneFlags are pacpfl tune's parsed flags; the grid's and the folds' are
// bound to cv, whose Seed and Split parsing sets.
type tuneFlags struct {
	f                trainFlags
	method, jsonPath string
	quiet            bool
	cv               fl.CVOptions
	fitSteps         intList
	fitLRs           floatList
}

// parseTune parses and checks the flags of tune on dsName; ok=false: exit
// with status.
func parseTune(dsName string, args []string, stderr io.Writer) (x *tuneFlags, status int, ok bool) {
	fs := newFlagSet("tune "+dsName, stderr)
	x = &tuneFlags{f: newTrainFlags()}
	f := &x.f
	// The grid sets τ and σ_P, and cross-validation computes no bounds: it
	// registers neither the temperature's flags nor the bounds'.
	f.registerSVGD(fs)
	registerSeed(fs, &f.seed)
	f.registerDP(fs)
	f.registerData(fs)
	f.net.register(fs)
	f.registerInference(fs)
	pv := addPVFlags(fs, dsName)
	fs.StringVar(&x.method, "method", fl.MethodPACPFL,
		"method whose hyper-parameters to choose: pacpfl (τ, σ_P, η, T), "+
			"mtl (λ_v, learning rate), maml (α, β), vanilla or pooled (Adam steps and step size of the LML fit)")
	cv := &x.cv
	cv.Taus, cv.SigmaPs = methods.DefaultPACPFLGrid()
	fs.Var((*floatList)(&cv.Taus), "taus", "candidate server temperatures τ")
	fs.Var((*floatList)(&cv.SigmaPs), "sigma-ps", "candidate hyper-prior stds σ_P")
	fs.Var((*floatList)(&cv.LRs), "lrs", "candidate server learning rates η (default: --lr only)")
	fs.Var((*intList)(&cv.Checkpoints), "checkpoints",
		"numbers of rounds T at which to score each run (e.g. 500,1000,2000: one run of "+
			"the largest, scored after each; default: --rounds only)")
	steps, fitLRs := methods.DefaultFitGrid()
	x.fitSteps, x.fitLRs = intList(steps), floatList(fitLRs)
	fs.Var(&x.fitSteps, "fit-steps", "--method vanilla|pooled: candidate Adam steps of the LML fit")
	fs.Var(&x.fitLRs, "fit-lrs", "--method vanilla|pooled: candidate Adam step sizes of the LML fit")
	fs.IntVar(&cv.Folds, "folds", 5, "K of K-fold cross-validation over the existing clients")
	cvSplit := fs.String("cv-split", string(fl.CVHalves), "validation clients: halves (each held-out client predicts "+
		"each half of its S_i from the other; the other clients train on all of theirs) or future (every S_i cut at "+
		"its middle in time: the other clients train on their first halves, each held-out client predicts its second "+
		"half from its first — hours no training client saw, like a later test period)")
	fs.BoolVar(&x.quiet, "quiet", false, "no progress output")
	fs.StringVar(&x.jsonPath, "json", "", "also write the results as JSON to `FILE`")
	setDefault(fs, "clients", strconv.Itoa(papers.Table6Clients))
	if st, ok := parseFlags(fs, args, false); !ok {
		return nil, st, false
	}
	if err := f.afterParse(fs, x.jsonPath); err != nil {
		return nil, fail(stderr, "tune", err), false
	}
	var err error
	if cv.Split, err = fl.ParseCVSplit(*cvSplit); err != nil {
		return nil, fail(stderr, "tune", usagef("--cv-split %q: want halves or future", *cvSplit)), false
	}
	if !flagSet(fs, "seed") {
		f.seed = methods.TuneSeed
	}
	if err := pv.apply(f); err != nil {
		return nil, fail(stderr, "tune", err), false
	}
	f.o.Bounds.PriorSamples, f.learnedSamples, cv.Seed = 0, 0, f.seed
	return x, exitOK, true
}

func runTune(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "blas" {
		return runTuneBLAS(args[1:], stdout, stderr)
	}
	if len(args) == 0 || (args[0] != "polynomial" && args[0] != "pv") {
		if len(args) > 0 && isHelp(args[0]) {
			fmt.Fprintln(stdout, "usage: pacpfl tune polynomial|pv [--method pacpfl|mtl|maml|vanilla|pooled] [--taus "+
				"0.05,0.1,0.2,0.5] [--sigma-ps 0.1,0.25,0.5,1] [--lrs η,…] [--checkpoints T,…] [--folds 5] [--seed "+
				"1000] [--json FILE] [train flags]")
			fmt.Fprintln(stdout)
			return runTune([]string{"polynomial", "-h"}, stdout, stderr)
		}
		if len(args) > 0 && strings.HasPrefix(args[0], "-") {
			fmt.Fprintf(stderr, "pacpfl tune: the data set comes before the flags: pacpfl tune polynomial|pv [flags] "+
				"(got %q first)\n", args[0])
		} else {
			fmt.Fprintln(stderr, "usage: pacpfl tune polynomial|pv [flags] (pacpfl tune -h)")
		}
		return exitUsage
	}
	x, st, ok := parseTune(args[0], args[1:], stderr)
	if !ok {
		return st
	}
	f := &x.f
	ds, err := f.dataset(f.seed)
	if err != nil {
		return fail(stderr, "tune", err)
	}
	var base fl.PACPFLOptions
	switch x.method {
	case methods.MTL{}.Name(), methods.MAML{}.Name(), fl.MethodVanilla, fl.MethodPooled:
	case fl.MethodPACPFL:
		if base, err = f.options(ds, f.seed); err != nil {
			return fail(stderr, "tune", err)
		}
	default:
		return fail(stderr, "tune", usagef("--method %q: want pacpfl, mtl, maml, vanilla or pooled", x.method))
	}
	if x.cv.Folds < 2 || x.cv.Folds > len(ds.Existing) {
		return fail(stderr, "tune", usagef("--folds %d: want 2 ≤ K ≤ %d clients", x.cv.Folds, len(ds.Existing)))
	}
	if x.method != fl.MethodPACPFL {
		return runTuneBaseline(x, ds, stdout, stderr)
	}
	return runTunePACPFL(x, ds, base, stdout, stderr)
}

// runTunePACPFL cross-validates PAC-PFL's τ, σ_P, η and T on ds from the
// options base.
func runTunePACPFL(x *tuneFlags, ds *data.Dataset, base fl.PACPFLOptions, stdout, stderr io.Writer) int {
	f, o := &x.f, x.cv
	start := time.Now()
	prog := newProgress(stderr, "tune", len(o.Taus)*len(o.SigmaPs)*max(len(o.LRs), 1)*o.Folds, x.quiet)
	prog.hideLML = true
	o.Progress = func(done, total int) { prog.update(done, math.NaN()) }
	pts, err := fl.CrossValidate(ds, f.gpModel(ds.D, false), base, o)
	prog.done()
	if err != nil {
		return fail(stderr, "tune", err)
	}
	rep := report.Tune{Dataset: f.datasetKey(), Seed: f.seed, Folds: o.Folds, Split: o.Split,
		Clients: len(ds.Existing), Points: pts, Best: pts[0],
		Seconds: time.Since(start).Seconds(), K: base.Server.K, Beta: base.Beta.String(), Net: f.net.text(ds.D)}
	return emitReport("tune", x.jsonPath, rep, rep.WriteText, stdout, stderr)
}

// runTuneBaseline chooses MTL's (λ_v, learning rate), MAML's (α, β) or the
// Adam steps and step size of Vanilla's and Pooled's LML fits by K-fold
// cross-validation on the existing clients' training data only
// (methods.TuneBaseline).
func runTuneBaseline(x *tuneFlags, ds *data.Dataset, stdout, stderr io.Writer) int {
	f, method, cv := &x.f, x.method, x.cv
	start := time.Now()
	g := f.gpModel(ds.D, false)
	pts, err := methods.TuneBaseline(ds, method, func(int) *fl.GPModel { return g }, x.fitSteps, x.fitLRs, cv.Folds,
		cv.Seed, cv.Split)
	if err != nil {
		return fail(stderr, "tune", usageError{err})
	}
	if math.IsInf(pts[0].RSMSE, 1) && len(pts) == 1 {
		return fail(stderr, "tune", fmt.Errorf("every setting failed: %s", pts[0].Failed))
	}
	rep := report.TuneBaseline{Dataset: f.datasetKey(), Method: method, Seed: f.seed, Folds: cv.Folds,
		Split: cv.Split, Points: pts, Best: pts[0], Clients: len(ds.Existing), Seconds: time.Since(start).Seconds()}
	if pts[0].Failed == "" {
		return emitReport("tune", x.jsonPath, rep, rep.WriteText, stdout, stderr)
	}
	text, _ := reportStreams(x.jsonPath, stdout, stderr) // no JSON of a grid that all failed
	rep.WriteText(text)
	return fail(stderr, "tune", fmt.Errorf("every setting failed; the first: %s", pts[0].Failed))
}

// setDefault changes a registered flag's default (the value and what -h
// shows).
var setDefault = cli.SetDefault

// flagSet reports whether the flag name was given on the command line.
var flagSet = cli.Given

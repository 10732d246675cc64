package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/internal/cli"
	"github.com/pacpfl/pacpfl/internal/flagvalue"
	"github.com/pacpfl/pacpfl/methods"
	"github.com/pacpfl/pacpfl/tune"
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
	x = &tuneFlags{f: regressionFlags(dsName)}
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
	o := tune.Options{Method: x.method, CV: x.cv, FitSteps: x.fitSteps, FitLRs: x.fitLRs,
		Model: f.gpModel(ds.D, false), Dataset: f.datasetKey(), Net: f.net.text(ds.D)}
	if x.method == fl.MethodPACPFL {
		if o.Base, err = f.options(ds, f.seed); err != nil {
			return fail(stderr, "tune", err)
		}
	}
	if err := o.Validate(len(ds.Existing)); err != nil {
		return fail(stderr, "tune", fieldUsage(err, flagsOf(map[string]string{"CV.Folds": "folds"})))
	}
	prog := newProgress(stderr, "tune", o.Runs(), x.quiet) // PAC-PFL's: a baseline reports none
	prog.hideLML = true
	o.CV.Progress = func(done, total int) { prog.update(done, math.NaN()) }
	rep, err := tune.Run(ds, o)
	prog.done()
	switch {
	case errors.Is(err, tune.ErrInvalid):
		return fail(stderr, "tune", usageError{err})
	case rep != nil && err != nil: // every setting failed: no JSON of the grid
		text, _ := reportStreams(x.jsonPath, stdout, stderr)
		rep.WriteText(text)
		fallthrough
	case err != nil:
		return fail(stderr, "tune", err)
	}
	return emitReport("tune", x.jsonPath, rep, rep.WriteText, stdout, stderr)
}

// flagSet reports whether the flag name was given on the command line.
var flagSet = cli.Given

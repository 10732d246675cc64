package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/pacpfl/pacpfl/bench"
	"github.com/pacpfl/pacpfl/clienteval"
	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/lml"
)

// `pacpfl gp eval`: the LML (eq. 33) of one GP prior φ on a data set, or
// with --gp-inference sparse the Titsias lower bound on it with M inducing
// inputs chosen from the data's rows, and with --json its gradient, the
// layout of φ and the inducing inputs.
func init() {
	register(&command{
		name:    "gp",
		summary: "GP client model: 'pacpfl gp eval' prints the LML of φ on a CSV data set (and its gradient)",
		run:     runGP,
	})
}

func gpUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: pacpfl gp eval --data FILE.csv (--params FILE | --init-seed N) [--hidden 32,32] [--df 2] [--gp-inference exact|sparse|auto] [--inducing M] [--inducing-seed S] [--json]")
}

func runGP(args []string, stdout, stderr io.Writer) int {
	return runEvalAction("gp", gpUsage, runGPEval, args, stdout, stderr)
}

// runEvalAction runs `pacpfl NAME eval …`, the one action of the client
// model commands (gp, bnn): help prints the usage and eval's flags.
func runEvalAction(name string, usage func(io.Writer), eval func(args []string, stdout, stderr io.Writer) int, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "eval":
		return eval(args[1:], stdout, stderr)
	case "-h", "--help", "-help", "help":
		usage(stdout)
		fmt.Fprintln(stdout)
		return eval([]string{"-h"}, stdout, stderr)
	}
	fmt.Fprintf(stderr, "pacpfl %s: unknown action %q\n", name, args[0])
	usage(stderr)
	return exitUsage
}

// widthList is a flag.Value for hidden-layer widths: "32,32", or "none" (or
// "") for a network without hidden layers.
type widthList []int

func (l *widthList) String() string {
	if len(*l) == 0 {
		return "none"
	}
	return (*intList)(l).String()
}

func (l *widthList) Set(v string) error {
	if s := strings.TrimSpace(v); s == "" || s == "none" {
		*l = widthList{}
		return nil
	}
	return (*intList)(l).Set(v)
}

// The data files of gp eval and bnn eval are CSV as data.ReadNumericCSV
// reads them; csvFormatHelp is what -h says about the format.
const csvFormatHelp = "CSV (RFC 4180: quoted fields allowed, a UTF-8 BOM skipped, # comment lines) of plain decimal numbers"

// maxCSVLine bounds a line of those files (a row of 784 pixels is a few
// KiB), so that a file without line breaks is refused instead of read
// whole into memory; a variable for the tests.
var maxCSVLine = data.DefaultMaxCSVLine

// gpEvalFlags are the flags of gp eval.
type gpEvalFlags struct {
	data, params, mode string
	seed               int64
	sigmaP             float64
	hidden             widthList
	df, inducing       int
	zSeed              uint64
	json               bool
}

func (f *gpEvalFlags) add(fs *flag.FlagSet) {
	fs.StringVar(&f.data, "data", "", "data set, "+csvFormatHelp+": one sample per row, features then y in the last column; a header row is allowed")
	fs.StringVar(&f.params, "params", "", "file with φ, one plain decimal number per line, in the order of the layout (see --json)")
	fs.Int64Var(&f.seed, "init-seed", -1, "instead of --params, draw φ from the default hyper-prior with this seed")
	fs.Float64Var(&f.sigmaP, "sigma-p", 0.5, "hyper-prior standard deviation for --init-seed")
	f.hidden = widthList(lml.DefaultHidden)
	fs.Var(&f.hidden, "hidden", `hidden-layer widths of both networks ("none" for linear networks)`)
	fs.IntVar(&f.df, "df", lml.DefaultDF, "output width of the kernel network")
	fs.BoolVar(&f.json, "json", false, `print {"lml", "grad", "layout", …} as JSON (sparse: also "gp_inference", "inducing" and the M×D "inducing_inputs")`)
	fs.StringVar(&f.mode, "gp-inference", fl.InferenceExact, fmt.Sprintf("exact: the LML by a dense Cholesky of the m×m kernel matrix (about m³ flop, 2·m² doubles); "+
		"sparse: the Titsias lower bound on it with --inducing M inputs chosen from the data's rows by k-means++ seeding, as train chooses a client's (about 4·m·M² flop, O(M²) memory; docs/math.md); "+
		"auto: exact up to %d rows, sparse above. The default is exact, unlike train's auto: gp eval prints the LML unless told otherwise", fl.AutoExactMaxRows))
	fs.IntVar(&f.inducing, "inducing", 0, fmt.Sprintf("inducing inputs M of the sparse bound (0: %d, or the rows if fewer; more than the rows is an error)", fl.DefaultInducing))
	fs.Uint64Var(&f.zSeed, "inducing-seed", 1, "seed of the inducing inputs' choice, with a hash of the inputs (train --seed S chooses a client's Z as --inducing-seed S does on the same inputs)")
}

// check refuses bad flags (a usage error) before any file is read.
func (f *gpEvalFlags) check() error {
	switch {
	case f.data == "":
		return usagef("--data is required")
	case (f.params == "") == (f.seed < 0):
		return usagef("give exactly one of --params FILE and --init-seed N (N ≥ 0)")
	case f.df < 1:
		return usagef("--df %d: want at least 1", f.df)
	case !(f.sigmaP > 0) || math.IsInf(f.sigmaP, 0):
		return usagef("--sigma-p %v: want a positive number", f.sigmaP)
	case f.mode != fl.InferenceExact && f.mode != fl.InferenceSparse && f.mode != fl.InferenceAuto:
		return usagef("--gp-inference %q: want exact, sparse or auto", f.mode)
	case f.inducing < 0:
		return usagef("--inducing %d: want at least 1 inducing input (0: the default %d)", f.inducing, fl.DefaultInducing)
	}
	return nil
}

// phi is φ of --params or --init-seed.
func (f *gpEvalFlags) phi(model lml.Model) ([]float64, error) {
	if f.params == "" {
		return clienteval.GPPrior(model, f.sigmaP, uint64(f.seed))
	}
	phi, err := data.ReadNumbers(f.params)
	if err == nil {
		err = clienteval.CheckParams(f.params, phi, model)
	}
	return phi, err
}

func runGPEval(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("gp eval", stderr)
	var f gpEvalFlags
	f.add(fs)
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	if err := f.check(); err != nil {
		return fail(stderr, "gp eval", err)
	}
	inf := fl.GPInference{Mode: f.mode, Inducing: f.inducing, Seed: f.zSeed}
	X, y, d, err := data.ReadNumericCSV(f.data, maxCSVLine)
	if err != nil {
		return fail(stderr, "gp eval", err)
	}
	model := lml.Model{D: d, DF: f.df, MeanHidden: f.hidden, KernelHidden: f.hidden}
	sparse, M, err := inf.Plan(len(y))
	if err != nil {
		return fail(stderr, "gp eval", usagef("--inducing %d: the data have only %d rows", f.inducing, len(y)))
	}
	if st, ok := checkMemory(stderr, "gp eval", fmt.Sprintf("--hidden %v --df %d on %d samples", f.hidden, f.df, len(y)),
		clienteval.GPMemoryBytes(model, len(y), sparse, M)); !ok {
		return st
	}
	phi, err := f.phi(model)
	if err != nil {
		return fail(stderr, "gp eval", err)
	}
	res, err := clienteval.GP(model, inf, X, y, phi)
	if err == nil && f.json {
		err = bench.JSONLine(stdout, res)
	} else if err == nil {
		err = res.WriteText(stdout)
	}
	if err != nil {
		return fail(stderr, "gp eval", err)
	}
	return exitOK
}

package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/pacpfl/pacpfl/bench"
	"github.com/pacpfl/pacpfl/clienteval"
	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/internal/cli"
	"github.com/pacpfl/pacpfl/internal/flagvalue"
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
	fmt.Fprintln(w, "usage: pacpfl gp eval --data FILE.csv (--params FILE | --init-seed N) [--hidden 32,32] [--df 2] "+
		"[--gp-inference exact|sparse|auto] [--inducing M] [--inducing-seed S] [--json]")
}

func runGP(args []string, stdout, stderr io.Writer) int {
	return runEvalAction("gp", gpUsage, runGPEval, args, stdout, stderr)
}

// runEvalAction runs `pacpfl NAME eval …`, the one action of the client
// model commands (gp, bnn): help prints the usage and eval's flags.
func runEvalAction(name string, usage func(io.Writer), eval func(args []string, stdout, stderr io.Writer) int,
	args []string, stdout, stderr io.Writer) int {
	return cli.RunAction("pacpfl "+name, "eval", usage, eval, args, stdout, stderr)
}

// The data files of gp eval and bnn eval are CSV as data.ReadNumericCSV
// reads them; csvFormatHelp is what -h says about the format.
const csvFormatHelp = "CSV (RFC 4180: quoted fields allowed, a UTF-8 BOM skipped, # comment lines) of plain decimal " +
	"numbers"

// maxCSVLine bounds a line of those files (a row of 784 pixels is a few
// KiB), so that a file without line breaks is refused instead of read
// whole into memory; a variable for the tests.
var maxCSVLine = data.DefaultMaxCSVLine

// gpEvalFlags are the flags of gp eval: the options and --json.
type gpEvalFlags struct {
	o      clienteval.GPFile
	hidden flagvalue.Widths
	json   bool
}

func (f *gpEvalFlags) add(fs *flag.FlagSet) *bool {
	o := &f.o
	fs.StringVar(&o.Data, "data", "",
		"data set, "+csvFormatHelp+": one sample per row, features then y in the last column; a header row is allowed")
	fs.StringVar(&o.Params, "params", "",
		"file with φ, one plain decimal number per line, in the order of the layout (see --json)")
	fs.Int64Var(&o.InitSeed, "init-seed", -1, "instead of --params, draw φ from the default hyper-prior with this seed")
	fs.Float64Var(&o.SigmaP, "sigma-p", 0.5, "hyper-prior standard deviation for --init-seed")
	f.hidden = flagvalue.Widths(lml.DefaultHidden)
	fs.Var(&f.hidden, "hidden", `hidden-layer widths of both networks ("none" for linear networks)`)
	fs.IntVar(&o.DF, "df", lml.DefaultDF, "output width of the kernel network")
	fs.BoolVar(&f.json, "json", false, `print {"lml", "grad", "layout", …} as JSON (sparse: also "gp_inference", `+
		`"inducing" and the M×D "inducing_inputs")`)
	fs.StringVar(&o.Inference.Mode, "gp-inference", fl.InferenceExact,
		fmt.Sprintf("exact: the LML by a dense Cholesky of the m×m kernel matrix (about m³ flop, 2·m² doubles); "+
			"sparse: the Titsias lower bound on it with --inducing M inputs chosen from the data's rows by k-means++ "+
			"seeding, as train chooses a client's (about 4·m·M² flop, O(M²) memory; docs/math.md); "+
			"auto: exact up to %d rows, sparse above. The default is exact, unlike train's auto: gp eval prints the "+
			"LML "+
			"unless told otherwise", fl.AutoExactMaxRows))
	fs.IntVar(&o.Inference.Inducing, "inducing", 0, fmt.Sprintf("inducing inputs M of the sparse bound (0: %d, or "+
		"the rows if fewer; more than the rows is an error)", fl.DefaultInducing))
	fs.Uint64Var(&o.Inference.Seed, "inducing-seed", 1, "seed of the inducing inputs' choice, with a hash of the "+
		"inputs (train --seed S chooses a client's Z as --inducing-seed S does on the same inputs)")
	return &f.json
}

func runGPEval(args []string, stdout, stderr io.Writer) int {
	var f gpEvalFlags
	return runEval("gp eval", args, stdout, stderr, f.add, func() (*clienteval.GPResult, error) {
		f.o.Hidden, f.o.MaxLine, f.o.Memory = f.hidden, maxCSVLine, memoryError
		return clienteval.EvalGP(f.o)
	})
}

// runEval parses the flags that add registers (it returns --json's) and
// prints eval's result, as text or with --json as one JSON line: gp eval
// and bnn eval.
func runEval[R interface{ WriteText(io.Writer) error }](cmd string, args []string, stdout, stderr io.Writer,
	add func(*flag.FlagSet) *bool, eval func() (R, error)) int {
	fs := newFlagSet(cmd, stderr)
	json := add(fs)
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	res, err := eval()
	if err == nil && *json {
		err = bench.JSONLine(stdout, res)
	} else if err == nil {
		err = res.WriteText(stdout)
	}
	if err != nil {
		return fail(stderr, cmd, libError(err))
	}
	return exitOK
}

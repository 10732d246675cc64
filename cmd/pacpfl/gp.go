package main

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strings"

	"gonum.org/v1/gonum/floats"

	"github.com/pacpfl/pacpfl/bench"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/lml"
	"github.com/pacpfl/pacpfl/svgd"
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

type gpEvalResult struct {
	// LML is the log marginal likelihood (exact) or the Titsias lower
	// bound F on it (sparse); Grad its gradient with respect to φ (Z
	// held fixed).
	LML       float64     `json:"lml"`
	M         int         `json:"m"`
	D         int         `json:"d"`
	NumParams int         `json:"num_params"`
	NoiseStd  float64     `json:"noise_std"`
	Jitter    float64     `json:"jitter"` // exact: added to K + σ²I; sparse: added to K_uu
	Grad      []float64   `json:"grad"`
	Layout    []lml.Block `json:"layout"`
	// GPInference is what was computed: "exact" or "sparse" (auto
	// resolved).
	GPInference string `json:"gp_inference"`
	// Sparse: M, the seed of their choice and the M inducing inputs (rows
	// of D numbers, in the CSV's units: gp eval does not standardise), so
	// that another tool can recompute the bound from φ, the data and Z.
	Inducing       int         `json:"inducing,omitempty"`
	InducingSeed   *uint64     `json:"inducing_seed,omitempty"`
	InducingInputs [][]float64 `json:"inducing_inputs,omitempty"`
}

func runGPEval(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("gp eval", stderr)
	data := fs.String("data", "", "data set, "+csvFormatHelp+": one sample per row, features then y in the last column; a header row is allowed")
	params := fs.String("params", "", "file with φ, one plain decimal number per line, in the order of the layout (see --json)")
	seed := fs.Int64("init-seed", -1, "instead of --params, draw φ from the default hyper-prior with this seed")
	sigmaP := fs.Float64("sigma-p", 0.5, "hyper-prior standard deviation for --init-seed")
	hidden := widthList(lml.DefaultHidden)
	fs.Var(&hidden, "hidden", `hidden-layer widths of both networks ("none" for linear networks)`)
	df := fs.Int("df", lml.DefaultDF, "output width of the kernel network")
	asJSON := fs.Bool("json", false, `print {"lml", "grad", "layout", …} as JSON (sparse: also "gp_inference", "inducing" and the M×D "inducing_inputs")`)
	mode := fs.String("gp-inference", fl.InferenceExact, fmt.Sprintf("exact: the LML by a dense Cholesky of the m×m kernel matrix (about m³ flop, 2·m² doubles); "+
		"sparse: the Titsias lower bound on it with --inducing M inputs chosen from the data's rows by k-means++ seeding, as train chooses a client's (about 4·m·M² flop, O(M²) memory; docs/math.md); "+
		"auto: exact up to %d rows, sparse above. The default is exact, unlike train's auto: gp eval prints the LML unless told otherwise", fl.AutoExactMaxRows))
	inducing := fs.Int("inducing", 0, fmt.Sprintf("inducing inputs M of the sparse bound (0: %d, or the rows if fewer; more than the rows is an error)", fl.DefaultInducing))
	zSeed := fs.Uint64("inducing-seed", 1, "seed of the inducing inputs' choice, with a hash of the inputs (train --seed S chooses a client's Z as --inducing-seed S does on the same inputs)")
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "pacpfl gp eval: "+format+"\n", a...)
		return exitUsage
	}
	switch {
	case *data == "":
		return usageErr("--data is required")
	case (*params == "") == (*seed < 0):
		return usageErr("give exactly one of --params FILE and --init-seed N (N ≥ 0)")
	case *df < 1:
		return usageErr("--df %d: want at least 1", *df)
	case !(*sigmaP > 0) || math.IsInf(*sigmaP, 0):
		return usageErr("--sigma-p %v: want a positive number", *sigmaP)
	case *mode != fl.InferenceExact && *mode != fl.InferenceSparse && *mode != fl.InferenceAuto:
		return usageErr("--gp-inference %q: want exact, sparse or auto", *mode)
	case *inducing < 0:
		return usageErr("--inducing %d: want at least 1 inducing input (0: the default %d)", *inducing, fl.DefaultInducing)
	}
	inf := fl.GPInference{Mode: *mode, Inducing: *inducing, Seed: *zSeed}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "pacpfl gp eval: %v\n", err)
		return exitError
	}

	X, y, d, err := readCSVData(*data)
	if err != nil {
		return fail(err)
	}
	model := lml.Model{D: d, DF: *df, MeanHidden: hidden, KernelHidden: hidden}
	// φ and its gradient, the m×m kernel matrix and its factor, counted in
	// float64 (an absurd --hidden overflows an int count): a lower bound that
	// turns a "fatal error: out of memory" crash into a message.
	weights := func(out float64) float64 {
		w, in := 0.0, float64(d)
		for _, h := range hidden {
			w += (in + 1) * float64(h)
			in = float64(h)
		}
		return w + (in+1)*out
	}
	sparse, M, err := inf.Plan(len(y))
	if err != nil {
		return usageErr("--inducing %d: the data have only %d rows", *inducing, len(y))
	}
	m := float64(len(y))
	need := 2 * m * m
	if sparse {
		// The M×M matrices and the row blocks' (M+1)² sums, besides the
		// data; the streamed chunks are smaller.
		need = 24 * float64(M+1) * float64(M+1)
	}
	if st, ok := checkMemory(stderr, "gp eval", fmt.Sprintf("--hidden %v --df %d on %d samples", hidden, *df, len(y)),
		8*(2*(weights(1)+weights(float64(*df)))+need)); !ok {
		return st
	}
	var phi []float64
	if *params != "" {
		if phi, err = readParams(*params, model.NumParams()); err != nil {
			return fail(err)
		}
	} else {
		prior, err := svgd.Isotropic(model.HyperPriorMean(), *sigmaP)
		if err != nil {
			return fail(err)
		}
		phi = make([]float64, model.NumParams())
		prior.Sample(phi, rand.New(rand.NewPCG(uint64(*seed), 0x9e3779b97f4a7c15)))
	}

	grad := make([]float64, model.NumParams())
	res := gpEvalResult{M: len(y), D: d, NumParams: model.NumParams(), NoiseStd: lml.NoiseStd(phi[model.NoiseIndex()]),
		Grad: grad, Layout: model.Layout(), GPInference: fl.InferenceExact}
	var v float64
	if sparse {
		// Z: M rows of X as read (gp eval does not standardise).
		Z, zerr := inf.InducingFor(X, d, M)
		if zerr != nil {
			return fail(zerr)
		}
		v, err = sparseEval(model, &res, X, y, Z, phi)
		res.GPInference, res.Inducing, res.InducingSeed = fl.InferenceSparse, M, zSeed
		res.InducingInputs = make([][]float64, M)
		for i := range res.InducingInputs {
			res.InducingInputs[i] = Z[i*d : (i+1)*d : (i+1)*d]
		}
	} else {
		var ws *lml.Workspace
		if ws, err = lml.NewWorkspace(model, nil); err != nil {
			return fail(err)
		}
		v, err = ws.LML(phi, X, y, grad)
		res.Jitter = ws.Jitter()
	}
	if err == nil {
		err = finiteResult(v, grad)
	}
	if err != nil {
		return fail(fmt.Errorf("%w; %s", err, scaleHint(X, y)))
	}
	res.LML = v
	if *asJSON {
		if err := bench.JSONLine(stdout, res); err != nil {
			return fail(err)
		}
		return exitOK
	}
	if sparse {
		fmt.Fprintf(stdout, "bound %.17g (sparse, M = %d: the Titsias lower bound on the LML; --json prints the inducing inputs)\n", v, M)
	} else {
		fmt.Fprintf(stdout, "lml %.17g\n", v)
	}
	fmt.Fprintf(stdout, "m %d  d %d  dφ %d  noise std %.6g  jitter %g  |grad| %.6g\n",
		res.M, res.D, res.NumParams, res.NoiseStd, res.Jitter, norm2(grad))
	return exitOK
}

// sparseEval evaluates the Titsias bound with inducing inputs Z and its
// gradient (into res.Grad), on every core (the result does not depend on
// their number).
func sparseEval(model lml.Model, res *gpEvalResult, X, y, Z, phi []float64) (float64, error) {
	ws, err := lml.NewSparseWorkspace(model, lml.SparseOptions{})
	if err != nil {
		return 0, err
	}
	defer ws.Close()
	v, err := ws.Bound(phi, X, y, Z, res.Grad)
	res.Jitter = ws.Jitter()
	return v, err
}

// norm2 is the Euclidean norm, scaled so that it does not overflow while
// the norm itself is finite (a gradient of 1e200s has a finite norm).
func norm2(x []float64) float64 { return floats.Norm(x, 2) }

// finiteResult refuses a non-finite LML or gradient: printed, it would be
// a NaN "result" with exit 0.
func finiteResult(lml float64, grad []float64) error {
	if math.IsNaN(lml) || math.IsInf(lml, 0) {
		return fmt.Errorf("the LML is %v", lml)
	}
	bad, first := 0, -1
	for i, g := range grad {
		if math.IsNaN(g) || math.IsInf(g, 0) {
			if bad++; first < 0 {
				first = i
			}
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d of the %d gradient components are not finite (the first, φ[%d], is %v)", bad, len(grad), first, grad[first])
	}
	return nil
}

// scaleHint says how large the data are and what to do about it: the usual
// cause of a non-finite LML is data far from order 1.
func scaleHint(X, y []float64) string {
	maxAbs := func(xs []float64) float64 {
		m := 0.0
		for _, v := range xs {
			m = math.Max(m, math.Abs(v))
		}
		return m
	}
	return fmt.Sprintf("the data reach |y| = %.3g and |x| = %.3g; the GP model expects values of order 1 "+
		"(and float64 squares overflow above about 1e154): standardise the features and the targets "+
		"(subtract the mean, divide by the standard deviation)", maxAbs(y), maxAbs(X))
}

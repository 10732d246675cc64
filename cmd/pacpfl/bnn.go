package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/pacpfl/pacpfl/bench"
	"github.com/pacpfl/pacpfl/clienteval"
	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/lml"
)

// `pacpfl bnn eval`: the LML estimate (38) of one BNN prior φ, drawn from
// the hyper-prior with a seed, on a CSV data set, with its gradient, φ and
// the standard-normal draws ε it used, so that both can be recomputed with
// another tool.
func init() {
	register(&command{
		name:    "bnn",
		summary: "BNN client model: 'pacpfl bnn eval' prints the LML estimate (38) of a prior on a CSV data set, its gradient, φ and ε",
		run:     runBNN,
	})
}

func bnnUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: pacpfl bnn eval --data FILE.csv [--arch mlp|bcnn] [--hidden H] [--classes C] [--image HxW] --init-seed S [--samples L] [--sigma-mu 3] [--sigma-omega 1] [--json]")
}

func runBNN(args []string, stdout, stderr io.Writer) int {
	return runEvalAction("bnn", bnnUsage, runBNNEval, args, stdout, stderr)
}

// bnnEvalFlags are the flags of bnn eval.
type bnnEvalFlags struct {
	path, arch, image        string
	hidden, classes, samples int
	seed                     int64
	sigmaMu, sigmaOmega      float64
	json                     bool
}

func (f *bnnEvalFlags) add(fs *flag.FlagSet) {
	fs.StringVar(&f.path, "data", "", "data set, "+csvFormatHelp+": one sample per row, the class label (0..C−1) first, then the features; a header row is allowed")
	fs.StringVar(&f.arch, "arch", lml.ArchMLP, "network: mlp or bcnn")
	fs.IntVar(&f.hidden, "hidden", 0, "hidden width (0: 100 for mlp, 512 for bcnn)")
	fs.IntVar(&f.classes, "classes", 10, "number of classes C")
	fs.StringVar(&f.image, "image", "", "bcnn: input image size HxW (default 28x28; the features are its pixels, row-major)")
	fs.Int64Var(&f.seed, "init-seed", -1, "draw φ from the hyper-prior with this seed (≥ 0), and ε from it")
	fs.IntVar(&f.samples, "samples", lml.DefaultBNNSamples, "weight samples L")
	d := fl.DefaultBNNOptions()
	fs.Float64Var(&f.sigmaMu, "sigma-mu", d.SigmaMu, "hyper-prior std of μ in units of √(2/fan-in)")
	fs.Float64Var(&f.sigmaOmega, "sigma-omega", d.SigmaOmega, "hyper-prior std of ω")
	fs.BoolVar(&f.json, "json", false, `print {"lml", "grad", "phi", "eps", "layout", …} as JSON`)
}

// model checks the flags and returns the network they describe, its input
// size still open for the mlp (the data's feature count).
func (f *bnnEvalFlags) model() (lml.BNN, error) {
	switch {
	case f.path == "":
		return lml.BNN{}, usagef("--data is required")
	case f.seed < 0:
		return lml.BNN{}, usagef("--init-seed N (N ≥ 0) is required")
	case f.samples < 1:
		return lml.BNN{}, usagef("--samples %d: want at least 1", f.samples)
	case f.classes < 2:
		return lml.BNN{}, usagef("--classes %d: want at least 2", f.classes)
	case f.hidden < 0:
		return lml.BNN{}, usagef("--hidden %d: want ≥ 0", f.hidden)
	case !(f.sigmaMu > 0) || math.IsInf(f.sigmaMu, 0) || !(f.sigmaOmega > 0) || math.IsInf(f.sigmaOmega, 0):
		return lml.BNN{}, usagef("--sigma-mu %v and --sigma-omega %v: want positive numbers", f.sigmaMu, f.sigmaOmega)
	case f.arch != lml.ArchMLP && f.arch != lml.ArchBCNN:
		return lml.BNN{}, usagef("unknown --arch %q (want mlp or bcnn)", f.arch)
	case f.image != "" && f.arch != lml.ArchBCNN:
		return lml.BNN{}, usagef("--image is for --arch bcnn (the mlp takes the features as they are)")
	}
	model := lml.BNN{Arch: f.arch, Hidden: f.hidden, Classes: f.classes}
	if f.arch != lml.ArchBCNN {
		return model, nil
	}
	model.InH, model.InW = 28, 28
	if f.image != "" {
		h, w, ok := parseImageSize(f.image)
		if !ok {
			return model, usagef("--image %q: want HxW with positive integers, e.g. 28x28", f.image)
		}
		model.InH, model.InW = h, w
	}
	if err := model.Validate(); err != nil {
		return model, usageError{err}
	}
	return model, nil
}

// fit sizes model's input to nf features per row of the data.
func (f *bnnEvalFlags) fit(model *lml.BNN, nf int) error {
	if model.Arch == lml.ArchMLP {
		model.InC, model.InH, model.InW = 1, 1, nf
	} else if nf != model.InH*model.InW {
		return fmt.Errorf("%s: %d features per row, the bcnn's %d×%d image needs %d (see --image)", f.path, nf, model.InH, model.InW, model.InH*model.InW)
	}
	if err := model.Validate(); err != nil {
		return usageError{err}
	}
	return nil
}

func runBNNEval(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("bnn eval", stderr)
	var f bnnEvalFlags
	f.add(fs)
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	model, err := f.model()
	if err != nil {
		return fail(stderr, "bnn eval", err)
	}
	X, y, nf, err := data.ReadLabelledCSV(f.path, maxCSVLine)
	if err == nil {
		err = f.fit(&model, nf)
	}
	if err == nil {
		if err = model.CheckData(X, y); err != nil {
			err = fmt.Errorf("%s: %w", f.path, err)
		}
	}
	if err != nil {
		return fail(stderr, "bnn eval", err)
	}
	c := clienteval.BNNConfig{Model: model, Samples: f.samples, SigmaMu: f.sigmaMu, SigmaOmega: f.sigmaOmega, Seed: uint64(f.seed)}
	if st, ok := checkMemory(stderr, "bnn eval", fmt.Sprintf("--arch %s --hidden %d --samples %d on %d samples", f.arch, f.hidden, f.samples, len(y)),
		c.MemoryBytes(len(y))); !ok {
		return st
	}
	res, err := clienteval.BNN(c, X, y)
	if err == nil && f.json {
		err = bench.JSONLine(stdout, res)
	} else if err == nil {
		err = res.WriteText(stdout)
	}
	if err != nil {
		return fail(stderr, "bnn eval", err)
	}
	return exitOK
}

func parseImageSize(s string) (h, w int, ok bool) {
	a, b, found := strings.Cut(strings.ToLower(s), "x")
	if !found {
		return 0, 0, false
	}
	h, err1 := strconv.Atoi(a)
	w, err2 := strconv.Atoi(b)
	return h, w, err1 == nil && err2 == nil && h > 0 && w > 0
}

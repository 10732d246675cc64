package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/pacpfl/pacpfl/clienteval"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/lml"
)

// `pacpfl bnn eval`: the LML estimate (38) of one BNN prior φ, drawn from
// the hyper-prior with a seed, on a CSV data set, with its gradient, φ and
// the standard-normal draws ε it used, so that both can be recomputed with
// another tool.
func init() {
	register(&command{
		name: "bnn",
		summary: "BNN client model: 'pacpfl bnn eval' prints the LML estimate (38) of a prior on a CSV data set, its " +
			"gradient, φ and ε",
		run: runBNN,
	})
}

func bnnUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: pacpfl bnn eval --data FILE.csv [--arch mlp|bcnn] [--hidden H] [--classes C] [--image "+
		"HxW] --init-seed S [--samples L] [--sigma-mu 3] [--sigma-omega 1] [--json]")
}

func runBNN(args []string, stdout, stderr io.Writer) int {
	return runEvalAction("bnn", bnnUsage, runBNNEval, args, stdout, stderr)
}

// bnnEvalFlags are the flags of bnn eval: the options and --json.
type bnnEvalFlags struct {
	o    clienteval.BNNFile
	json bool
}

func (f *bnnEvalFlags) add(fs *flag.FlagSet) *bool {
	o := &f.o
	fs.StringVar(&o.Data, "data", "", "data set, "+csvFormatHelp+": one sample per row, the class label (0..C−1) "+
		"first, then the features; a header row is allowed")
	fs.StringVar(&o.Arch, "arch", lml.ArchMLP, "network: mlp or bcnn")
	fs.IntVar(&o.Hidden, "hidden", 0, "hidden width (0: 100 for mlp, 512 for bcnn)")
	fs.IntVar(&o.Classes, "classes", 10, "number of classes C")
	fs.StringVar(&o.Image, "image", "",
		"bcnn: input image size HxW (default 28x28; the features are its pixels, row-major)")
	fs.Int64Var(&o.InitSeed, "init-seed", -1, "draw φ from the hyper-prior with this seed (≥ 0), and ε from it")
	fs.IntVar(&o.Samples, "samples", lml.DefaultBNNSamples, "weight samples L")
	d := fl.DefaultBNNOptions()
	fs.Float64Var(&o.SigmaMu, "sigma-mu", d.SigmaMu, "hyper-prior std of μ in units of √(2/fan-in)")
	fs.Float64Var(&o.SigmaOmega, "sigma-omega", d.SigmaOmega, "hyper-prior std of ω")
	fs.BoolVar(&f.json, "json", false, `print {"lml", "grad", "phi", "eps", "layout", …} as JSON`)
	return &f.json
}

func runBNNEval(args []string, stdout, stderr io.Writer) int {
	var f bnnEvalFlags
	return runEval("bnn eval", args, stdout, stderr, f.add, func() (*clienteval.BNNResult, error) {
		f.o.MaxLine, f.o.Memory = maxCSVLine, memoryError
		return clienteval.EvalBNN(f.o)
	})
}

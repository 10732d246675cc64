package main

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/pacpfl/pacpfl/bench"
	"github.com/pacpfl/pacpfl/conv"
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

// bnnEvalResult is the --json output of pacpfl bnn eval. The estimate is
//
//	lml = LSE_j(s_j) − ln L,  s_j = Σ_i ln softmax(h_{θ_j}(x_i))_{y_i},  θ_j = μ + e^{ω/2} ∘ ε_j,
//
// on all m rows (β = m), φ = (μ, ω) laid out as Layout says, ε[j] the draws
// of sample j in the order of θ (the μ blocks of Layout without the "mu."
// prefix), and grad = ∂lml/∂φ in the layout of φ.
type bnnEvalResult struct {
	LML        float64     `json:"lml"`
	M          int         `json:"m"`
	D          int         `json:"d"`
	Classes    int         `json:"classes"`
	Arch       string      `json:"arch"`
	Samples    int         `json:"samples"`
	NumWeights int         `json:"num_weights"`
	NumParams  int         `json:"num_params"`
	SigmaMu    float64     `json:"sigma_mu"`
	SigmaOmega float64     `json:"sigma_omega"`
	Phi        []float64   `json:"phi"`
	Eps        [][]float64 `json:"eps"`
	Grad       []float64   `json:"grad"`
	Layout     []lml.Block `json:"layout"`
	Formula    string      `json:"formula"`
}

func runBNNEval(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("bnn eval", stderr)
	path := fs.String("data", "", "data set, "+csvFormatHelp+": one sample per row, the class label (0..C−1) first, then the features; a header row is allowed")
	arch := fs.String("arch", lml.ArchMLP, "network: mlp or bcnn")
	hidden := fs.Int("hidden", 0, "hidden width (0: 100 for mlp, 512 for bcnn)")
	classes := fs.Int("classes", 10, "number of classes C")
	image := fs.String("image", "", "bcnn: input image size HxW (default 28x28; the features are its pixels, row-major)")
	seed := fs.Int64("init-seed", -1, "draw φ from the hyper-prior with this seed (≥ 0), and ε from it")
	samples := fs.Int("samples", lml.DefaultBNNSamples, "weight samples L")
	d := fl.DefaultBNNOptions()
	sigmaMu := fs.Float64("sigma-mu", d.SigmaMu, "hyper-prior std of μ in units of √(2/fan-in)")
	sigmaOmega := fs.Float64("sigma-omega", d.SigmaOmega, "hyper-prior std of ω")
	asJSON := fs.Bool("json", false, `print {"lml", "grad", "phi", "eps", "layout", …} as JSON`)
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "pacpfl bnn eval: "+format+"\n", a...)
		return exitUsage
	}
	switch {
	case *path == "":
		return usageErr("--data is required")
	case *seed < 0:
		return usageErr("--init-seed N (N ≥ 0) is required")
	case *samples < 1:
		return usageErr("--samples %d: want at least 1", *samples)
	case *classes < 2:
		return usageErr("--classes %d: want at least 2", *classes)
	case *hidden < 0:
		return usageErr("--hidden %d: want ≥ 0", *hidden)
	case !(*sigmaMu > 0) || math.IsInf(*sigmaMu, 0) || !(*sigmaOmega > 0) || math.IsInf(*sigmaOmega, 0):
		return usageErr("--sigma-mu %v and --sigma-omega %v: want positive numbers", *sigmaMu, *sigmaOmega)
	case *arch != lml.ArchMLP && *arch != lml.ArchBCNN:
		return usageErr("unknown --arch %q (want mlp or bcnn)", *arch)
	case *image != "" && *arch != lml.ArchBCNN:
		return usageErr("--image is for --arch bcnn (the mlp takes the features as they are)")
	}
	model := lml.BNN{Arch: *arch, Hidden: *hidden, Classes: *classes}
	if *arch == lml.ArchBCNN {
		model.InH, model.InW = 28, 28
		if *image != "" {
			h, w, ok := parseImageSize(*image)
			if !ok {
				return usageErr("--image %q: want HxW with positive integers, e.g. 28x28", *image)
			}
			model.InH, model.InW = h, w
		}
	}
	if model.Arch == lml.ArchBCNN {
		if err := model.Validate(); err != nil {
			return usageErr("%v", err)
		}
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "pacpfl bnn eval: %v\n", err)
		return exitError
	}
	X, y, nf, err := readLabelledCSV(*path)
	if err != nil {
		return fail(err)
	}
	if model.Arch == lml.ArchMLP {
		model.InC, model.InH, model.InW = 1, 1, nf
	} else if nf != model.InH*model.InW {
		return fail(fmt.Errorf("%s: %d features per row, the bcnn's %d×%d image needs %d (see --image)", *path, nf, model.InH, model.InW, model.InH*model.InW))
	}
	if err := model.Validate(); err != nil {
		return usageErr("%v", err)
	}
	if err := model.CheckData(X, y); err != nil {
		return fail(fmt.Errorf("%s: %w", *path, err))
	}
	// φ, its gradient, L×|θ| draws and the network of L samples (weights,
	// gradients and the activations of all m rows), counted in float64.
	nw := float64(model.NumWeights())
	m := float64(len(y))
	acts := m * float64(*samples) * float64(model.WithDefaults().Hidden+*classes) * 4
	if model.Arch == lml.ArchBCNN {
		acts = m * float64(*samples) * 10 * 24 * 24 * 4
	}
	if st, ok := checkMemory(stderr, "bnn eval", fmt.Sprintf("--arch %s --hidden %d --samples %d on %d samples", *arch, *hidden, *samples, len(y)),
		8*(4*nw+3*float64(*samples)*nw+acts)); !ok {
		return st
	}
	prior, err := fl.BNNHyperPrior(model, *sigmaMu, *sigmaOmega)
	if err != nil {
		return fail(err)
	}
	rng := rand.New(rand.NewPCG(uint64(*seed), 0x9e3779b97f4a7c15))
	phi := make([]float64, model.NumParams())
	prior.Sample(phi, rng)
	e, err := lml.NewBNNEstimator(model, *samples, conv.Options{Workers: 1})
	if err != nil {
		return fail(err)
	}
	grad := make([]float64, len(phi))
	v, err := e.LML(phi, X, y, 1, rng, grad)
	if err == nil {
		err = finiteResult(v, grad)
	}
	if err != nil {
		return fail(err)
	}
	if !*asJSON {
		fmt.Fprintf(stdout, "lml %.17g\n", v)
		fmt.Fprintf(stdout, "%s: m %d  d %d  L %d  |θ| %d  dφ %d  |grad| %.6g\n", model, len(y), nf, *samples, model.NumWeights(), model.NumParams(), norm2(grad))
		return exitOK
	}
	n := model.NumWeights()
	eps := make([][]float64, *samples)
	for j := range eps {
		eps[j] = e.Noise()[j*n : (j+1)*n]
	}
	res := bnnEvalResult{
		LML: v, M: len(y), D: nf, Classes: *classes, Arch: model.String(), Samples: *samples,
		NumWeights: n, NumParams: len(phi), SigmaMu: *sigmaMu, SigmaOmega: *sigmaOmega,
		Phi: phi, Eps: eps, Grad: grad, Layout: model.PhiLayout(),
		Formula: "lml = LSE_j(s_j) − ln L, s_j = Σ_i ln softmax(h_{θ_j}(x_i))_{y_i}, θ_j = μ + exp(ω/2)·eps[j]; μ = phi[:num_weights], ω = phi[num_weights:]",
	}
	if err := bench.JSONLine(stdout, res); err != nil {
		return fail(err)
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

// readLabelledCSV reads a classification CSV: the class label first, then
// the features, every row with the same number (≥ 2) of fields. It is
// readCSVData with the first column as the target.
func readLabelledCSV(path string) (X, y []float64, d int, err error) {
	Xr, last, d, err := readCSVData(path)
	if err != nil {
		return nil, nil, 0, err
	}
	// readCSVData put the last column in y: rotate every row back so that
	// the first column is the label.
	m := len(last)
	X = make([]float64, 0, m*d)
	y = make([]float64, m)
	for r := range m {
		row := append(append([]float64(nil), Xr[r*d:(r+1)*d]...), last[r])
		y[r] = row[0]
		X = append(X, row[1:]...)
	}
	return X, y, d, nil
}

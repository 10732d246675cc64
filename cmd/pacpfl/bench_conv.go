package main

import (
	"fmt"
	"io"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"

	"github.com/pacpfl/pacpfl/bench"
	"github.com/pacpfl/pacpfl/conv"
	"github.com/pacpfl/pacpfl/linalg"
)

// `pacpfl bench conv`: the paper's Bayesian CNN (1×28×28 input, conv 5×5
// 1→10, ReLU, maxpool 2, conv 5×5 10→62, ReLU, maxpool 2, dense 992→512,
// ReLU, dense 512→10, softmax cross-entropy) in float64. Four figures, run
// alternately, each the minimum of R runs after a warm-up: the whole network
// forward+backward; conv2 alone forward+backward; and the Bayesian estimator
// step (L weight samples w = μ + softplus(ρ)·ε, forward+backward, gradients
// to μ and ρ) stacked in one network and as L separate passes.
func init() {
	registerBench(&benchKernel{
		name:    "conv",
		summary: "Bayesian CNN forward+backward: whole net, conv2, L-sample step stacked vs separate (ms)",
		run:     runBenchConv,
	})
}

type convResult struct {
	Kernel  string  `json:"kernel"`
	Batch   int     `json:"batch"`
	MS      float64 `json:"ms,omitempty"`
	GFLOPS  float64 `json:"gflops,omitempty"`
	Backend string  `json:"backend"`
	Error   string  `json:"error,omitempty"`
}

func runBenchConv(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("bench conv", stderr)
	asJSON := fs.Bool("json", false, "one JSON object per line instead of a table")
	reps := fs.Int("reps", 5, "repetitions per figure (the minimum is reported), after one warm-up")
	batch := fs.Int("batch", 64, "images per batch")
	samples := fs.Int("samples", 5, "weight samples L of the Bayesian step")
	backend := fs.String("backend", linalg.DefaultBackend, "BLAS backend for the products")
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	if *reps < 1 || *batch < 1 || *samples < 1 {
		fmt.Fprintf(stderr, "pacpfl bench conv: --reps %d, --batch %d, --samples %d: each must be at least 1\n", *reps, *batch, *samples)
		return exitUsage
	}
	// Per image: the 1×28×28 input and, per weight sample, at least conv1's
	// 10×24×24 output; a lower bound.
	if st, ok := checkMemory(stderr, "bench conv", fmt.Sprintf("--batch %d --samples %d", *batch, *samples),
		8*float64(*batch)*(28*28+10*24*24*float64(*samples))); !ok {
		return st
	}
	opt, err := convOptions(*backend)
	if err != nil {
		fmt.Fprintf(stderr, "pacpfl bench conv: %v\n", err)
		return exitUsage
	}
	cs, flops, err := convContenders(*batch, *samples, opt)
	if err != nil {
		fmt.Fprintf(stderr, "pacpfl bench conv: %v\n", err)
		return exitError
	}
	best, errs := bench.Alternate(*reps, cs)
	peak := machinePeak()
	if !*asJSON {
		fmt.Fprintln(stdout, peak.String())
		fmt.Fprintf(stdout, "%-26s %6s %10s %9s %8s\n", "kernel", "batch", "ms", "GFLOP/s", "% peak")
	}
	status := exitOK
	for i, c := range cs {
		r := convResult{Kernel: c.Name, Batch: *batch, Backend: *backend}
		if errs[i] != nil {
			r.Error, status = errs[i].Error(), exitError
		} else {
			r.MS = best[i] * 1e3
			r.GFLOPS = flops[i] / best[i] / 1e9
		}
		if *asJSON {
			bench.JSONLine(stdout, r)
			continue
		}
		if r.Error != "" {
			fmt.Fprintf(stdout, "%-26s %6d error: %s\n", r.Kernel, r.Batch, r.Error)
			continue
		}
		pct := 0.0
		if p := peak.GFLOPS(); p > 0 {
			pct = 100 * r.GFLOPS / p
		}
		fmt.Fprintf(stdout, "%-26s %6d %10.2f %9.2f %7.1f%%\n", r.Kernel, r.Batch, r.MS, r.GFLOPS, pct)
	}
	if !*asJSON && errs[2] == nil && errs[3] == nil {
		fmt.Fprintf(stdout, "stacked / separate: %.2f\n", best[2]/best[3])
	}
	return status
}

// convOptions gives the layers the named backend, and each batch-parallel
// worker a single-threaded instance of it where the backend has one.
func convOptions(name string) (conv.Options, error) {
	b, err := linalg.Backend(name)
	if err != nil {
		return conv.Options{}, err
	}
	opt := conv.Options{BLAS: b, WorkerBLAS: func() blas.Float64 { return b }}
	if _, ok := b.(*linalg.Native); ok {
		opt.WorkerBLAS = func() blas.Float64 { return linalg.NewNative(1) }
	}
	return opt, nil
}

// convContenders builds the four measured jobs and their GEMM work in FLOP.
func convContenders(batch, samples int, opt conv.Options) ([]bench.Contender, []float64, error) {
	rng := rand.New(rand.NewPCG(1, 2))
	net, err := conv.NewBCNN(conv.BCNNConfig{Options: opt})
	if err != nil {
		return nil, nil, err
	}
	for _, p := range net.Params() {
		for i := range p.Value {
			p.Value[i] = 0.05 * rng.NormFloat64()
		}
	}
	x := conv.NewTensor(batch, 1, 28, 28)
	for i := range x.Data {
		x.Data[i] = rng.Float64()
	}
	labels := make([]int, batch)
	for i := range labels {
		labels[i] = rng.IntN(10)
	}

	conv2 := net.Layers[3].(*conv.Conv2D)
	x2 := conv.NewTensor(batch, conv2.Cin, conv2.H, conv2.W)
	dy2 := conv.NewTensor(batch, conv2.Cout, conv2.OH, conv2.OW)
	for i := range x2.Data {
		x2.Data[i] = rng.NormFloat64()
	}
	for i := range dy2.Data {
		dy2.Data[i] = rng.NormFloat64()
	}

	stacked, err := newBenchBayes(samples, true, opt)
	if err != nil {
		return nil, nil, err
	}
	separate, err := newBenchBayes(samples, false, opt)
	if err != nil {
		return nil, nil, err
	}
	rngS, rngP := rand.New(rand.NewPCG(5, 6)), rand.New(rand.NewPCG(5, 6))
	cs := []bench.Contender{
		{Name: "bcnn_fwd_bwd", Run: func() error {
			if _, err := net.Forward(x, labels); err != nil {
				return err
			}
			return net.Backward()
		}},
		{Name: "conv2_fwd_bwd", Run: func() error {
			if _, err := conv2.Forward(x2); err != nil {
				return err
			}
			_, err := conv2.Backward(dy2)
			return err
		}},
		{Name: fmt.Sprintf("bcnn_bayes_L%d_stacked", samples), Run: func() error {
			_, err := stacked.Step(x, labels, rngS)
			return err
		}},
		{Name: fmt.Sprintf("bcnn_bayes_L%d_separate", samples), Run: func() error {
			_, err := separate.Step(x, labels, rngP)
			return err
		}},
	}
	// One pass of each fixes the shapes the work is counted on.
	for _, c := range cs {
		if err := c.Run(); err != nil {
			return nil, nil, err
		}
	}
	netFlops := net.GEMMFlops()
	flops := []float64{netFlops, conv2.GEMMFlops(), stacked.Net.GEMMFlops(), float64(samples) * separate.Net.GEMMFlops()}
	return cs, flops, nil
}

func newBenchBayes(samples int, stacked bool, opt conv.Options) (*conv.Bayes, error) {
	b, err := conv.NewBayes(conv.BCNNConfig{Options: opt}, samples, stacked)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for j := range b.Mu {
		for i := range b.Mu[j] {
			b.Mu[j][i] = 0.05 * rng.NormFloat64()
			b.Rho[j][i] = -5 // σ ≈ 0.0067
		}
	}
	return b, nil
}

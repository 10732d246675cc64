package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"

	"github.com/pacpfl/pacpfl/bench"
	"github.com/pacpfl/pacpfl/conv"
	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/lml"
)

// `pacpfl bench bnn`: one BNN client update (Algorithm 2: the LML estimate
// (38) and its gradient for k prior particles, L weight samples stacked, a
// mini-batch of b images) and its parts, alternated in one process, each the
// minimum of R runs after a warm-up:
//
//   - client_update_k{k}: the whole update, as the federated loop calls it;
//   - lml38_one_particle: one particle's estimate and gradient;
//   - net_fwd_bwd_L{L}: the stacked network's forward and backward pass
//     alone (the GEMMs; the rest of one particle is the elementwise work:
//     noise, θ_j, the gradient sums);
//   - bcnn_bayes_L{L}_stacked: conv's Bayesian step (pacpfl bench conv), the
//     reference kernel, for the BCNN.
//
// Every figure uses all GOMAXPROCS cores, as bench conv does.
func init() {
	registerBench(&benchKernel{
		name:    "bnn",
		summary: "BNN client update (LML (38) + gradient of k particles) and its parts vs conv's Bayesian step (ms)",
		run:     runBenchBNN,
	})
}

type bnnBenchResult struct {
	Kernel  string  `json:"kernel"`
	Arch    string  `json:"arch"`
	Batch   int     `json:"batch"`
	K       int     `json:"k"`
	Samples int     `json:"samples"`
	Threads int     `json:"threads"`
	MS      float64 `json:"ms,omitempty"`
	Error   string  `json:"error,omitempty"`
}

func runBenchBNN(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("bench bnn", stderr)
	asJSON := fs.Bool("json", false, "one JSON object per line instead of a table")
	reps := fs.Int("reps", 5, "repetitions per figure (the minimum is reported), after one warm-up")
	arch := fs.String("arch", lml.ArchBCNN, "network: bcnn or mlp")
	k := fs.Int("k", 3, "prior particles k")
	samples := fs.Int("samples", lml.DefaultBNNSamples, "weight samples L")
	batch := fs.Int("batch", 64, "images per mini-batch b")
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	if *reps < 1 || *k < 1 || *samples < 1 || *batch < 1 {
		fmt.Fprintf(stderr, "pacpfl bench bnn: --reps %d, --k %d, --samples %d, --batch %d: each must be at least 1\n", *reps, *k, *samples, *batch)
		return exitUsage
	}
	if *arch != lml.ArchBCNN && *arch != lml.ArchMLP {
		fmt.Fprintf(stderr, "pacpfl bench bnn: unknown --arch %q (want bcnn or mlp)\n", *arch)
		return exitUsage
	}
	model := lml.BNN{Arch: *arch}.WithDefaults()
	nw := float64(model.NumWeights())
	// φ and gradients of k particles, L samples of weights, gradients and
	// noise, and per image and sample at least conv1's output: lower bounds.
	if st, ok := checkMemory(stderr, "bench bnn", fmt.Sprintf("--k %d --samples %d --batch %d", *k, *samples, *batch),
		8*(4*float64(*k)*nw+3*float64(*samples)*nw+float64(*batch)*float64(*samples)*10*24*24)); !ok {
		return st
	}
	cs, err := bnnContenders(model, *k, *samples, *batch)
	if err != nil {
		fmt.Fprintf(stderr, "pacpfl bench bnn: %v\n", err)
		return exitError
	}
	best, errs := bench.Alternate(*reps, cs)
	threads := runtime.GOMAXPROCS(0)
	if !*asJSON {
		fmt.Fprintln(stdout, machinePeak().String())
		fmt.Fprintf(stdout, "%s, k=%d, L=%d, batch %d, %d threads\n", model, *k, *samples, *batch, threads)
		fmt.Fprintf(stdout, "%-26s %10s\n", "kernel", "ms")
	}
	status := exitOK
	for i, c := range cs {
		r := bnnBenchResult{Kernel: c.Name, Arch: model.Arch, Batch: *batch, K: *k, Samples: *samples, Threads: threads}
		if errs[i] != nil {
			r.Error, status = errs[i].Error(), exitError
		} else {
			r.MS = best[i] * 1e3
		}
		if *asJSON {
			bench.JSONLine(stdout, r)
			continue
		}
		if r.Error != "" {
			fmt.Fprintf(stdout, "%-26s error: %s\n", r.Kernel, r.Error)
			continue
		}
		fmt.Fprintf(stdout, "%-26s %10.2f\n", r.Kernel, r.MS)
	}
	if *asJSON || status != exitOK {
		return status
	}
	fmt.Fprintf(stdout, "elementwise share of one particle: %.0f%%\n", 100*(1-best[2]/best[1]))
	if len(cs) == 4 {
		fmt.Fprintf(stdout, "client update / (k × %s): %.2f\n", cs[3].Name, best[0]/(float64(*k)*best[3]))
	}
	return status
}

// bnnContenders builds the measured jobs on random images and labels.
func bnnContenders(model lml.BNN, k, samples, batch int) ([]bench.Contender, error) {
	rng := rand.New(rand.NewPCG(1, 2))
	d := model.D()
	c := &data.ClientData{X: make([]float64, batch*d), Y: make([]float64, batch)}
	for i := range c.X {
		c.X[i] = rng.Float64()
	}
	for i := range c.Y {
		c.Y[i] = float64(rng.IntN(model.Classes))
	}
	bm := fl.NewBNNModel(model)
	bm.Samples, bm.Threads = samples, runtime.GOMAXPROCS(0)
	client, err := bm.NewClient(c)
	if err != nil {
		return nil, err
	}
	prior, err := fl.BNNHyperPrior(model, 1, 1)
	if err != nil {
		return nil, err
	}
	dphi := model.NumParams()
	phis := make([]float64, k*dphi)
	for r := range k {
		prior.Sample(phis[r*dphi:(r+1)*dphi], rng)
	}
	grad := make([]float64, k*dphi)
	est, err := lml.NewBNNEstimator(model, samples, conv.Options{})
	if err != nil {
		return nil, err
	}
	net, err := model.Build(samples, conv.Options{})
	if err != nil {
		return nil, err
	}
	for _, p := range net.Params() {
		for i := range p.Value {
			p.Value[i] = 0.05 * rng.NormFloat64()
		}
	}
	x := &conv.Tensor{N: batch, C: model.InC, H: model.InH, W: model.InW, Data: c.X}
	labels := make([]int, batch)
	for i, v := range c.Y {
		labels[i] = int(v)
	}
	rngU, rngE := rand.New(rand.NewPCG(3, 4)), rand.New(rand.NewPCG(5, 6))
	cs := []bench.Contender{
		{Name: fmt.Sprintf("client_update_k%d", k), Run: func() error {
			_, err := client.Update(phis, k, dphi, batch, rngU, grad)
			return err
		}},
		{Name: "lml38_one_particle", Run: func() error {
			_, err := est.LML(phis[:dphi], c.X, c.Y, 4, rngE, grad[:dphi])
			return err
		}},
		{Name: fmt.Sprintf("net_fwd_bwd_L%d", samples), Run: func() error {
			if _, err := net.Forward(x, labels); err != nil {
				return err
			}
			return net.Backward()
		}},
	}
	if model.Arch == lml.ArchBCNN {
		bay, err := conv.NewBayes(conv.BCNNConfig{InChannels: model.InC, InH: model.InH, InW: model.InW, Conv1: model.Conv1, Conv2: model.Conv2,
			Kernel: model.Kernel, Hidden: model.Hidden, Classes: model.Classes}, samples, true)
		if err != nil {
			return nil, err
		}
		for j := range bay.Mu {
			for i := range bay.Mu[j] {
				bay.Mu[j][i] = 0.05 * rng.NormFloat64()
				bay.Rho[j][i] = -5
			}
		}
		rngB := rand.New(rand.NewPCG(7, 8))
		cs = append(cs, bench.Contender{Name: fmt.Sprintf("bcnn_bayes_L%d_stacked", samples), Run: func() error {
			_, err := bay.Step(x, labels, rngB)
			return err
		}})
	}
	return cs, nil
}

package suite

import (
	"context"
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

// BNNConfig configures BNN. Zero fields take the defaults given.
type BNNConfig struct {
	// Arch is the network, lml.ArchBCNN (the default) or lml.ArchMLP.
	Arch string
	// K is the prior particles k (3).
	K int
	// Samples is the weight samples L (lml.DefaultBNNSamples).
	Samples int
	// Batch is the images per mini-batch b (DefaultConvBatch).
	Batch int
	// Reps is the repetitions per figure after one warm-up (DefaultReps).
	Reps int
}

// DefaultBNNK is BNNConfig's default number of particles.
const DefaultBNNK = 3

func (c BNNConfig) withDefaults() BNNConfig {
	if c.Arch == "" {
		c.Arch = lml.ArchBCNN
	}
	c.K = orDefault(c.K, DefaultBNNK)
	c.Samples = orDefault(c.Samples, lml.DefaultBNNSamples)
	c.Batch = orDefault(c.Batch, DefaultConvBatch)
	c.Reps = orDefault(c.Reps, DefaultReps)
	return c
}

func (c BNNConfig) validate() error {
	if c.Arch != lml.ArchBCNN && c.Arch != lml.ArchMLP {
		return invalidf("unknown architecture %q (want bcnn or mlp)", c.Arch)
	}
	for _, v := range []struct {
		name string
		v    int
	}{{"k", c.K}, {"samples", c.Samples}, {"batch", c.Batch}, {"reps", c.Reps}} {
		if err := checkPositive(v.name, v.v); err != nil {
			return err
		}
	}
	return nil
}

// MemoryBytes is a lower bound of BNN's memory: φ and gradients of k
// particles, L samples of weights, gradients and noise, and per image and
// sample conv1's output (0 for an unknown Arch, which BNN refuses).
func (c BNNConfig) MemoryBytes() float64 {
	c = c.withDefaults()
	if c.validate() != nil {
		return 0
	}
	nw := float64(lml.BNN{Arch: c.Arch}.WithDefaults().NumWeights())
	k, l, b := float64(c.K), float64(c.Samples), float64(c.Batch)
	return 8 * (4*k*nw + 3*l*nw + b*l*10*24*24)
}

// BNNRow is one job's figure in BNN; its JSON form is a line of
// `bench bnn --json`.
type BNNRow struct {
	Kernel  string  `json:"kernel"`
	Arch    string  `json:"arch"`
	Batch   int     `json:"batch"`
	K       int     `json:"k"`
	Samples int     `json:"samples"`
	Threads int     `json:"threads"`
	MS      float64 `json:"ms,omitempty"`
	Error   string  `json:"error,omitempty"`
}

// WriteText writes r as a line of BNN's table.
func (r BNNRow) WriteText(w io.Writer) {
	if r.Error != "" {
		fmt.Fprintf(w, "%-26s error: %s\n", r.Kernel, r.Error)
		return
	}
	fmt.Fprintf(w, "%-26s %10.2f\n", r.Kernel, r.MS)
}

// BNN times one BNN client update (Algorithm 2: the LML estimate (38) and
// its gradient for k prior particles, L weight samples stacked, a
// mini-batch of b random images) and its parts, alternated, one row each:
//
//   - client_update_k{k}: the whole update, as the federated loop calls it;
//   - lml38_one_particle: one particle's estimate and gradient;
//   - net_fwd_bwd_L{L}: the stacked network's forward and backward pass
//     alone (the GEMMs; the rest of one particle is the elementwise work);
//   - bcnn_bayes_L{L}_stacked (BCNN only): Conv's Bayesian step, the
//     reference kernel.
//
// Every job uses all GOMAXPROCS cores. The table ends with the elementwise
// share of one particle and the update's time over k reference steps. A job
// that fails is reported in its row, and BNN returns ErrRowFailed.
func BNN(ctx context.Context, cfg BNNConfig, out Output) ([]BNNRow, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	model := lml.BNN{Arch: cfg.Arch}.WithDefaults()
	cs, err := bnnContenders(model, cfg.K, cfg.Samples, cfg.Batch)
	if err != nil {
		return nil, err
	}
	best, errs := bench.Alternate(cfg.Reps, cs)
	threads := runtime.GOMAXPROCS(0)
	peak, err := bench.MachinePeak()
	if err != nil {
		return nil, err
	}
	out.println(peak.String())
	out.printf("%s, k=%d, L=%d, batch %d, %d threads\n", model, cfg.K, cfg.Samples, cfg.Batch, threads)
	out.printf("%-26s %10s\n", "kernel", "ms")
	rows := make([]BNNRow, len(cs))
	failed := false
	for i, c := range cs {
		r := BNNRow{Kernel: c.Name, Arch: model.Arch, Batch: cfg.Batch, K: cfg.K, Samples: cfg.Samples,
			Threads: threads}
		if errs[i] != nil {
			r.Error, failed = errs[i].Error(), true
		} else {
			r.MS = best[i] * 1e3
		}
		out.row(r, r.WriteText)
		rows[i] = r
	}
	if failed {
		return rows, ErrRowFailed
	}
	out.printf("elementwise share of one particle: %.0f%%\n", 100*(1-best[2]/best[1]))
	if len(cs) == 4 {
		out.printf("client update / (k × %s): %.2f\n", cs[3].Name, best[0]/(float64(cfg.K)*best[3]))
	}
	return rows, nil
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
		bay, err := newBenchBayes(
			conv.BCNNConfig{InChannels: model.InC, InH: model.InH, InW: model.InW, Conv1: model.Conv1,
				Conv2: model.Conv2, Kernel: model.Kernel, Hidden: model.Hidden, Classes: model.Classes}, samples, true,
			rng)
		if err != nil {
			return nil, err
		}
		rngB := rand.New(rand.NewPCG(7, 8))
		cs = append(cs, bench.Contender{Name: fmt.Sprintf("bcnn_bayes_L%d_stacked", samples), Run: func() error {
			_, err := bay.Step(x, labels, rngB)
			return err
		}})
	}
	return cs, nil
}

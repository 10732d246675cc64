package suite

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"

	"github.com/pacpfl/pacpfl/bench"
	"github.com/pacpfl/pacpfl/conv"
	"github.com/pacpfl/pacpfl/linalg"
)

// ConvConfig configures Conv. Zero fields take the defaults given.
type ConvConfig struct {
	// Batch is the images per batch (64).
	Batch int
	// Samples is the weight samples L of the Bayesian step (5).
	Samples int
	// Backend is the BLAS backend of the products (linalg.DefaultBackend).
	Backend string
	// Reps is the repetitions per figure after one warm-up (DefaultReps).
	Reps int
}

// Defaults of ConvConfig and BNNConfig.
const (
	DefaultConvBatch   = 64
	DefaultConvSamples = 5
)

func (c ConvConfig) withDefaults() ConvConfig {
	c.Batch = orDefault(c.Batch, DefaultConvBatch)
	c.Samples = orDefault(c.Samples, DefaultConvSamples)
	if c.Backend == "" {
		c.Backend = linalg.DefaultBackend
	}
	c.Reps = orDefault(c.Reps, DefaultReps)
	return c
}

// MemoryBytes is a lower bound of Conv's memory: per image the 1×28×28
// input and, per weight sample, conv1's 10×24×24 output.
func (c ConvConfig) MemoryBytes() float64 {
	c = c.withDefaults()
	return 8 * float64(c.Batch) * (28*28 + 10*24*24*float64(c.Samples))
}

// ConvRow is one job's figure in Conv; its JSON form is a line of
// `bench conv --json`.
type ConvRow struct {
	Kernel  string  `json:"kernel"`
	Batch   int     `json:"batch"`
	MS      float64 `json:"ms,omitempty"`
	GFLOPS  float64 `json:"gflops,omitempty"`
	Backend string  `json:"backend"`
	Error   string  `json:"error,omitempty"`
	// Flops is the GEMM work of one run.
	Flops float64 `json:"-"`
	Rate
}

// WriteText writes r as a line of Conv's table.
func (r ConvRow) WriteText(w io.Writer) {
	if r.Error != "" {
		fmt.Fprintf(w, "%-26s %6d error: %s\n", r.Kernel, r.Batch, r.Error)
		return
	}
	fmt.Fprintf(w, "%-26s %6d %10.2f %9.2f %7.1f%%\n", r.Kernel, r.Batch, r.MS, r.GFLOPS, r.PercentPeak)
}

// Conv times the paper's Bayesian CNN (1×28×28 input, conv 5×5 1→10, ReLU,
// maxpool 2, conv 5×5 10→62, ReLU, maxpool 2, dense 992→512, ReLU, dense
// 512→10, softmax cross-entropy) in float64 on random data. Four jobs run
// alternately, one row each: the whole network forward+backward
// (bcnn_fwd_bwd), conv2 alone (conv2_fwd_bwd), and the Bayesian estimator
// step (L weight samples w = μ + softplus(ρ)·ε, forward+backward, gradients
// to μ and ρ) stacked in one network and as L separate passes. GFLOP/s
// counts the GEMM work. A job that fails is reported in its row, and Conv
// returns ErrRowFailed.
func Conv(ctx context.Context, cfg ConvConfig, out Output) ([]ConvRow, error) {
	cfg = cfg.withDefaults()
	if err := checkPositive("batch", cfg.Batch); err != nil {
		return nil, err
	}
	if err := checkPositive("samples", cfg.Samples); err != nil {
		return nil, err
	}
	if err := checkPositive("reps", cfg.Reps); err != nil {
		return nil, err
	}
	opt, err := convOptions(cfg.Backend)
	if err != nil {
		return nil, invalidError{err.Error()}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cs, flops, err := convContenders(cfg.Batch, cfg.Samples, opt)
	if err != nil {
		return nil, err
	}
	best, errs := bench.Alternate(cfg.Reps, cs)
	peak, err := bench.MachinePeak()
	if err != nil {
		return nil, err
	}
	printPeak(out, peak)
	out.printf("%-26s %6s %10s %9s %8s\n", "kernel", "batch", "ms", "GFLOP/s", "% peak")
	rows := make([]ConvRow, len(cs))
	for i, c := range cs {
		r := ConvRow{Kernel: c.Name, Batch: cfg.Batch, Backend: cfg.Backend, Flops: flops[i]}
		if errs[i] != nil {
			r.Error = errs[i].Error()
		} else {
			r.MS = best[i] * 1e3
			r.GFLOPS = flops[i] / best[i] / 1e9
			r.Rate = rate(r.GFLOPS, peak)
		}
		out.row(r, r.WriteText)
		rows[i] = r
	}
	if errs[2] == nil && errs[3] == nil {
		out.printf("stacked / separate: %.2f\n", best[2]/best[3])
	}
	return rows, rowsErr(rows, func(r ConvRow) bool { return r.Error != "" })
}

// convOptions gives conv's layers the named BLAS backend, and each
// batch-parallel worker a single-threaded instance of it where the backend
// has one.
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

	stacked, err := newBenchBayes(conv.BCNNConfig{Options: opt}, samples, true, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		return nil, nil, err
	}
	separate, err := newBenchBayes(conv.BCNNConfig{Options: opt}, samples, false, rand.New(rand.NewPCG(3, 4)))
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
	flops := []float64{netFlops, conv2.GEMMFlops(), stacked.Net.GEMMFlops(),
		float64(samples) * separate.Net.GEMMFlops()}
	return cs, flops, nil
}

// newBenchBayes is a Bayesian estimator of L samples with random means and
// ρ = −5 (σ ≈ 0.0067).
func newBenchBayes(cfg conv.BCNNConfig, samples int, stacked bool, rng *rand.Rand) (*conv.Bayes, error) {
	b, err := conv.NewBayes(cfg, samples, stacked)
	if err != nil {
		return nil, err
	}
	for j := range b.Mu {
		for i := range b.Mu[j] {
			b.Mu[j][i] = 0.05 * rng.NormFloat64()
			b.Rho[j][i] = -5
		}
	}
	return b, nil
}

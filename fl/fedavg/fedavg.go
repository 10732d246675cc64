// Package fedavg is FedAvg (McMahan et al. 2017) and FedProx (Li et al.
// 2020), the frequentist baselines of the pFedBayes paper's Table 1, on the
// same network as pFedBayes (lml.BNN's MLP 784-100-10 through package
// flatnet):
//
//	Server: w⁰ ← PyTorch's default initialisation (±1/√fan-in)
//	for t = 0..T−1:
//	    Sᵗ ← S clients drawn uniformly                        # fedrun
//	    for i ∈ Sᵗ in parallel: w_i ← ClientUpdate(i, wᵗ)
//	    wᵗ⁺¹ ← Σ_{i∈Sᵗ} n_i w_i / Σ_{i∈Sᵗ} n_i
//	ClientUpdate(i, wᵗ):  w ← wᵗ
//	    for r = 0..R−1:
//	        D_Λ ← b rows of D_i
//	        w ← w − η (∇ CE_Λ(w) + μ (w − wᵗ))              # μ = 0: FedAvg
//	    return w
//
// CE_Λ is the mean cross-entropy of the minibatch; μ (w − wᵗ) is the
// gradient of FedProx's proximal term μ/2 ‖w − wᵗ‖². FedAvg+FT: after the
// last round every client (existing and new) runs FineTune more steps of
// the same SGD (μ = 0) from w^T on its own training data and keeps the
// result, a personalised model.
//
// Settings (DefaultOptions): η = 0.01 for both and FedProx's μ = 0.001
// (the pFedBayes paper's tuned values, its App. B); R = 20, b = 100, T =
// 800 and S = 10 as pFedBayes (SPEC §14 [O]); FedAvg+FT fine-tunes for R =
// 20 steps [O]. The global model (GM) is scored on every client's test set
// after each of the last EvalLast rounds (the paper's best over rounds
// 700–800) and at the end.
//
// Determinism: client i's stream in round t is fedrun's (seed, tag, t, i),
// its fine-tuning stream (seed, tag, group, i); a run depends on its seed
// only (tested across GOMAXPROCS 1 and 2). Errors: bad sizes or settings
// name the problem; diverged weights stop the run naming the step size.
package fedavg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/internal/fedrun"
	"github.com/pacpfl/pacpfl/fl/internal/flatnet"
	"github.com/pacpfl/pacpfl/lml"
)

// Names of the methods in a comparison.
const (
	MethodFedAvg   = "fedavg"
	MethodFedProx  = "fedprox"
	MethodFedAvgFT = "fedavg-ft"
)

// Stream tags of the random draws.
const (
	tagInit  = 0x66656401
	tagRound = 0x66656402
	tagFT    = 0x66656403
)

// Options are the settings of FedAvg (Mu = 0) and FedProx (Mu > 0).
type Options struct {
	Arch            lml.BNN // the network (zero: MLP 784-100-10)
	LR              float64 // η
	Mu              float64 // FedProx's proximal weight μ (0: FedAvg)
	Batch           int     // b
	LocalSteps      int     // R
	Rounds          int     // T
	ClientsPerRound int     // S (≥ N: all)
	EvalLast        int     // score the GM after each of the last EvalLast rounds (≥ 1)
	FineTune        int     // FedAvg+FT's steps (0: no fine-tuning)
	Seed            uint64
	// Progress, if set, is called after every round.
	Progress func(round, rounds int)
	// Stop, if set, is asked after every round (after Progress); an error
	// it returns ends the run with that error (a caller's cancellation:
	// ctx.Err).
	Stop func() error
}

// DefaultOptions is FedAvg with the pFedBayes paper's settings (package
// doc); FedProxOptions adds μ = 0.001.
func DefaultOptions() Options {
	return Options{Arch: lml.BNN{Arch: lml.ArchMLP}, LR: 0.01, Batch: 100, LocalSteps: 20, Rounds: 800, ClientsPerRound: 10,
		EvalLast: 101, FineTune: 20}
}

// FedProxOptions is FedProx with the paper's μ = 0.001 (no fine-tuning).
func FedProxOptions() Options {
	o := DefaultOptions()
	o.Mu, o.FineTune = 0.001, 0
	return o
}

// Validate checks the settings.
func (o *Options) Validate() error {
	switch {
	case !(o.LR > 0) || math.IsInf(o.LR, 0):
		return fmt.Errorf("fedavg: step η = %v must be positive and finite", o.LR)
	case !(o.Mu >= 0) || math.IsInf(o.Mu, 0):
		return fmt.Errorf("fedavg: FedProx's μ = %v must be ≥ 0 and finite", o.Mu)
	case o.Batch < 1 || o.LocalSteps < 1 || o.ClientsPerRound < 1 || o.EvalLast < 1:
		return fmt.Errorf("fedavg: b = %d, R = %d, S = %d and the evaluated rounds %d must be ≥ 1", o.Batch, o.LocalSteps, o.ClientsPerRound, o.EvalLast)
	case o.Rounds < 0 || o.FineTune < 0:
		return fmt.Errorf("fedavg: T = %d and the fine-tuning steps %d must be ≥ 0", o.Rounds, o.FineTune)
	}
	return o.Arch.Validate()
}

// RoundEval is the GM's mean accuracy (%) over the existing clients after
// a round.
type RoundEval struct {
	Round int
	GM    float64
}

// Result is a run's model and scores.
type Result struct {
	// GM is the last round's global model on the existing clients' test
	// sets, NewGM on the new clients' (nil without new clients).
	GM    fl.ClassGroupMetrics
	NewGM *fl.ClassGroupMetrics
	// BestGM is the best of History (the paper's best over rounds
	// 700–800).
	BestGM  RoundEval
	History []RoundEval
	// FT and NewFT are FedAvg+FT's fine-tuned models (nil without
	// fine-tuning or new clients).
	FT, NewFT *fl.ClassGroupMetrics
	Global    []float64
	// Seconds is training and the GM's evaluations, TrainSeconds the
	// rounds alone, FTSeconds the fine-tuning and its evaluation.
	Seconds, TrainSeconds, FTSeconds float64
}

// worker is one goroutine's network and buffers.
type worker struct {
	net  *flatnet.Net
	rows data.RowSampler
	grad []float64
}

func newWorker(a lml.BNN) (*worker, error) {
	net, err := flatnet.New(a)
	if err != nil {
		return nil, err
	}
	return &worker{net: net, grad: make([]float64, net.NumWeights())}, nil
}

// step is one SGD step on the batch (x, y) from w (updated in place) with
// the proximal term's centre start: w ← w − η (∇CE + μ (w − start)).
func (k *worker) step(w, start, x, y []float64, o *Options) error {
	loss, err := k.net.LossGrad(w, x, y, k.grad)
	if err != nil {
		return fmt.Errorf("fedavg: %w: the weights diverged (step η = %g)", err, o.LR)
	}
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return fmt.Errorf("fedavg: the loss is %v: the weights diverged (step η = %g)", loss, o.LR)
	}
	eta, mu := o.LR, o.Mu
	if mu == 0 {
		for j, g := range k.grad {
			w[j] -= eta * g
		}
		return nil
	}
	for j, g := range k.grad {
		w[j] -= eta * (g + mu*(w[j]-start[j]))
	}
	return nil
}

// clientUpdate is ClientUpdate(i, wᵗ) with steps steps: out ← wᵗ, then
// SGD on the client's data.
func (k *worker) clientUpdate(c *data.ClientData, global, out []float64, steps int, o *Options, rng *rand.Rand) error {
	copy(out, global)
	d := k.net.D()
	for r := 0; r < steps; r++ {
		x, y, err := k.rows.Sample(c.X, c.Y, d, o.Batch, rng)
		if err != nil {
			return err
		}
		if err := k.step(out, global, x, y, o); err != nil {
			return err
		}
	}
	return nil
}

// Run trains FedAvg or FedProx on ds's existing clients and scores the
// global model, then FedAvg+FT if o.FineTune > 0.
func Run(ds *data.Dataset, o Options) (*Result, error) {
	start := time.Now()
	o.Arch = o.Arch.WithDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	weights, err := flatnet.CheckData(ds, o.Arch)
	if err != nil {
		return nil, fmt.Errorf("fedavg: %w", err)
	}
	N := len(weights)
	pool := fedrun.NewPool(64, func() (*worker, error) { return newWorker(o.Arch) })
	global := make([]float64, o.Arch.NumWeights())
	if err := flatnet.InitUniform(o.Arch, global, rand.New(rand.NewPCG(o.Seed, tagInit))); err != nil {
		return nil, err
	}
	res := &Result{Global: global}
	local := func(i, _ int, g, out []float64, rng *rand.Rand) error {
		k, err := pool.Get()
		if err != nil {
			return err
		}
		defer pool.Put(k)
		return k.clientUpdate(&ds.Existing[i], g, out, o.LocalSteps, &o, rng)
	}
	evaluate := func(round int, final bool) error {
		gm, err := evalGroup(pool, ds.Existing, func(int) []float64 { return global }, ds.Classes)
		if err != nil {
			return fmt.Errorf("global model: %w", err)
		}
		e := RoundEval{Round: round, GM: gm.MeanAccuracy}
		res.History = append(res.History, e)
		if len(res.History) == 1 || e.GM > res.BestGM.GM {
			res.BestGM = e
		}
		if final {
			res.GM = gm
			if len(ds.New) > 0 {
				nm, err := evalGroup(pool, ds.New, func(int) []float64 { return global }, ds.Classes)
				if err != nil {
					return fmt.Errorf("global model, new clients: %w", err)
				}
				res.NewGM = &nm
			}
		}
		return nil
	}
	win := fedrun.EvalWindow{Rounds: o.Rounds, Last: o.EvalLast, Eval: evaluate, Progress: o.Progress, Stop: o.Stop}
	after := func(t int) error {
		for _, v := range global {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("fedavg: the global weights diverged (step η = %g)", o.LR)
			}
		}
		return win.AfterRound(t)
	}
	if err := fedrun.RunHooks(N, o.ClientsPerRound, o.Rounds, weights, global, o.Seed, tagRound, local, fedrun.Hooks{AfterRound: after}); err != nil {
		return nil, err
	}
	if err := win.Finish(); err != nil {
		return nil, err
	}
	res.Seconds = time.Since(start).Seconds()
	res.TrainSeconds = res.Seconds - win.Seconds
	if o.FineTune == 0 {
		return res, nil
	}
	t0 := time.Now()
	ft := o
	ft.Mu = 0
	for g, clients := range [][]data.ClientData{ds.Existing, ds.New} {
		if len(clients) == 0 {
			continue
		}
		tuned := make([][]float64, len(clients))
		err := fedrun.Each(pool, len(clients), func(k *worker, i int) error {
			if clients[i].M() < 1 {
				return fmt.Errorf("client %d has no training examples to fine-tune on", i)
			}
			tuned[i] = make([]float64, len(global))
			rng := rand.New(rand.NewPCG(o.Seed, data.StreamID(tagFT, uint64(g), uint64(i))))
			return k.clientUpdate(&clients[i], global, tuned[i], o.FineTune, &ft, rng)
		})
		if err != nil {
			return nil, fmt.Errorf("fine-tuning: %w", err)
		}
		m, err := evalGroup(pool, clients, func(i int) []float64 { return tuned[i] }, ds.Classes)
		if err != nil {
			return nil, fmt.Errorf("fine-tuned models: %w", err)
		}
		if g == 0 {
			res.FT = &m
		} else {
			res.NewFT = &m
		}
	}
	res.FTSeconds = time.Since(t0).Seconds()
	return res, nil
}

// evalGroup scores the weights w(i) on the clients' test sets.
func evalGroup(pool *fedrun.Pool[*worker], clients []data.ClientData, w func(i int) []float64, classes int) (fl.ClassGroupMetrics, error) {
	return fedrun.Score(pool, clients, classes, func(k *worker, i int) ([]float64, error) {
		p := make([]float64, len(clients[i].YTest)*classes)
		return p, k.net.Probs(w(i), clients[i].XTest, 1, p)
	})
}

// RunMethods runs FedAvg (o.Mu = 0, named name) or FedProx as a method of
// a personalised-classification comparison: GlobalClass holds the global
// model on the existing clients' test sets, NewClass on the new clients',
// Best the best over the evaluated rounds. With o.FineTune > 0 ft is
// FedAvg+FT: the fine-tuned models of the existing (ExistingClass) and new
// clients (NewClass), its time including the training it starts from.
func RunMethods(ds *data.Dataset, o Options, name string) (avg, ft *fl.MethodResult, err error) {
	r, err := Run(ds, o)
	if err != nil {
		return nil, nil, err
	}
	gm := r.BestGM.GM
	avg = &fl.MethodResult{Method: name, GlobalClass: &r.GM, NewClass: r.NewGM,
		Best:    &fl.BestAccuracy{From: r.History[0].Round, To: r.History[len(r.History)-1].Round, Global: &gm},
		Seconds: r.Seconds, Elapsed: time.Duration(r.Seconds * float64(time.Second))}
	if o.Rounds > 0 {
		avg.RoundSeconds = r.TrainSeconds / float64(o.Rounds)
	}
	if r.FT != nil {
		s := r.Seconds + r.FTSeconds
		ft = &fl.MethodResult{Method: MethodFedAvgFT, ExistingClass: r.FT, NewClass: r.NewFT, Seconds: s,
			Elapsed: time.Duration(s * float64(time.Second)), RoundSeconds: avg.RoundSeconds}
	}
	return avg, ft, nil
}

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
// 800 and S = 10 as pFedBayes (our choice, docs/math.md §10); FedAvg+FT fine-tunes for R =
// 20 steps (our choice). The global model (GM) is scored on every client's test set
// after each of the last EvalLast rounds (the paper's best over rounds
// 700–800) and at the end.
//
// The rounds, evaluations and fine-tuning run on Driver, which trains any
// Model — a flat weight vector, ClientUpdate (Model.Train) and prediction;
// this package's MLP is one.
//
// Clients: Run calls its clients only as fl.RoundClients (Fit is
// ClientUpdate; Evaluate scores EvalGlobal or, for FedAvg+FT,
// EvalFineTuned), so Options.Clients can put remote clients in their place
// (NewClient builds one in its own process) and the run is the same bit
// for bit. A client that does not answer in a round is left out of that
// round's mean: wᵗ⁺¹ is the size-weighted mean of the clients that
// answered, the weights renormalised over them.
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
	"github.com/pacpfl/pacpfl/fl/internal/fedround"
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
	// Progress, if set, is called after every round (Value NaN).
	Progress func(fl.RoundEvent)
	// Stop, if set, is asked after every round (after Progress); an error
	// it returns ends the run with that error (a caller's cancellation:
	// ctx.Err).
	Stop func() error
	// Clients, if set, returns the run's clients in place of in-process
	// ones over ds: the existing (participating) clients and the new ones
	// (package rpc's remote clients, each built by NewClient in its own
	// process). Run then reads ds only for its sizes and shapes, never a
	// client's data.
	Clients func(existing, new int) (ex, nw []fl.RoundClient, err error)
	// Drops lets a round go on without clients that fail (remote ones).
	Drops
	// Checkpoint resumes the rounds from a saved state and hears the state
	// after every round (its Server is nil).
	Checkpoint fl.RoundCheckpoint
}

// DefaultOptions is FedAvg with the pFedBayes paper's settings (package
// doc); FedProxOptions adds μ = 0.001.
func DefaultOptions() Options {
	return Options{Arch: lml.BNN{Arch: lml.ArchMLP}, LR: 0.01, Batch: 100, LocalSteps: 20, Rounds: 800,
		ClientsPerRound: 10,
		EvalLast:        101, FineTune: 20}
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
		return fmt.Errorf("fedavg: b = %d, R = %d, S = %d and the evaluated rounds %d must be ≥ 1", o.Batch,
			o.LocalSteps, o.ClientsPerRound, o.EvalLast)
	case o.Rounds < 0 || o.FineTune < 0:
		return fmt.Errorf("fedavg: T = %d and the fine-tuning steps %d must be ≥ 0", o.Rounds, o.FineTune)
	}
	return o.Arch.Validate()
}

// Result is a run's model and scores.
type Result struct {
	// GM is the last round's global model on the existing clients' test
	// sets, NewGM on the new clients' (nil without new clients).
	GM    fl.ClassGroupMetrics
	NewGM *fl.ClassGroupMetrics
	// History is the GM's mean accuracy (%) over the existing clients
	// after each evaluated round (fl.RoundEval's GM; its other figures
	// NaN), BestGM the best of them (the paper's best over rounds
	// 700–800).
	BestGM  fl.RoundEval
	History []fl.RoundEval
	// FT and NewFT are FedAvg+FT's fine-tuned models (nil without
	// fine-tuning or new clients).
	FT, NewFT *fl.ClassGroupMetrics
	Global    []float64
	// Seconds is training and the GM's evaluations, TrainSeconds the
	// rounds alone, FTSeconds the fine-tuning and its evaluation.
	Seconds, TrainSeconds, FTSeconds float64
}

// worker is one goroutine's network and buffers: the MLP as a Model.
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

// NumParams is the number of the network's weights.
func (k *worker) NumParams() int { return k.net.NumWeights() }

// step is one SGD step on the batch (x, y) from w (updated in place) with
// the proximal term's centre start: w ← w − η (∇CE + μ (w − start)). It
// returns the batch's loss.
func (k *worker) step(w, start, x, y []float64, eta, mu float64) (float64, error) {
	loss, err := k.net.LossGrad(w, x, y, k.grad)
	if err != nil {
		return 0, fmt.Errorf("fedavg: %w: the weights diverged (step η = %g)", err, eta)
	}
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return 0, fmt.Errorf("fedavg: the loss is %v: the weights diverged (step η = %g)", loss, eta)
	}
	if mu == 0 {
		for j, g := range k.grad {
			w[j] -= eta * g
		}
		return loss, nil
	}
	for j, g := range k.grad {
		w[j] -= eta * (g + mu*(w[j]-start[j]))
	}
	return loss, nil
}

// Train is ClientUpdate(i, wᵗ) with s.Steps steps: out ← wᵗ, then SGD on
// minibatches of s.Batch rows drawn from the client's data.
func (k *worker) Train(c *data.ClientData, global, out []float64, s Schedule, rng *rand.Rand) (float64, error) {
	if c.M() < 1 {
		return 0, fmt.Errorf("fedavg: the client has no training examples")
	}
	copy(out, global)
	d := k.net.D()
	sum := 0.0
	for r := 0; r < s.Steps; r++ {
		x, y, err := k.rows.Sample(c.X, c.Y, d, s.Batch, rng)
		if err != nil {
			return 0, err
		}
		loss, err := k.step(out, global, x, y, s.LR, s.Mu)
		if err != nil {
			return 0, err
		}
		sum += loss
	}
	return sum / float64(max(s.Steps, 1)), nil
}

// Predict returns the network's class probabilities on the rows x.
func (k *worker) Predict(w, x []float64) ([]float64, error) {
	d := k.net.D()
	if d < 1 || len(x)%d != 0 {
		return nil, fmt.Errorf("fedavg: %d inputs are not rows of %d", len(x), d)
	}
	p := make([]float64, len(x)/d*k.net.Classes())
	return p, k.net.Probs(w, x, 1, p)
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
	drv := NewDriver(func() (Model[data.ClientData], error) { return newWorker(o.Arch) }, 64)
	global := make([]float64, o.Arch.NumWeights())
	if err := flatnet.InitUniform(o.Arch, global, rand.New(rand.NewPCG(o.Seed, tagInit))); err != nil {
		return nil, err
	}
	ex, nw, err := o.clients(drv, ds)
	if err != nil {
		return nil, err
	}
	if err := o.Checkpoint.Check(o.Rounds, len(global), 0); err != nil {
		return nil, fmt.Errorf("fedavg: %w", err)
	}
	res := &Result{Global: global}
	first := 0 // the first round to run
	if r := o.Checkpoint.Resume; r != nil {
		copy(global, r.Global)
		res.History, first = append([]fl.RoundEval(nil), r.History...), r.Round
	}
	score := func(clients []fl.RoundClient, round, model int) (fl.ClassGroupMetrics, error) {
		return fedround.Score(clients, fl.EvalTask{Round: round, Model: model}, global)
	}
	evaluate := func(round int, final bool) error {
		m, err := score(ex, round, EvalGlobal)
		if err != nil {
			return fmt.Errorf("global model: %w", err)
		}
		e := fl.NewRoundEval(round)
		e.GM = m.MeanAccuracy
		res.History = fl.AppendRoundEval(res.History, e)
		if final {
			res.GM = m
			if len(nw) > 0 {
				nm, err := score(nw, round, EvalGlobal)
				if err != nil {
					return fmt.Errorf("global model, new clients: %w", err)
				}
				res.NewGM = &nm
			}
		}
		return nil
	}
	plan := Plan{Rounds: o.Rounds, ClientsPerRound: o.ClientsPerRound, Seed: o.Seed, Tag: tagRound,
		Local: Schedule{Steps: o.LocalSteps, Batch: o.Batch, LR: o.LR, Mu: o.Mu},
		Check: func(global []float64) error {
			for _, v := range global {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return fmt.Errorf("fedavg: the global weights diverged (step η = %g)", o.LR)
				}
			}
			return nil
		},
		Eval: evaluate, EvalLast: o.EvalLast, Stop: o.Stop, Drops: o.Drops, Start: first}
	if f := o.Checkpoint.AfterRound; f != nil {
		plan.AfterRound = func(round int) error {
			return f(&fl.RoundState{Round: round, Global: global, History: res.History})
		}
	}
	if o.Progress != nil {
		plan.Progress = func(e fl.RoundEvent) { e.Value = math.NaN(); o.Progress(e) }
	}
	evalSeconds, err := TrainClients(ex, weights, global, plan)
	if err != nil {
		return nil, err
	}
	res.BestGM = fl.BestRound(res.History, func(e fl.RoundEval) float64 { return e.GM })
	res.Seconds = time.Since(start).Seconds()
	res.TrainSeconds = res.Seconds - evalSeconds
	if o.FineTune == 0 {
		return res, nil
	}
	t0 := time.Now()
	for g, clients := range [][]fl.RoundClient{ex, nw} {
		if len(clients) == 0 {
			continue
		}
		m, err := score(clients, o.Rounds, EvalFineTuned)
		if err != nil {
			return nil, fmt.Errorf("FedAvg+FT: %w", err)
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

// Client groups (NewClient's group): a client's fine-tuning stream is
// (seed, group, index).
const (
	GroupExisting = 0 // participating clients
	GroupNew      = 1 // clients that never took part in training
)

// NewClient returns client index of group (GroupExisting or GroupNew) with
// the training and test data c as an fl.RoundClient of the run o: what a
// client process answers a remote FedAvg or FedProx server with, the same
// client Run makes in process.
func NewClient(c *data.ClientData, o Options, group, index int) (fl.RoundClient, error) {
	o.Arch = o.Arch.WithDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if group != GroupExisting && group != GroupNew || index < 0 {
		return nil, fmt.Errorf("fedavg: client %d of group %d (want group %d or %d, index ≥ 0)", index, group,
			GroupExisting, GroupNew)
	}
	if err := flatnet.CheckClient(c, o.Arch); err != nil {
		return nil, fmt.Errorf("fedavg: %w", err)
	}
	drv := NewDriver(func() (Model[data.ClientData], error) { return newWorker(o.Arch) }, 1)
	return drv.RoundClient(c, o.clientSettings(group, index)), nil
}

// clientSettings are the settings of client index of group.
func (o *Options) clientSettings(group, index int) ClientSettings[data.ClientData] {
	return ClientSettings[data.ClientData]{
		Local:          Schedule{Steps: o.LocalSteps, Batch: o.Batch, LR: o.LR, Mu: o.Mu},
		FineTune:       Schedule{Steps: o.FineTune, Batch: o.Batch, LR: o.LR},
		FineTuneSeed:   o.Seed,
		FineTuneStream: data.StreamID(tagFT, uint64(group), uint64(index)),
		Test:           func(c *data.ClientData) (x, y []float64, classes int) { return c.XTest, c.YTest, o.Arch.Classes },
	}
}

// clients are the run's existing and new clients: o.Clients', or
// in-process ones over ds lent drv's models.
func (o *Options) clients(drv *Driver[data.ClientData], ds *data.Dataset) (ex, nw []fl.RoundClient, err error) {
	if o.Clients != nil {
		ex, nw, err = o.Clients(len(ds.Existing), len(ds.New))
		if err == nil && (len(ex) != len(ds.Existing) || len(nw) != len(ds.New)) {
			err = fmt.Errorf("fedavg: %d existing and %d new clients for a data set of %d and %d", len(ex), len(nw),
				len(ds.Existing), len(ds.New))
		}
		return ex, nw, err
	}
	for g, group := range [][]data.ClientData{ds.Existing, ds.New} {
		for i := range group {
			c := drv.RoundClient(&group[i], o.clientSettings(g, i))
			if g == GroupExisting {
				ex = append(ex, c)
			} else {
				nw = append(nw, c)
			}
		}
	}
	return ex, nw, nil
}

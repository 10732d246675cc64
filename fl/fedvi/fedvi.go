package fedvi

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/fedavg"
)

// MethodFedVI is FedVI's name among the methods of a comparison.
const MethodFedVI = "fedvi"

// Options configure FedVI. DefaultOptions gives the paper's FEMNIST
// settings (docs/math.md §9) except the number of rounds.
type Options struct {
	Arch            Arch
	Rounds          int     // T
	ClientsPerRound int     // c, sampled uniformly without replacement each round; ≤ 0 or > n: all
	Batch           int     // mini-batch size (support + query)
	LocalEpochs     int     // passes over the client's data per round
	ClientLR        float64 // client SGD step
	ServerLR        float64 // α_s of the server's SGD with momentum
	Momentum        float64 // the server's momentum
	Tau             float64 // τ, weight of the local KL
	// EvalDraws is the number of β draws whose softmax is averaged in
	// evaluation (0: β = μ).
	EvalDraws int
	// EvalLast is how many of the last rounds are evaluated (both groups,
	// after the round's server step); their mean is reported beside the
	// final round, as the paper averages its last 100 rounds.
	EvalLast int
	Seed     uint64
	// Progress, if set, is called after every round (Value NaN).
	Progress func(fl.RoundEvent)
	// Stop, if set, is asked after every round (after Progress); an error
	// it returns ends the run with that error (a caller's cancellation:
	// ctx.Err).
	Stop func() error
	// Clients, if set, gives the run's clients, in the data set's order,
	// in place of in-process ones over its data: the participating and the
	// non-participating ones, each built as NewClient (Train) or
	// NewFedAvgClient (TrainFedAvg) builds client k of its group, e.g.
	// remote clients answering from their own data. The server then reads
	// of the data set only D, Classes, Name, the number of clients of each
	// group and the participating clients' training-set sizes (len(Y): the
	// weights n_k); the scores come from the clients' ClientEvals.
	Clients func(existing, new int) (ex, nw []fl.RoundClient, err error)
	// Drops lets a round go on without participating clients whose Fit
	// fails or whose update is rejected (remote ones; package doc): with
	// Quorum > 0 the server steps from those that remain, if at least
	// Quorum do. Quorum 0: a client that fails ends the run.
	fedavg.Drops
	// Checkpoint resumes the rounds from a saved state (θ, its Server the
	// momentum v) and hears the state after every round, once that
	// round's evaluation is done.
	Checkpoint fl.RoundCheckpoint
}

// DefaultOptions are the paper's FEMNIST settings: batch 256 (128 + 128),
// one local epoch, client SGD 0.02, server SGD 3.0 with momentum 0.9,
// τ = 10⁻⁹, 100 clients per round; 1500 rounds in the paper, evaluation
// averaged over the last 100. Rounds, ClientsPerRound and EvalLast are
// meant to be scaled to the data set.
func DefaultOptions() Options {
	return Options{Arch: Paper(10), Rounds: 1500, ClientsPerRound: 100, Batch: 256, LocalEpochs: 1,
		ClientLR: 0.02, ServerLR: 3, Momentum: 0.9, Tau: 1e-9, EvalDraws: 10, EvalLast: 100}
}

// Validate checks the options.
func (o *Options) Validate() error {
	if err := o.Arch.Validate(); err != nil {
		return err
	}
	pos := func(v float64) bool { return v > 0 && !math.IsInf(v, 0) }
	switch {
	case o.Rounds < 0:
		return fmt.Errorf("fedvi: %d rounds, want ≥ 0", o.Rounds)
	case o.Batch < 2:
		return fmt.Errorf("fedvi: mini-batch %d, want ≥ 2 (one support and one query example)", o.Batch)
	case o.LocalEpochs < 1:
		return fmt.Errorf("fedvi: %d local epochs, want ≥ 1", o.LocalEpochs)
	case !pos(o.ClientLR):
		return fmt.Errorf("fedvi: client learning rate %v, want finite and > 0", o.ClientLR)
	case !pos(o.ServerLR):
		return fmt.Errorf("fedvi: server learning rate %v, want finite and > 0", o.ServerLR)
	case !(o.Momentum >= 0 && o.Momentum < 1):
		return fmt.Errorf("fedvi: server momentum %v, want [0, 1)", o.Momentum)
	case !(o.Tau >= 0) || math.IsInf(o.Tau, 0):
		return fmt.Errorf("fedvi: τ = %v, want finite and ≥ 0", o.Tau)
	case o.EvalDraws < 0:
		return fmt.Errorf("fedvi: %d evaluation draws, want ≥ 0", o.EvalDraws)
	case o.EvalLast < 0:
		return fmt.Errorf("fedvi: evaluation over the last %d rounds, want ≥ 0", o.EvalLast)
	case o.Quorum < 0 || !(o.MaxNormFactor >= 0) || math.IsInf(o.MaxNormFactor, 0) ||
		o.MaxNormFactor > 0 && o.Quorum == 0:
		return fmt.Errorf("fedvi: quorum %d and norm factor %v, want quorum ≥ 0 and a finite factor ≥ 0 "+
			"(> 0 only with a quorum)", o.Quorum, o.MaxNormFactor)
	}
	return nil
}

// Random-stream tags.
const (
	tagInit  = 0x66766930 // "fvi0"
	tagRound = 0x66766972 // "fvir"
	tagEval  = 0x66766965 // "fvie"

	tagAvgInit  = 0x66617630 // "fav0"
	tagAvgRound = 0x66617672 // "favr"
	tagAvgFT    = 0x66617666 // "favf"
)

// Result is a FedVI run: θ after the last round, the evaluations of the
// last rounds (the final one last) and the means of their weighted
// accuracies.
type Result struct {
	Theta []float64
	// History holds the weighted accuracies (%) of the participating
	// (ExistingWeighted) and the non-participating clients (NewWeighted,
	// NaN without them) after each evaluated round; fl.RoundEval's PM and
	// GM are NaN.
	History []fl.RoundEval
	// Existing and New are the final evaluation's groups (New empty
	// without non-participating clients).
	Existing, New GroupEval
	// Mean over History of the weighted accuracies (%).
	LastExisting, LastNew float64
	Seconds               float64
}

// Final is the last evaluation (nil without any).
func (r *Result) Final() *fl.RoundEval {
	if len(r.History) == 0 {
		return nil
	}
	return &r.History[len(r.History)-1]
}

// Train runs Algorithm 1 on ds's existing (participating) clients and
// evaluates both groups after each of the last o.EvalLast rounds; the new
// (non-participating) clients take no part in training:
//
//	θ⁽⁰⁾ ← init;  v ← 0
//	for t = 1..T:  S⁽ᵗ⁾ ← c clients at random
//	    (Δ_k, n_k) ← ClientUpdate(k, θ⁽ᵗ⁾) in parallel;  n ← Σ n_k
//	    g ← −Σ_k (n_k/n) Δ_k;  v ← μ·v − α_s·g;  θ⁽ᵗ⁺¹⁾ ← θ⁽ᵗ⁾ + v
//
// ClientUpdate and the evaluations are the clients' Fit and Evaluate
// (NewClient's, or o.Clients'); θ and v stay on the server. With o.Quorum
// the sums run over the clients of S⁽ᵗ⁾ that answered (package doc);
// o.Checkpoint resumes a run and saves its state after every round. The
// result depends on o.Seed only, not on GOMAXPROCS.
func Train(ds *data.Dataset, o Options) (*Result, error) {
	start := time.Now()
	o.Arch = o.Arch.withDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	a := o.Arch
	if ds.D != a.InChannels*a.InH*a.InW || ds.Classes != a.Classes {
		return nil, fmt.Errorf(
			"fedvi: data set %s has %d features and %d classes, the network takes %d×%d×%d images and %d classes",
			ds.Name, ds.D, ds.Classes, a.InChannels, a.InH, a.InW, a.Classes)
	}
	n := len(ds.Existing)
	if n < 1 {
		return nil, fmt.Errorf("fedvi: data set %s has no participating clients", ds.Name)
	}
	weights := make([]float64, n)
	for k := range ds.Existing {
		if m := ds.Existing[k].M(); m < 2 {
			return nil, fmt.Errorf("fedvi: participating client %d has %d training examples, needs at least 2", k, m)
		}
		weights[k] = float64(QueryCount(ds.Existing[k].M(), o.Batch, o.LocalEpochs))
	}
	pool := &Pool{A: a}
	m0, err := pool.get()
	if err != nil {
		return nil, err
	}
	theta := make([]float64, m0.NumParams())
	if err := m0.Init(theta, rand.New(rand.NewPCG(o.Seed, tagInit))); err != nil {
		return nil, err
	}
	pool.put(m0)
	vel := make([]float64, len(theta))
	res := &Result{}
	ex, nw, err := roundClients(ds, o.Clients, func(c *data.ClientData, group, index int) (fl.RoundClient, error) {
		return newClient(c, &o, pool, group, index)
	})
	if err != nil {
		return nil, err
	}
	s := &server{o: &o, clients: ex, weights: weights, global: theta, vel: vel, tag: tagRound, res: res,
		step: func(_ int, global, mean []float64) {
			for j, th := range global {
				g := th - mean[j] // −Σ (n_k/n) Δ_k
				vel[j] = o.Momentum*vel[j] - o.ServerLR*g
				global[j] = th + vel[j]
			}
		},
		eval: func(round int) (evaluation, error) { return evaluateBoth(ex, nw, theta, &o, round) }}
	if err := s.resume(); err != nil {
		return nil, err
	}
	if err := s.run(); err != nil {
		return nil, err
	}
	for _, j := range theta {
		if math.IsNaN(j) || math.IsInf(j, 0) {
			return nil, fmt.Errorf("fedvi: the global parameters diverged (server learning rate %g, momentum %g, "+
				"client learning rate %g)", o.ServerLR, o.Momentum, o.ClientLR)
		}
	}
	res.finish(theta, start)
	return res, nil
}

// evaluation is one round's evaluation of both groups.
type evaluation struct {
	round         fl.RoundEval
	existing, new GroupEval
}

// add appends e to the history, its groups the final ones so far.
func (r *Result) add(e evaluation, err error) error {
	if err != nil {
		return err
	}
	r.History = fl.AppendRoundEval(r.History, e.round)
	r.Existing, r.New = e.existing, e.new
	return nil
}

// evaluateBoth evaluates ModelPersonal of the participating and the
// non-participating clients after round (0: before training).
func evaluateBoth(ex, nw []fl.RoundClient, theta []float64, o *Options, round int) (evaluation, error) {
	for _, v := range theta {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return evaluation{}, fmt.Errorf("fedvi: the global parameters diverged "+
				"(server learning rate %g, momentum %g, client learning rate %g)", o.ServerLR, o.Momentum, o.ClientLR)
		}
	}
	return evaluateGroups(ex, nw, fl.EvalTask{Round: round, Model: ModelPersonal}, theta)
}

// RunMethod runs FedVI as a method of the personalised-classification
// comparison: MethodResult's groups hold the final round's per-client
// accuracy and CE (their plain means, as for every method); the weighted
// accuracies and their means over the last rounds are in the Result.
func RunMethod(ds *data.Dataset, o Options) (*fl.MethodResult, *Result, error) {
	r, err := Train(ds, o)
	if err != nil {
		return nil, nil, err
	}
	return r.MethodResult(MethodFedVI, ds), r, nil
}

// MethodResult is a FedVI-family run on ds (FedVI, or FedAvg on its
// network) as method name of a comparison: the final evaluation's
// per-client accuracy and CE (their plain means, as for every method).
func (r *Result) MethodResult(name string, ds *data.Dataset) *fl.MethodResult {
	out := &fl.MethodResult{Method: name, Seconds: r.Seconds, Elapsed: time.Duration(r.Seconds * float64(time.Second))}
	if r.Final() != nil {
		ex := r.Existing.ClassGroupMetrics
		out.ExistingClass = &ex
		if len(ds.New) > 0 {
			nw := r.New.ClassGroupMetrics
			out.NewClass = &nw
		}
	}
	return out
}

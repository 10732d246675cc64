package pfedbayes

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/fedavg"
	"github.com/pacpfl/pacpfl/fl/internal/fedround"
	"github.com/pacpfl/pacpfl/fl/internal/fedrun"
	"github.com/pacpfl/pacpfl/fl/internal/flatnet"
	"github.com/pacpfl/pacpfl/fl/internal/meanfield"
	"github.com/pacpfl/pacpfl/lml"
)

// MethodPFedBayes is pFedBayes's name among the methods of a comparison.
const MethodPFedBayes = "pfedbayes"

// Stream tags of the random draws.
const (
	tagInit  = 0x7046420001 // μ⁰
	tagRound = 0x7046420002 // client i in round t (fedrun)
	tagEval  = 0x7046420003 // weight draws of the predictive
)

// Options are pFedBayes's settings (docs/math.md §8.1; DefaultOptions).
type Options struct {
	Arch       lml.BNN // the network (zero: MLP 784-100-10)
	Rho0       float64 // ρ⁰ of every weight
	MuInit     float64 // μ⁰ ~ N(0, MuInit²)
	Zeta       float64 // ζ, the weight of KL(q_i ‖ w) in (pFB-27)
	LR1, LR2   float64 // η₁ (personalised), η₂ (localised global)
	MC         int     // K weight draws per step
	Batch      int     // b
	LocalSteps int     // R
	Beta       float64 // β of the server step
	Rounds     int     // T
	// ClientsPerRound is S, the clients the server averages per round (≥
	// N: all): the Paper variant trains every client and hears S of them,
	// Code trains and averages S.
	ClientsPerRound int
	EvalLast        int // evaluate after each of the last EvalLast rounds (≥ 1)
	EvalDraws       int // weight draws of the predictive (0: the mean μ)
	// Optimizer is SGD (the paper's "GD algorithms", docs/math.md §10) or Adam
	// (the authors' code: torch.optim.Adam for both models, its moments
	// kept by the client across rounds).
	Optimizer Optimizer
	// Variant is the paper's printed algorithm (Paper, the default) or
	// what the authors' code computes (Code; CodeOptions has its settings).
	Variant Variant
	// PersonalSteps is the number of personalised steps per local
	// iteration (Code; the Paper variant takes 1).
	PersonalSteps int
	// NoiseStd is the standard deviation of the reparameterisation draws g
	// of training and of the predictive (Paper: 1; the authors' code:
	// 0.001).
	NoiseStd float64
	Seed     uint64
	// Progress, if set, is called after every round (Value NaN).
	Progress func(fl.RoundEvent)
	// Stop, if set, is asked after every round (after Progress); an error
	// it returns ends the run with that error (a caller's cancellation:
	// ctx.Err).
	Stop func() error
	// Clients, if set, returns the run's clients (remote ones, package
	// rpc): existing clients 0..existing−1 (GroupExisting, fl.StatefulClient
	// holding v_i) and new clients 0..new−1 (GroupNew), as NewClient builds
	// them. Run then reads of ds only the features, classes, numbers of
	// clients and their training and test sizes, never a client's rows or
	// state, and Result.Clients is nil. Nil: NewClient's clients over ds,
	// in process.
	Clients func(existing, new int) (ex, nw []fl.RoundClient, err error)
	// Drops lets a round go on without clients whose Fit fails or whose
	// update is rejected (remote ones): with Quorum > 0 a round completes
	// if at least Quorum of the clients that trained answered and were
	// accepted, and the server averages those of them it hears (package
	// doc, "Clients"). Quorum 0: a failed Fit ends the run.
	fedavg.Drops
	// Checkpoint resumes the rounds from a saved state (its Server nil)
	// and hears the state after every round, after that round's
	// evaluation. Resuming after round k > 0 needs the clients that kept
	// their v_i through round k, injected with Clients: in-process clients
	// would start again at v⁰.
	Checkpoint fl.RoundCheckpoint
}

// Optimizer is the update rule of the personalised and the localised
// global step.
type Optimizer int

const (
	SGD  Optimizer = iota // v ← v − η ∇
	Adam                  // Adam with β₁ = 0.9, β₂ = 0.999, ε = 1e-8 (PyTorch's defaults), step η
)

// ParseOptimizer reads "sgd" or "adam".
func ParseOptimizer(s string) (Optimizer, error) {
	switch s {
	case "sgd":
		return SGD, nil
	case "adam":
		return Adam, nil
	}
	return SGD, fmt.Errorf("pfedbayes: unknown optimizer %q (sgd or adam)", s)
}

func (o Optimizer) String() string { return [...]string{"sgd", "adam"}[o] }

// Adam's constants (PyTorch's defaults).
const (
	adamB1  = 0.9
	adamB2  = 0.999
	adamEps = 1e-8
)

// adamState is Adam's moments of one vector v = (μ, ρ) and its step count.
type adamState struct {
	m, s []float64
	t    int
}

// next advances the step count and returns the bias corrections 1 − β₁ᵗ
// and 1 − β₂ᵗ.
func (a *adamState) next() (c1, c2 float64) {
	a.t++
	return 1 - math.Pow(adamB1, float64(a.t)), 1 - math.Pow(adamB2, float64(a.t))
}

// adamDelta updates the moments m, s with gradient g and returns the step
// η m̂/(√ŝ + ε).
func adamDelta(m, s *float64, g, eta, c1, c2 float64) float64 {
	*m = adamB1**m + (1-adamB1)*g
	*s = adamB2**s + (1-adamB2)*g*g
	return eta * (*m / c1) / (math.Sqrt(*s/c2) + adamEps)
}

// DefaultOptions are the paper's hyper-parameters (ρ⁰ = −2.5, ζ = 10, η₁ =
// η₂ = 0.001, S = 10) and docs/math.md §10's fill-ins (K = 1, b = 100, R = 20, β =
// 1, T = 800, μ⁰ ~ N(0, 0.1²)); rounds 700–800 are evaluated (the paper's
// best-accuracy window), the predictive is the mean network (our choice).
func DefaultOptions() Options {
	return Options{Arch: lml.BNN{Arch: lml.ArchMLP}, Rho0: -2.5, MuInit: 0.1, Zeta: 10, LR1: 0.001, LR2: 0.001, MC: 1,
		Batch: 100, LocalSteps: 20, Beta: 1, Rounds: 800, ClientsPerRound: 10, EvalLast: 101, PersonalSteps: 1,
		NoiseStd: 1}
}

// Validate checks the settings.
func (o *Options) Validate() error {
	pos := func(name string, v float64) error {
		if !(v > 0) || math.IsInf(v, 0) {
			return fmt.Errorf("pfedbayes: %s = %v must be positive and finite", name, v)
		}
		return nil
	}
	for _, c := range []struct {
		name string
		v    float64
	}{{"ζ", o.Zeta}, {"η₁", o.LR1}, {"η₂", o.LR2}, {"the μ⁰ std", o.MuInit}, {"the noise std", o.NoiseStd}} {
		if err := pos(c.name, c.v); err != nil {
			return err
		}
	}
	switch {
	case math.IsNaN(o.Rho0) || math.IsInf(o.Rho0, 0):
		return fmt.Errorf("pfedbayes: ρ⁰ = %v must be finite", o.Rho0)
	case !(o.Beta > 0 && o.Beta <= 1):
		return fmt.Errorf("pfedbayes: β = %v must lie in (0, 1]", o.Beta)
	case o.MC < 1 || o.Batch < 1 || o.LocalSteps < 1 || o.ClientsPerRound < 1 || o.EvalLast < 1:
		return fmt.Errorf("pfedbayes: K = %d, b = %d, R = %d, S = %d and the evaluated rounds %d must be ≥ 1",
			o.MC, o.Batch, o.LocalSteps, o.ClientsPerRound, o.EvalLast)
	case o.Variant != Paper && o.Variant != Code:
		return fmt.Errorf("pfedbayes: unknown variant %d", o.Variant)
	case o.PersonalSteps < 1 || o.Variant == Paper && o.PersonalSteps != 1:
		return fmt.Errorf("pfedbayes: %d personalised steps per local iteration: the code variant takes ≥ 1, the "+
			"paper's 1", o.PersonalSteps)
	case o.Optimizer != SGD && o.Optimizer != Adam:
		return fmt.Errorf("pfedbayes: unknown optimizer %d", o.Optimizer)
	case o.Rounds < 0 || o.EvalDraws < 0:
		return fmt.Errorf("pfedbayes: T = %d and the predictive's weight draws %d must be ≥ 0", o.Rounds, o.EvalDraws)
	case o.Quorum < 0 || !(o.MaxNormFactor >= 0) || math.IsInf(o.MaxNormFactor, 0) ||
		o.MaxNormFactor > 0 && o.Quorum == 0:
		return fmt.Errorf("pfedbayes: quorum %d must be ≥ 0 and the norm factor %v finite, ≥ 0 and only with a "+
			"quorum", o.Quorum, o.MaxNormFactor)
	}
	return o.Arch.Validate()
}

// Result is a run's models and scores.
type Result struct {
	// PM and GM are the last round's personalised and global models on
	// the existing clients' test sets; NewGM the global model on the new
	// clients' (nil without new clients).
	PM, GM fl.ClassGroupMetrics
	NewGM  *fl.ClassGroupMetrics
	// History is the mean accuracy (%) over the existing clients of the
	// personalised models (PM) and the global model (GM) after each
	// evaluated round (fl.RoundEval; its weighted figures NaN). BestPM and
	// BestGM are the best of them (the paper's "best over rounds
	// 700–800"), reached in the rounds given.
	BestPM, BestGM fl.RoundEval
	History        []fl.RoundEval
	// Global is v = (μ, ρ) of the server, Clients the v_i = (μ_i, ρ_i)
	// of the in-process clients (nil with Options.Clients: they stay on
	// the clients).
	Global  []float64
	Clients [][]float64
	// Seconds is the whole run, TrainSeconds the rounds without the
	// evaluations.
	Seconds, TrainSeconds float64
}

// clientState is what client i keeps across rounds: v_i and, with Adam,
// the moments of its two optimisers.
type clientState struct {
	v            []float64
	adamQ, adamW *adamState
	rows         batchCursor // the Code variant's place in the rows
}

// worker is one goroutine's network and buffers for a client update.
type worker struct {
	net                  *flatnet.Net
	rows                 data.RowSampler
	theta, grad, eps     []float64
	gMu, gRho            []float64
	sigQ, dsigQ          []float64
	sigW, dsigW          []float64
	iw2                  []float64 // Code: 1/σ_w² of the personalised KL
	buf                  []float64
	nrm                  meanfield.Normals
	probs                []float64
	muQ, rhoQ, muW, rhoW []float64  // the vectors of the update in progress
	adamQ, adamW         *adamState // their Adam moments (nil: SGD)
	loss                 float64    // the last clientUpdate's mean loss over its iterations
}

func newWorker(a lml.BNN) (*worker, error) {
	net, err := flatnet.New(a)
	if err != nil {
		return nil, err
	}
	n := net.NumWeights()
	v := func() []float64 { return make([]float64, n) }
	return &worker{net: net, theta: v(), grad: v(), eps: v(), gMu: v(), gRho: v(), sigQ: v(), dsigQ: v(), sigW: v(),
		dsigW: v(), iw2: v(),
		buf: make([]float64, meanfield.SoftplusBlock)}, nil
}

// begin points the worker at a client state v_i and a localised global
// v_w (each μ then ρ) and computes their σ and σ′.
func (w *worker) begin(vi, vw []float64) {
	n := w.net.NumWeights()
	w.muQ, w.rhoQ = vi[:n], vi[n:]
	w.muW, w.rhoW = vw[:n], vw[n:]
	meanfield.SoftplusVec(w.sigQ, w.dsigQ, w.rhoQ, w.buf)
	meanfield.SoftplusVec(w.sigW, w.dsigW, w.rhoW, w.buf)
}

// step is one iteration r of ClientUpdate on the batch (x, y) of a client
// of n examples: the personalised step on Ω^i (pFB-27) with K = o.MC fresh
// weight draws, then the localised global step on KL(q_i ‖ w) (pFB-28).
// It returns the data term's mean cross-entropy over the draws. The two
// updates and the σ they need run fused, block by block, so that the
// vectors of a block stay in cache.
func (w *worker) step(x, y []float64, n int, o *Options) (float64, error) {
	K, s := o.MC, o.NoiseStd
	scale := float64(n) / float64(K) // (n/b)(1/K) Σ_j = n/K × the batch mean
	loss := 0.0
	for k := 0; k < K; k++ {
		for j, m := range w.muQ {
			e := s * w.nrm.Norm()
			w.eps[j] = e
			w.theta[j] = m + w.sigQ[j]*e
		}
		l, err := w.net.LossGrad(w.theta, x, y, w.grad)
		if err != nil {
			return 0, fmt.Errorf("pfedbayes: %w: the weights diverged (η₁ = %g, η₂ = %g)", err, o.LR1, o.LR2)
		}
		loss += l / float64(K)
		if K == 1 {
			break // the update reads grad and eps directly
		}
		if k == 0 {
			clear(w.gMu)
			clear(w.gRho)
		}
		for j, g := range w.grad {
			w.gMu[j] += scale * g
			w.gRho[j] += scale * g * w.eps[j]
		}
	}
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return 0,
			fmt.Errorf("pfedbayes: the client loss is %v: the weights diverged (η₁ = %g, η₂ = %g)", loss, o.LR1, o.LR2)
	}
	eta1, eta2, zeta := o.LR1, o.LR2, o.Zeta
	nw := len(w.muQ)
	var q1, q2, w1, w2 float64
	adam := w.adamQ != nil
	if adam {
		q1, q2 = w.adamQ.next()
		w1, w2 = w.adamW.next()
	}
	for lo := 0; lo < nw; lo += meanfield.SoftplusBlock {
		hi := min(lo+meanfield.SoftplusBlock, nw)
		muQ, rhoQ, sigQ, dsigQ := w.muQ[lo:hi], w.rhoQ[lo:hi], w.sigQ[lo:hi], w.dsigQ[lo:hi]
		muW, rhoW, sigW, dsigW := w.muW[lo:hi], w.rhoW[lo:hi], w.sigW[lo:hi], w.dsigW[lo:hi]
		// v_i ← v_i − η₁ ∇Ω^i (or Adam's step), the KL's gradient at the
		// v_i of the draw.
		for j, mq := range muQ {
			var gm, gr float64
			if K == 1 {
				gm = scale * w.grad[lo+j]
				gr = gm * w.eps[lo+j] // (scale·g)·ε, as with K > 1
			} else {
				gm, gr = w.gMu[lo+j], w.gRho[lo+j]
			}
			dmq, dsq, _, _ := meanfield.KLTerm(mq, sigQ[j], muW[j], sigW[j])
			if adam {
				a := w.adamQ
				muQ[j] = mq - adamDelta(&a.m[lo+j], &a.s[lo+j], gm+zeta*dmq, eta1, q1, q2)
				rhoQ[j] -= adamDelta(&a.m[nw+lo+j], &a.s[nw+lo+j], (gr+zeta*dsq)*dsigQ[j], eta1, q1, q2)
				continue
			}
			muQ[j] = mq - eta1*(gm+zeta*dmq)
			rhoQ[j] -= eta1 * (gr + zeta*dsq) * dsigQ[j]
		}
		meanfield.SoftplusVec(sigQ, dsigQ, rhoQ, w.buf)
		// v_w ← v_w − η₂ ∇_{v_w} KL(q_{v_i} ‖ w_{v_w}) at the new v_i.
		for j, mw := range muW {
			_, _, dmw, dsw := meanfield.KLTerm(muQ[j], sigQ[j], mw, sigW[j])
			if adam {
				a := w.adamW
				muW[j] = mw - adamDelta(&a.m[lo+j], &a.s[lo+j], dmw, eta2, w1, w2)
				rhoW[j] -= adamDelta(&a.m[nw+lo+j], &a.s[nw+lo+j], dsw*dsigW[j], eta2, w1, w2)
				continue
			}
			muW[j] = mw - eta2*dmw
			rhoW[j] -= eta2 * dsw * dsigW[j]
		}
		meanfield.SoftplusVec(sigW, dsigW, rhoW, w.buf)
	}
	return loss, nil
}

// clientUpdate is ClientUpdate(i, vᵗ): R steps on the client's data from
// its state vi (updated in place) and v_w = global, the localised global
// model written into out and the mean loss of the iterations into w.loss.
func (w *worker) clientUpdate(c *data.ClientData, st *clientState, global, out []float64, o *Options,
	rng *rand.Rand) error {
	vi := st.v
	copy(out, global)
	if o.Variant == Code {
		w.beginCode(vi, out)
	} else {
		w.begin(vi, out)
	}
	w.adamQ, w.adamW = st.adamQ, st.adamW
	w.nrm.Seed(rng)
	d := w.net.D()
	n := c.M()
	w.loss = 0
	for r := 0; r < o.LocalSteps; r++ {
		var l float64
		var err error
		if o.Variant == Code {
			x, y := st.rows.batch(c, d, o.Batch)
			l, err = w.codeStep(x, y, o)
		} else {
			var x, y []float64
			if x, y, err = w.rows.Sample(c.X, c.Y, d, o.Batch, rng); err != nil {
				return err
			}
			l, err = w.step(x, y, n, o)
		}
		if err != nil {
			return err
		}
		w.loss += l / float64(o.LocalSteps)
	}
	for j, v := range out {
		if math.IsNaN(v) || math.IsInf(v, 0) || math.IsNaN(vi[j]) || math.IsInf(vi[j], 0) {
			return fmt.Errorf("pfedbayes: weights diverged (η₁ = %g, η₂ = %g)", o.LR1, o.LR2)
		}
	}
	return nil
}

// predict writes into w.probs the predictive of v = (μ, ρ) on the rows of
// x: softmax of the mean network (draws = 0) or the mean of draws weight
// draws' softmax.
func (w *worker) predict(v, x []float64, draws int, noise float64, rng *rand.Rand) ([]float64, error) {
	rows := len(x) / w.net.D()
	probs := make([]float64, rows*w.net.Classes())
	n := w.net.NumWeights()
	mu, rho := v[:n], v[n:]
	if draws == 0 {
		return probs, w.net.Probs(mu, x, 1, probs)
	}
	meanfield.SoftplusVec(w.sigQ, w.dsigQ, rho, w.buf)
	w.nrm.Seed(rng)
	for range draws {
		for j, m := range mu {
			w.theta[j] = m + w.sigQ[j]*(noise*w.nrm.Norm())
		}
		if err := w.net.Probs(w.theta, x, 1/float64(draws), probs); err != nil {
			return nil, err
		}
	}
	return probs, nil
}

// Run trains pFedBayes on ds's existing clients and evaluates both models
// (module doc); its clients are o.Clients' or, without it, in process.
func Run(ds *data.Dataset, o Options) (*Result, error) {
	start := time.Now()
	o.Arch = o.Arch.WithDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	sizes, err := flatnet.CheckData(ds, o.Arch)
	if err != nil {
		return nil, fmt.Errorf("pfedbayes: %w", err)
	}
	N := len(sizes)
	global := initial(&o) // v⁰; every v_i starts there
	if err := o.Checkpoint.Check(o.Rounds, len(global), 0); err != nil {
		return nil, fmt.Errorf("pfedbayes: %w", err)
	}
	first := 0 // the first round to run
	r := o.Checkpoint.Resume
	if r != nil && r.Round > 0 && o.Clients == nil {
		return nil, fmt.Errorf("pfedbayes: resuming after round %d needs the clients' v_i of that round: "+
			"in-process clients start at v⁰ (inject the clients that kept theirs with Options.Clients)", r.Round)
	}
	res := &Result{Global: global}
	ex, nc, err := runClients(ds, &o, global, res)
	if err != nil {
		return nil, err
	}
	if r != nil {
		copy(global, r.Global) // after runClients: the clients start at v⁰
		res.History, first = slices.Clone(r.History), r.Round
	}
	server := func(_ int, g, mean []float64) {
		for j, v := range g {
			g[j] = (1-o.Beta)*v + o.Beta*mean[j]
		}
	}
	evaluate := func(round int, final bool) error {
		pm, err := fedround.Score(ex, fl.EvalTask{Round: round, Model: ModelPM}, global)
		if err != nil {
			return fmt.Errorf("personalised models: %w", err)
		}
		gm, err := fedround.Score(ex, fl.EvalTask{Round: round, Model: ModelGM}, global)
		if err != nil {
			return fmt.Errorf("global model: %w", err)
		}
		e := fl.NewRoundEval(round)
		e.PM, e.GM = pm.MeanAccuracy, gm.MeanAccuracy
		res.History = fl.AppendRoundEval(res.History, e)
		if final {
			res.PM, res.GM = pm, gm
			if len(nc) > 0 {
				nm, err := fedround.Score(nc, fl.EvalTask{Round: round, Model: ModelNewGM}, global)
				if err != nil {
					return fmt.Errorf("global model, new clients: %w", err)
				}
				res.NewGM = &nm
			}
		}
		return nil
	}
	win := fedrun.EvalWindow{Rounds: o.Rounds, Last: o.EvalLast, Eval: evaluate, Stop: o.Stop, Start: first}
	if o.Progress != nil {
		win.Progress = func(t, rounds int) { o.Progress(fl.RoundEvent{Round: t, Rounds: rounds, Value: math.NaN()}) }
	}
	weights := make([]float64, N)
	for i := range weights {
		weights[i] = 1 // (β/S) Σ: the plain mean
	}
	// Paper: every client trains, the server hears S of them. Code: the S
	// selected clients train and are averaged weighted by their sizes.
	train, hear := 0, o.ClientsPerRound
	if o.Variant == Code {
		train, hear = o.ClientsPerRound, 0
		copy(weights, sizes)
	}
	hooks := fedrun.Hooks{Server: server, AfterRound: win.AfterRound, Aggregate: hear, Start: first,
		Quorum: o.Quorum, MaxNormFactor: o.MaxNormFactor, OnDrop: o.OnDrop}
	if f := o.Checkpoint.AfterRound; f != nil {
		win.After = func(round int) error {
			return f(&fl.RoundState{Round: round, Global: global, History: res.History})
		}
	}
	if err := fedrun.RunHooks(N, train, o.Rounds, weights, global, o.Seed, tagRound,
		fedround.Local(ex, o.Seed, tagRound, nil), hooks); err != nil {
		return nil, err
	}
	if err := win.Finish(); err != nil {
		return nil, err
	}
	res.BestPM = fl.BestRound(res.History, func(e fl.RoundEval) float64 { return e.PM })
	res.BestGM = fl.BestRound(res.History, func(e fl.RoundEval) float64 { return e.GM })
	res.Seconds = time.Since(start).Seconds()
	res.TrainSeconds = res.Seconds - win.Seconds
	return res, nil
}

// runClients returns the run's existing and new clients: o.Clients' (one
// per client of ds, checked) or in-process ones over ds sharing a worker
// pool, their v_i (copies of v0) then in res.Clients.
func runClients(ds *data.Dataset, o *Options, v0 []float64, res *Result) (ex, nc []fl.RoundClient, err error) {
	if o.Clients != nil {
		ex, nc, err = o.Clients(len(ds.Existing), len(ds.New))
		if err != nil {
			return nil, nil, fmt.Errorf("pfedbayes: clients: %w", err)
		}
		if len(ex) != len(ds.Existing) || len(nc) != len(ds.New) {
			return nil, nil, fmt.Errorf("pfedbayes: %d existing and %d new clients for a data set of %d and %d",
				len(ex), len(nc), len(ds.Existing), len(ds.New))
		}
		for i, c := range slices.Concat(ex, nc) {
			if c == nil {
				return nil, nil, fmt.Errorf("pfedbayes: client %d is nil", i)
			}
		}
		return ex, nc, nil
	}
	pool := fedrun.NewPool(64, func() (*worker, error) { return newWorker(o.Arch) })
	res.Clients = make([][]float64, len(ds.Existing))
	ex = make([]fl.RoundClient, len(ds.Existing))
	for i := range ex {
		c, err := newClient(&ds.Existing[i], o, pool, GroupExisting, i, v0)
		if err != nil {
			return nil, nil, err
		}
		ex[i], res.Clients[i] = c, c.st.v
	}
	nc = make([]fl.RoundClient, len(ds.New))
	for i := range nc {
		if nc[i], err = newClient(&ds.New[i], o, pool, GroupNew, i, v0); err != nil {
			return nil, nil, err
		}
	}
	return ex, nc, nil
}

// RunMethod runs pFedBayes as a method of a personalised-classification
// comparison: ExistingClass holds the personalised models (PM),
// GlobalClass the global model (GM) on the same test sets and NewClass the
// GM on the new clients' (after the last round); Best the best PM and GM
// over the evaluated rounds.
func RunMethod(ds *data.Dataset, o Options) (*fl.MethodResult, error) {
	r, err := Run(ds, o)
	if err != nil {
		return nil, err
	}
	pm, gm := r.BestPM.PM, r.BestGM.GM
	out := &fl.MethodResult{Method: MethodPFedBayes, ExistingClass: &r.PM, GlobalClass: &r.GM, NewClass: r.NewGM,
		Best: &fl.BestAccuracy{From: r.History[0].Round, To: r.History[len(r.History)-1].Round, Existing: &pm,
			Global: &gm},
		Seconds: r.Seconds, Elapsed: time.Duration(r.Seconds * float64(time.Second))}
	if o.Rounds > 0 {
		out.RoundSeconds = r.TrainSeconds / float64(o.Rounds)
	}
	return out, nil
}

package genfl

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/internal/fedrun"
)

// Phases of a client's Fit, the first entry of the global vector (the
// layouts are in the package doc).
const (
	phaseERM         = 1 // [1, μ]: the learnt prior's ERM round
	phasePosterior   = 2 // [2, m, σ_P, μ_P, μ, ρ]: GenFL's round (Alg. 1)
	phasePersonalise = 3 // [3, σ_P, μ_P]: Q_k ← userUpdate(k, P, m_k) (Alg. 3)
)

// Model numbers of a GenFL client's Evaluate (fl.EvalTask.Model): what it
// scores, on which of its data, from which global vector. Every model
// answers with counts in Extra (and Tests, its number of test examples);
// the server forms the run's figures from them.
const (
	// ModelMeanError: the deterministic network with weights global (the
	// prior mean or Q's mean) on the test rows; Extra = [0–1 errors].
	ModelMeanError = iota + 1
	// ModelGibbsError: Q = N(μ, softplus(ρ)²) with global = (μ, ρ) on the
	// test rows, TestDraws draws per example from the streams (Seed,
	// "test", index, ·); Extra = [0–1 errors].
	ModelGibbsError
	// ModelFullErrors: FEDBOUND's Full estimator of Q, global = (μ, ρ), on
	// the bound's sample (streams of MC.Seed); Extra = [0–1 errors].
	ModelFullErrors
	// ModelPairErrors: FEDBOUND's Pairs estimator of Q on the pairs whose
	// example is the client's; global = (μ, ρ, m_1, …, m_K), the sizes of
	// every user's share of the bound's sample. Extra = [0–1 errors,
	// pairs]. Each client evaluates every pair block holding one of its
	// examples in full (the other rows zeroed): K times the pooled work.
	ModelPairErrors
	// ModelPersonalBound: the personalised Q_k (client state) against P,
	// global = (σ_P, μ_P): the terms of its own bound (Alg. 4, ClientMC,
	// m = m_k); Extra = [0–1 errors, evaluations, n, KL(Q_k‖P), m_k,
	// seconds of the sampling].
	ModelPersonalBound
	// ModelPersonalTest: the personalised Q_k's Gibbs errors on the test
	// rows; Extra = [0–1 errors].
	ModelPersonalTest
	// ModelPredict: the personalised Q_k's predictive, global = [draws per
	// test example]: Accuracy and CE of the test rows (RunMethod).
	ModelPredict
)

// pools lend workers (a network and the buffers of a local update) to the
// clients of one process: ERM workers and Bayesian ones.
type pools struct {
	erm, bayes *fedrun.Pool[*worker]
}

func newPools(a Arch, keep int) *pools {
	return &pools{
		erm:   fedrun.NewPool(keep, func() (*worker, error) { return newWorker(a, false), nil }),
		bayes: fedrun.NewPool(keep, func() (*worker, error) { return newWorker(a, true), nil }),
	}
}

// roundClient is user index's GenFL client: its share of the prior's data
// (erm; empty with a data-free prior), of the posterior's and the bound's
// (post), its test rows, and its personalised posterior q once Fit made it.
type roundClient struct {
	o         *Options
	index     int
	p         int // parameters of the network
	erm, post Client
	test      Client
	pools     *pools
	q         *Posterior
}

var _ fl.StatefulClient = (*roundClient)(nil)

// NewRoundClient builds user index's GenFL client from its own data (the
// training rows split as o.Prior says, the test rows) and o, for a process
// that answers the server's Fit and Evaluate (package doc: the phases of
// Fit, the Model numbers of Evaluate). Given the run's o (its settings
// and seeds; callbacks unused), it computes what the in-process client
// computes, to the bit. GenFL takes only existing clients: group must be
// 0, index is the user's position among them.
func NewRoundClient(c *data.ClientData, o Options, group, index int) (fl.StatefulClient, error) {
	if group != 0 {
		return nil, fmt.Errorf("genfl: only existing clients take part, not group %d", group)
	}
	if err := o.Arch.Validate(); err != nil {
		return nil, err
	}
	train, err := NewClient(c.X, c.Y, o.Arch.In, o.Arch.Classes)
	if err != nil {
		return nil, fmt.Errorf("genfl: client %d, training rows: %w", index, err)
	}
	test, err := NewClient(c.XTest, c.YTest, o.Arch.In, o.Arch.Classes)
	if err != nil {
		return nil, fmt.Errorf("genfl: client %d, test rows: %w", index, err)
	}
	return newRoundClient(train, test, &o, index, newPools(o.Arch, 1))
}

// newRoundClient is user index's client over its training rows (split as
// o.Prior says) and test rows; the clients of one process share pl.
func newRoundClient(train, test Client, o *Options, index int, pl *pools) (*roundClient, error) {
	if index < 0 {
		return nil, fmt.Errorf("genfl: client index %d", index)
	}
	if err := checkClients([]Client{train}, o.Arch); err != nil {
		return nil, fmt.Errorf("client %d: %w", index, err)
	}
	if test.M() > 0 {
		if err := checkClients([]Client{test}, o.Arch); err != nil {
			return nil, fmt.Errorf("client %d, test rows: %w", index, err)
		}
	}
	c := &roundClient{o: o, index: index, p: o.Arch.NumParams(), post: train, test: test, pools: pl}
	switch o.Prior {
	case RandomPriorKind, LearntPriorKind, GivenPriorKind:
	default:
		return nil, fmt.Errorf("genfl: unknown prior kind %v", o.Prior)
	}
	if o.splits() {
		c.erm, c.post = train.Split()
		if c.erm.M() == 0 || c.post.M() == 0 {
			return nil, fmt.Errorf(
				"genfl: user %d has %d examples, too few to split between prior and posterior", index, train.M())
		}
	}
	return c, nil
}

// shares returns the sizes of a user's shares of m training examples: the
// prior's and the posterior's (learnt or given prior: ⌊m/2⌋ and the
// rest; a prior that saw none of their data: 0 and m).
func (o *Options) shares(m int) (erm, post int) {
	if o.splits() {
		return m / 2, m - m/2
	}
	return 0, m
}

// splits reports whether the users' samples are halved: the prior was
// learnt, or given and learnt on the first halves.
func (o *Options) splits() bool {
	return o.Prior == LearntPriorKind || o.Prior == GivenPriorKind && !o.GivenUnseen
}

// Fit is the client's part of a round, the phase global[0] names: an ERM
// round of the prior (E epochs of SGD with dropout on S¹_k), a GenFL round
// (userUpdate on its share with the total m), or its personalisation
// (userUpdate from Q = P with m_k, the result kept as the client's state;
// out is then global, nothing to aggregate).
func (c *roundClient) Fit(t fl.RoundTask, global, out []float64) (float64, error) {
	if len(out) != len(global) {
		return math.NaN(), fmt.Errorf("genfl: update buffer of %d values for a global vector of %d", len(out), len(global))
	}
	if len(global) == 0 {
		return math.NaN(), fmt.Errorf("genfl: empty global vector")
	}
	P := c.p
	switch global[0] {
	case phaseERM:
		if len(global) != 1+P {
			return math.NaN(), fmt.Errorf("genfl: ERM round with %d values, want %d", len(global), 1+P)
		}
		if c.erm.M() == 0 {
			return math.NaN(), fmt.Errorf("genfl: user %d keeps no data for the prior (data-free prior)", c.index)
		}
		w, err := c.pools.erm.Get()
		if err != nil {
			return math.NaN(), err
		}
		defer c.pools.erm.Put(w)
		out[0] = global[0]
		return c.ermUpdate(w, global[1:], out[1:], t.Rand())
	case phasePosterior:
		if len(global) != 3+3*P {
			return math.NaN(), fmt.Errorf("genfl: GenFL round with %d values, want %d", len(global), 3+3*P)
		}
		m := global[1]
		if !(m >= 1 && m <= 1<<53) || m != math.Trunc(m) {
			return math.NaN(), fmt.Errorf("genfl: sample size m = %v", m)
		}
		p := &Prior{Mu: global[3 : 3+P], Sigma: global[2]}
		copy(out[:3+P], global[:3+P])
		g, o := global[3+P:], out[3+P:]
		fed := c.o.PosteriorFed
		return c.update(p, int(m), &fed, [][]float64{g[:P], g[P:]}, [][]float64{o[:P], o[P:]}, t.Rand())
	case phasePersonalise:
		if len(global) != 2+P {
			return math.NaN(), fmt.Errorf("genfl: personalisation with %d values, want %d", len(global), 2+P)
		}
		p := &Prior{Mu: global[2:], Sigma: global[1]}
		if err := p.Validate(c.o.Arch); err != nil {
			return math.NaN(), err
		}
		q := PosteriorAt(p)
		fed := c.o.PosteriorFed
		fed.LocalEpochs = c.o.PersonalEpochs
		state := [][]float64{q.Mu, q.Rho}
		v, err := c.update(p, c.post.M(), &fed, state, state, t.Rand())
		if err != nil {
			return math.NaN(), fmt.Errorf("genfl: personalising user %d: %w", c.index, err)
		}
		c.q = q
		copy(out, global)
		return v, nil
	}
	return math.NaN(), fmt.Errorf("genfl: unknown phase %v", global[0])
}

// update is userUpdate(k, state, m) on the posterior's share under p and
// fed, the result in out.
func (c *roundClient) update(p *Prior, m int, fed *Federation, state, out [][]float64, rng *rand.Rand) (float64,
	error) {
	if err := p.Validate(c.o.Arch); err != nil {
		return math.NaN(), err
	}
	terms, err := newObjectiveTerms(c.o.Objective.Objective, m, c.o.Objective.Delta, c.o.Objective.KLPenalty)
	if err != nil {
		return math.NaN(), err
	}
	w, err := c.pools.bayes.Get()
	if err != nil {
		return math.NaN(), err
	}
	defer c.pools.bayes.Put(w)
	return w.userUpdate(&c.post, p, terms, &c.o.Objective, fed, state, out, rng)
}

// ermUpdate is the learnt prior's local ERM: E epochs of SGD with momentum
// on the cross-entropy of the network with dropout, from start, on S¹_k.
func (c *roundClient) ermUpdate(w *worker, start, out []float64, rng *rand.Rand) (float64, error) {
	a, fed, dropout := c.o.Arch, &c.o.PriorFed, c.o.Dropout
	copy(w.mu, start)
	clear(w.vm)
	v, err := w.epochs(&c.erm, a.In, fed, rng, func(x []float64, y []int) (float64, error) {
		logits := w.net.forward(w.mu, x, len(y), dropout, rng)
		loss, _, err := crossEntropy(logits, y, a.Classes)
		if err != nil {
			return 0, err
		}
		w.net.backward(w.mu, x, logits, w.g)
		for j, g := range w.g {
			w.vm[j] = fed.Momentum*w.vm[j] + g
			w.mu[j] -= fed.LR * w.vm[j]
		}
		return loss, nil
	})
	copy(out, w.mu)
	return v, err
}

// Evaluate answers model t.Model (the Model… constants) from global: counts
// of errors on the client's test rows or the bound's sample, or the
// personalised posterior's bound terms and scores.
func (c *roundClient) Evaluate(t fl.EvalTask, global []float64) (fl.ClientEval, error) {
	P, a := c.p, c.o.Arch
	posterior := func() (*Posterior, error) {
		if len(global) < 2*P {
			return nil, fmt.Errorf("genfl: model %d needs a posterior of %d values, got %d", t.Model, 2*P, len(global))
		}
		q := &Posterior{Mu: global[:P:P], Rho: global[P : 2*P : 2*P]}
		for _, v := range global[:2*P] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("genfl: posterior entry %v", v)
			}
		}
		return q, nil
	}
	needTest := func() error {
		if c.test.M() == 0 {
			return fmt.Errorf("genfl: user %d has no test examples", c.index)
		}
		return nil
	}
	counted := func(n int64) fl.ClientEval {
		return fl.ClientEval{Accuracy: math.NaN(), CE: math.NaN(), Tests: c.test.M(), Extra: []float64{float64(n)}}
	}
	switch t.Model {
	case ModelMeanError:
		if len(global) != P {
			return fl.ClientEval{}, fmt.Errorf("genfl: network of %d weights, want %d", len(global), P)
		}
		if err := needTest(); err != nil {
			return fl.ClientEval{}, err
		}
		return counted(int64(meanErrors(global, a, &c.test))), nil
	case ModelGibbsError:
		if len(global) != 2*P {
			return fl.ClientEval{}, fmt.Errorf("genfl: Gibbs error of %d values, want %d", len(global), 2*P)
		}
		q, err := posterior()
		if err != nil {
			return fl.ClientEval{}, err
		}
		if err := needTest(); err != nil {
			return fl.ClientEval{}, err
		}
		if c.o.TestDraws < 1 {
			return fl.ClientEval{}, fmt.Errorf("genfl: %d weight draws per test example, want ≥ 1", c.o.TestDraws)
		}
		n := gibbsCounts(q, a, []Client{c.test}, c.index, c.o.TestDraws, c.o.Workers, c.o.Seed)
		return counted(n[0]), nil
	case ModelFullErrors:
		if len(global) != 2*P {
			return fl.ClientEval{}, fmt.Errorf("genfl: Full estimator of %d values, want %d", len(global), 2*P)
		}
		q, err := posterior()
		if err != nil {
			return fl.ClientEval{}, err
		}
		cfg := c.o.MC
		cfg.Progress = nil
		if cfg.N < 1 {
			return fl.ClientEval{}, fmt.Errorf("genfl: FEDBOUND needs n ≥ 1 Monte Carlo samples, got %d", cfg.N)
		}
		n, err := fullErrors(q, a, []Client{c.post}, c.index, cfg)
		return counted(n), err
	case ModelPairErrors:
		q, err := posterior()
		if err != nil {
			return fl.ClientEval{}, err
		}
		sizes := global[2*P:]
		if c.index >= len(sizes) || sizes[c.index] != float64(c.post.M()) {
			return fl.ClientEval{}, fmt.Errorf("genfl: user %d of %d sizes holds %d examples, the server says otherwise",
				c.index, len(sizes), c.post.M())
		}
		lo, total := 0, 0
		for k, m := range sizes {
			if !(m >= 1 && m <= 1<<40) || m != math.Trunc(m) {
				return fl.ClientEval{}, fmt.Errorf("genfl: size %v of user %d", m, k)
			}
			if k < c.index {
				lo += int(m)
			}
			total += int(m)
		}
		if c.o.MC.N < 1 {
			return fl.ClientEval{}, fmt.Errorf("genfl: FEDBOUND needs n ≥ 1 Monte Carlo samples, got %d", c.o.MC.N)
		}
		errs, pairs := pairErrors(q, a, &c.post, lo, total, c.o.MC)
		e := counted(errs)
		e.Extra = append(e.Extra, float64(pairs))
		return e, nil
	case ModelPersonalBound:
		if c.q == nil {
			return fl.ClientEval{}, fmt.Errorf("genfl: user %d is not personalised", c.index)
		}
		if len(global) != 1+P {
			return fl.ClientEval{}, fmt.Errorf("genfl: prior of %d values, want %d", len(global), 1+P)
		}
		p := &Prior{Mu: global[1:], Sigma: global[0]}
		if err := p.Validate(a); err != nil {
			return fl.ClientEval{}, err
		}
		kl, err := KL(c.q, p)
		if err != nil {
			return fl.ClientEval{}, err
		}
		mc := c.o.ClientMC
		mc.Seed, mc.Progress = data.StreamID(tagPBound, c.o.Seed, uint64(c.index)), nil
		r, err := SampleError(c.q, a, []Client{c.post}, mc)
		if err != nil {
			return fl.ClientEval{}, err
		}
		e := counted(r.Errors)
		e.Extra = append(e.Extra, float64(r.Evals), float64(r.N), kl, float64(c.post.M()), r.Seconds)
		return e, nil
	case ModelPersonalTest:
		if c.q == nil {
			return fl.ClientEval{}, fmt.Errorf("genfl: user %d is not personalised", c.index)
		}
		if err := needTest(); err != nil {
			return fl.ClientEval{}, err
		}
		if c.o.TestDraws < 1 {
			return fl.ClientEval{}, fmt.Errorf("genfl: %d weight draws per test example, want ≥ 1", c.o.TestDraws)
		}
		n := gibbsCounts(c.q, a, []Client{c.test}, 0, c.o.TestDraws, c.o.Workers,
			data.StreamID(tagPTest, c.o.Seed, uint64(c.index)))
		return counted(n[0]), nil
	case ModelPredict:
		if c.q == nil {
			return fl.ClientEval{}, fmt.Errorf("genfl: user %d is not personalised", c.index)
		}
		if len(global) != 1 || global[0] != math.Trunc(global[0]) || !(global[0] >= 1 && global[0] <= 1<<30) {
			return fl.ClientEval{}, fmt.Errorf("genfl: prediction wants [draws ≥ 1], got %v", global)
		}
		probs, err := PredictProbs(c.q, a, c.test.X, int(global[0]), data.StreamID(tagPredct, c.o.Seed,
			uint64(c.index)))
		if err != nil {
			return fl.ClientEval{}, err
		}
		y := make([]float64, len(c.test.Y))
		for i, v := range c.test.Y {
			y[i] = float64(v)
		}
		return fl.ScoreClient(probs, y, a.Classes)
	}
	return fl.ClientEval{}, fmt.Errorf("genfl: unknown model %d", t.Model)
}

// AppendState appends the personalised posterior (μ, ρ), nothing before
// the client is personalised.
func (c *roundClient) AppendState(dst []float64) []float64 {
	if c.q == nil {
		return dst
	}
	return append(append(dst, c.q.Mu...), c.q.Rho...)
}

// SetState restores AppendState's output: empty (not personalised) or 2P
// finite values.
func (c *roundClient) SetState(s []float64) error {
	if len(s) == 0 {
		c.q = nil
		return nil
	}
	if len(s) != 2*c.p {
		return fmt.Errorf("genfl: state of %d values, want 0 or %d", len(s), 2*c.p)
	}
	for j, v := range s {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("genfl: state entry %d is %v", j, v)
		}
	}
	c.q = &Posterior{Mu: append([]float64(nil), s[:c.p]...), Rho: append([]float64(nil), s[c.p:]...)}
	return nil
}

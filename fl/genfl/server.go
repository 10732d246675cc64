package genfl

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/internal/fedround"
	"github.com/pacpfl/pacpfl/fl/internal/fedrun"
)

// users are a run's K clients as the server sees them: their RoundClients,
// the in-process ones (nil when Options.Clients made them), and the sizes
// of every client's shares: the prior's, the posterior's and the bound's
// (post), and its test rows.
type users struct {
	clients         []fl.RoundClient
	local           []*roundClient
	erm, post, test []int
}

// users makes the run's k clients: o.Clients's, or in-process clients built
// by local (sharing one pool of workers); trainM and testM are the sizes of
// client i's training and test rows.
func (o *Options) users(k int, trainM, testM func(i int) int,
	local func(i int, pl *pools) (*roundClient, error)) (*users, error) {
	if k < 1 {
		return nil, fmt.Errorf("genfl: no users")
	}
	u := &users{erm: make([]int, k), post: make([]int, k), test: make([]int, k)}
	for i := range k {
		u.erm[i], u.post[i] = o.shares(trainM(i))
		u.test[i] = testM(i)
		if o.splits() && (u.erm[i] == 0 || u.post[i] == 0) {
			return nil, fmt.Errorf(
				"genfl: user %d has %d examples, too few to split between prior and posterior", i, trainM(i))
		}
	}
	if o.Clients != nil {
		ex, _, err := o.Clients(k, 0)
		if err != nil {
			return nil, fmt.Errorf("genfl: clients: %w", err)
		}
		if len(ex) != k {
			return nil, fmt.Errorf("genfl: %d clients for %d users", len(ex), k)
		}
		u.clients = ex
		return u, nil
	}
	pl := newPools(o.Arch, o.PosteriorFed.workers())
	u.clients, u.local = make([]fl.RoundClient, k), make([]*roundClient, k)
	for i := range k {
		c, err := local(i, pl)
		if err != nil {
			return nil, err
		}
		u.clients[i], u.local[i] = c, c
	}
	return u, nil
}

// rounds runs fed.Rounds rounds of Alg. 1's server loop on fedrun: each
// round S_t = selectUsers's users Fit from the global vector header‖state
// (each from its stream (fed.Seed, tag, t, k)), and the server replaces
// state by Σ_{k∈S_t} m_k w^k / Σ_{k∈S_t} m_k summed in user order (the
// paper's line 9 sums over all K users with weights m_k/m, a misprint); the
// header (the phase and what the clients need beside the state) stays. A
// client that fails ends the run with its error. Results depend on the
// seeds only.
func rounds(clients []fl.RoundClient, sizes []int, header, state []float64, fed *Federation, tag uint64) error {
	n, h := len(clients), len(header)
	global := append(append(make([]float64, 0, h+len(state)), header...), state...)
	weights := make([]float64, n)
	for k, m := range sizes {
		weights[k] = float64(m)
	}
	loss := make([]float64, n) // a round's users are distinct
	var round []int
	win := fedrun.EvalWindow{Rounds: fed.Rounds, Stop: fed.Stop}
	if fed.Progress != nil {
		win.Progress = func(t, rounds int) {
			sum := 0.0
			for _, i := range round {
				sum += loss[i]
			}
			fed.Progress(fl.RoundEvent{Round: t, Rounds: rounds, Value: sum / float64(len(round))})
		}
	}
	fit := fedround.Local(clients, fed.Seed, tag, loss)
	local := func(i, t int, g, out []float64, rng *rand.Rand) error {
		if err := fit(i, t, g, out, rng); err != nil {
			return err
		}
		for j := range h {
			if out[j] != g[j] {
				return fmt.Errorf("genfl: update entry %d is %v, the round's is %v", j, out[j], g[j])
			}
		}
		return nil
	}
	hooks := fedrun.Hooks{
		Server:     func(_ int, g, mean []float64) { copy(g[h:], mean[h:]) },
		Select:     func(t int) []int { return selectUsers(n, fed.Fraction, fed.Seed, t) },
		Workers:    fed.workers(),
		Chosen:     func(_ int, chosen []int) { round = chosen },
		AfterRound: win.AfterRound,
	}
	if err := fedrun.RunHooks(n, 0, fed.Rounds, weights, global, fed.Seed, tag, local, hooks); err != nil {
		return err
	}
	copy(state, global[h:])
	return nil
}

// learnPrior is LearnPrior's server: ERM rounds (Fit phase 1, global
// [1, μ]) over the clients' first halves of sizes from init's means.
func learnPrior(clients []fl.RoundClient, sizes []int, init *Prior, sigma float64, a Arch, dropout float64,
	fed *Federation) (*Prior, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	if err := init.Validate(a); err != nil {
		return nil, err
	}
	if err := fed.validate(); err != nil {
		return nil, err
	}
	if !(dropout >= 0 && dropout < 1) {
		return nil, fmt.Errorf("genfl: dropout %v must lie in [0, 1)", dropout)
	}
	mu := append([]float64(nil), init.Mu...)
	if err := rounds(clients, sizes, []float64{phaseERM}, mu, fed, tagERM); err != nil {
		return nil, fmt.Errorf("genfl: learning the prior: %w", err)
	}
	p := &Prior{Mu: mu, Sigma: sigma}
	return p, p.Validate(a)
}

// trainRounds is Train's server: GenFL rounds (Fit phase 2, global [2, m, σ_P,
// μ_P, μ, ρ]) from Q = P over the clients' shares of sizes.
func trainRounds(clients []fl.RoundClient, sizes []int, p *Prior, m int, a Arch, o *ObjectiveConfig,
	fed *Federation) (*Posterior, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	if err := p.Validate(a); err != nil {
		return nil, err
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	if err := fed.validate(); err != nil {
		return nil, err
	}
	if _, err := newObjectiveTerms(o.Objective, m, o.Delta, o.KLPenalty); err != nil {
		return nil, err
	}
	q := PosteriorAt(p)
	P := len(q.Mu)
	header := append([]float64{phasePosterior, float64(m), p.Sigma}, p.Mu...)
	state := append(append(make([]float64, 0, 2*P), q.Mu...), q.Rho...)
	if err := rounds(clients, sizes, header, state, fed, tagUser); err != nil {
		return nil, fmt.Errorf("genfl: %w", err)
	}
	copy(q.Mu, state[:P])
	copy(q.Rho, state[P:])
	return q, nil
}

// personalise is Alg. 3's personalisation: every client k runs Fit phase 3
// (global [3, σ_P, μ_P]) from its stream (fed.Seed, "pers", k), on workers
// goroutines, keeping its Q_k; tick hears each one done.
func personalise(clients []fl.RoundClient, p *Prior, a Arch, o *ObjectiveConfig, fed *Federation, workers int,
	tick func()) error {
	if err := p.Validate(a); err != nil {
		return err
	}
	if err := o.validate(); err != nil {
		return err
	}
	if err := fed.validate(); err != nil {
		return err
	}
	global := append([]float64{phasePersonalise, p.Sigma}, p.Mu...)
	return forEach(len(clients), workers, func(k int) error {
		out := make([]float64, len(global))
		t := fl.RoundTask{Seed: fed.Seed, Stream: data.StreamID(tagPers, uint64(k))}
		_, err := clients[k].Fit(t, global, out)
		tick()
		return err
	})
}

// evaluate asks every client for model and checks that each answers n
// finite non-negative numbers and, if tests is set, its number of test
// rows; done, if set, hears each answer. In-process clients answer one
// after the other, each over the cores (as the pooled estimates ran);
// injected ones all at once (fedround.Evaluate).
func (u *users) evaluate(round, model int, global []float64, n int, tests []int, done func()) ([]fl.ClientEval,
	error) {
	check := func(k int, e fl.ClientEval) error {
		if len(e.Extra) != n {
			return fmt.Errorf("genfl: client %d answered %d numbers, want %d", k, len(e.Extra), n)
		}
		for _, v := range e.Extra {
			if !(v >= 0) || math.IsInf(v, 0) {
				return fmt.Errorf("genfl: client %d answered %v", k, e.Extra)
			}
		}
		if tests != nil && e.Tests != tests[k] {
			return fmt.Errorf("genfl: client %d has %d test examples, the server counts %d", k, e.Tests, tests[k])
		}
		if done != nil {
			done()
		}
		return nil
	}
	t := fl.EvalTask{Round: round, Model: model}
	if u.local == nil {
		evals, err := fedround.Evaluate(u.clients, t, global)
		if err != nil {
			return nil, err
		}
		for k, e := range evals {
			if err := check(k, e); err != nil {
				return nil, err
			}
		}
		return evals, nil
	}
	evals := make([]fl.ClientEval, len(u.clients))
	for k, c := range u.clients {
		e, err := c.Evaluate(t, global)
		if err != nil {
			return nil, fmt.Errorf("client %d: %w", k, err)
		}
		if err := check(k, e); err != nil {
			return nil, err
		}
		evals[k] = e
	}
	return evals, nil
}

// count is a client's count Extra[j] as an integer.
func count(e fl.ClientEval, j int) (int64, error) {
	v := e.Extra[j]
	if v != math.Trunc(v) || v > 1<<53 {
		return 0, fmt.Errorf("genfl: count %v", v)
	}
	return int64(v), nil
}

// pooledErrors is the 0–1 error rate over every client's test rows (each
// evaluated draws times) of model, the clients' counts summed.
func (u *users) pooledErrors(round, model int, global []float64, draws int) (float64, error) {
	evals, err := u.evaluate(round, model, global, 1, u.test, nil)
	if err != nil {
		return 0, err
	}
	var all int64
	m := 0
	for k, e := range evals {
		c, err := count(e, 0)
		if err != nil {
			return 0, fmt.Errorf("client %d: %w", k, err)
		}
		all += c
		m += u.test[k]
	}
	return float64(all) / float64(m*draws), nil
}

// fedBound is FEDBOUND (Alg. 2) over the users' bound samples: the server
// computes KL(Q‖P) and the double inversion, the clients count the errors
// of the sampling step (ModelFullErrors, ModelPairErrors). In process,
// the Pairs estimator runs pooled over s (SampleError): its blocks mix
// users, and the clients' replay costs K times the pooled work.
func (o *Options) fedBound(u *users, s []Client, q *Posterior, p *Prior) (*Bound, error) {
	a, cfg := o.Arch, o.MC
	if err := p.Validate(a); err != nil {
		return nil, err
	}
	kl, err := KL(q, p)
	if err != nil {
		return nil, err
	}
	m := 0
	for _, mk := range u.post {
		m += mk
	}
	var mc MCResult
	if u.local != nil && cfg.Estimator == Pairs {
		if mc, err = SampleError(q, a, s, cfg); err != nil {
			return nil, err
		}
	} else {
		if cfg.N < 1 {
			return nil, fmt.Errorf("genfl: FEDBOUND needs n ≥ 1 Monte Carlo samples, got %d", cfg.N)
		}
		start := nowSeconds()
		global := append(append([]float64(nil), q.Mu...), q.Rho...)
		model, n := ModelFullErrors, 1
		switch cfg.Estimator {
		case Pairs:
			model, n = ModelPairErrors, 2
			for _, mk := range u.post {
				global = append(global, float64(mk))
			}
		case Full:
		default:
			return nil, fmt.Errorf("genfl: unknown estimator %v", cfg.Estimator)
		}
		done := 0
		evals, err := u.evaluate(o.PosteriorFed.Rounds, model, global, n, nil, func() {
			if done++; cfg.Progress != nil {
				cfg.Progress(fl.RoundEvent{Round: done, Rounds: len(u.clients), Value: math.NaN()})
			}
		})
		if err != nil {
			return nil, err
		}
		var errs, pairs int64
		for k, e := range evals {
			c, err := count(e, 0)
			if err != nil {
				return nil, fmt.Errorf("client %d: %w", k, err)
			}
			errs += c
			if n == 2 {
				c, err := count(e, 1)
				if err != nil {
					return nil, fmt.Errorf("client %d: %w", k, err)
				}
				pairs += c
			}
		}
		evalsN := int64(cfg.N) * int64(m)
		if n == 2 {
			if pairs != int64(cfg.N) {
				return nil, fmt.Errorf("genfl: the clients evaluated %d pairs of %d", pairs, cfg.N)
			}
			evalsN = int64(cfg.N)
		}
		if errs > evalsN {
			return nil, fmt.Errorf("genfl: %d errors in %d evaluations", errs, evalsN)
		}
		mc = MCResult{Errors: errs, Evals: evalsN, Err: float64(errs) / float64(evalsN), N: cfg.N,
			Seconds: nowSeconds() - start}
	}
	r, err := fl.FedBound(mc.Err, mc.N, o.DeltaPrime, kl, m, o.Objective.Delta)
	if err != nil {
		return nil, err
	}
	return &Bound{FedBoundResult: r, MC: mc}, nil
}

// personalBound is user k's bound (Alg. 4) from the terms its client
// answered for ModelPersonalBound.
func (o *Options) personalBound(e fl.ClientEval, mk int) (*Bound, error) {
	var c [3]int64
	for j := range c {
		v, err := count(e, j)
		if err != nil {
			return nil, err
		}
		c[j] = v
	}
	errs, evals, n := c[0], c[1], c[2]
	if n != int64(o.ClientMC.N) || evals < n || errs > evals || e.Extra[4] != float64(mk) {
		return nil, fmt.Errorf("genfl: bound terms %v of a user of %d examples, n = %d", e.Extra, mk, o.ClientMC.N)
	}
	mc := MCResult{Errors: errs, Evals: evals, Err: float64(errs) / float64(evals), N: int(n), Seconds: e.Extra[5]}
	r, err := fl.FedBound(mc.Err, mc.N, o.DeltaPrime, e.Extra[3], mk, o.Objective.Delta)
	if err != nil {
		return nil, err
	}
	return &Bound{FedBoundResult: r, MC: mc}, nil
}

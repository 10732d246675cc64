package genfl

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/pacpfl/pacpfl/fl"
)

// PriorKind is the paper's data-free (random) or learnt prior.
type PriorKind int

const (
	// RandomPriorKind: μ_P drawn by RandomPrior, independent of the data;
	// the whole training sample serves the posterior and the bound.
	RandomPriorKind PriorKind = iota + 1
	// LearntPriorKind: μ_P learnt by federated ERM on the first half S¹_k
	// of every user's sample; the posterior and the bound use the second
	// halves S²_k only, which the prior never saw.
	LearntPriorKind
	// GivenPriorKind: μ_P and σ_P are the caller's (Options.Given), learnt
	// on the first halves S¹_k or on no user data at all (another method's
	// prior, e.g. PAC-PFL's hyper-posterior, trained on S¹_k only); as with
	// a learnt prior, the posterior and the bound use the second halves
	// S²_k only. The bound holds only if the given prior never saw S²_k:
	// that is the caller's to ensure.
	GivenPriorKind
)

// String is "random", "learnt" or "given".
func (k PriorKind) String() string {
	switch k {
	case RandomPriorKind:
		return "random"
	case LearntPriorKind:
		return "learnt"
	case GivenPriorKind:
		return "given"
	}
	return fmt.Sprintf("PriorKind(%d)", int(k))
}

// ParsePriorKind reads "random" or "learnt".
func ParsePriorKind(s string) (PriorKind, error) {
	switch s {
	case "random":
		return RandomPriorKind, nil
	case "learnt", "learned":
		return LearntPriorKind, nil
	}
	return 0, fmt.Errorf("genfl: unknown prior %q (random or learnt)", s)
}

// Options configure a whole run (prior, GenFL, FEDBOUND, test errors).
type Options struct {
	Arch  Arch
	Prior PriorKind
	// Given is the prior of GivenPriorKind (nil otherwise); SigmaPrior
	// does not apply to it. GivenUnseen: it saw none of these users' data
	// (new users of a federation), so each user's whole sample serves its
	// posterior and its bound.
	Given       *Prior
	GivenUnseen bool
	SigmaPrior  float64
	// PriorFed is the learnt prior's federated ERM (the paper: 100 rounds
	// of 5 local epochs, momentum 0.99) with Dropout.
	PriorFed Federation
	Dropout  float64
	// PosteriorFed is GenFL's protocol (the paper: momentum 0.95; 200
	// rounds from a random prior, 10 rounds of 5 epochs from a learnt one).
	// In PFL its LocalEpochs, Batch, LR and Momentum drive each client's
	// personalisation, PersonalEpochs replacing LocalEpochs.
	PosteriorFed   Federation
	PersonalEpochs int
	Objective      ObjectiveConfig
	DeltaPrime     float64
	MC             MCConfig // FEDBOUND's sampling step (FL-SOB)
	// ClientMC is the sampling step of each client's bound (PFL).
	ClientMC MCConfig
	// TestDraws is the number of weight draws per test example of the
	// Gibbs test error.
	TestDraws int
	Workers   int
	Seed      uint64
	// Phase, if set, is called when a phase starts ("prior", "posterior",
	// "personalise", "bound", "test").
	Phase func(name string)
	// UserProgress, if set, is called in PFL after each user's
	// personalisation and each user's bound (Round users done of Rounds,
	// Value NaN), one call at a time.
	UserProgress func(fl.RoundEvent)
	// Clients, if set, makes the run's RoundClients: existing is the
	// number K of users (GenFL asks for no new clients and ignores nw),
	// client k being user k (NewRoundClient(…, 0, k) over the k-th
	// existing client's data, in another process). The run then reads only
	// the sizes of the users' training and test rows from its data, never
	// the rows, and reports no personalised posteriors (PFLResult). Nil:
	// in-process clients over the run's data.
	Clients func(existing, new int) (ex, nw []fl.RoundClient, err error)
}

// Stage timings in seconds.
type Timings struct {
	Prior, Posterior, Bound, Test float64
}

// FLSOBResult is GenFL + FEDBOUND on i.i.d. users (the paper's Table 1).
type FLSOBResult struct {
	Bound *Bound
	// TestError is the Gibbs (stochastic classifier) 0–1 error of Q on the
	// users' pooled test examples, the quantity the bound bounds; MeanTest
	// that of the deterministic network at Q's mean, for reference.
	TestError, MeanTest float64
	// TrainError is FEDBOUND's Monte Carlo estimate of R̂_S(Q), the Gibbs
	// error on the bound's sample.
	TrainError float64
	PriorTest  float64 // 0–1 test error of the network at the prior mean
	Timings    Timings
}

func (o *Options) phase(name string) {
	if o.Phase != nil {
		o.Phase(name)
	}
}

// prior builds the data-free prior, or learns one by ERM rounds on the
// users' first halves.
func (o *Options) prior(u *users) (*Prior, error) {
	p0, err := RandomPrior(o.Arch, o.SigmaPrior, stream(o.Seed, tagPrior))
	if err != nil {
		return nil, err
	}
	switch o.Prior {
	case RandomPriorKind:
		return p0, nil
	case LearntPriorKind:
		o.phase("prior")
		return learnPrior(u.clients, u.erm, p0, o.SigmaPrior, o.Arch, o.Dropout, &o.PriorFed)
	case GivenPriorKind:
		if err := o.checkGiven(); err != nil {
			return nil, err
		}
		return &Prior{Mu: slices.Clone(o.Given.Mu), Sigma: o.Given.Sigma}, nil
	}
	return nil, fmt.Errorf("genfl: unknown prior kind %v", o.Prior)
}

// runUsers are the users of RunFLSOB and RunPFL: o.Clients's (reading the
// sizes of train and test only) or in-process ones over train and test.
func (o *Options) runUsers(train, test []Client) (*users, error) {
	if len(test) != len(train) {
		return nil, fmt.Errorf("genfl: %d users with training data, %d with test data", len(train), len(test))
	}
	if o.Clients == nil {
		if err := checkClients(test, o.Arch); err != nil {
			return nil, fmt.Errorf("test examples: %w", err)
		}
	}
	return o.users(len(train), func(i int) int { return train[i].M() }, func(i int) int { return test[i].M() },
		func(i int, pl *pools) (*roundClient, error) { return newRoundClient(train[i], test[i], o, i, pl) })
}

// RunFLSOB is the paper's FL-SOB experiment: prior (data-free, or learnt on
// S¹), GenFL (Alg. 1) on the bound's sample with m = its total size,
// FEDBOUND (Alg. 2) on it, and the Gibbs test error on the users' test
// examples; every phase that touches a user's data is its RoundClient's
// (train[k] and test[k] are user k's rows).
func RunFLSOB(train, test []Client, o Options) (*FLSOBResult, error) {
	if err := o.Arch.Validate(); err != nil {
		return nil, err
	}
	u, err := o.runUsers(train, test)
	if err != nil {
		return nil, err
	}
	var res FLSOBResult
	t0 := nowSeconds()
	p, err := o.prior(u)
	if err != nil {
		return nil, err
	}
	if res.PriorTest, err = u.pooledErrors(o.PriorFed.Rounds, ModelMeanError, p.Mu, 1); err != nil {
		return nil, err
	}
	t1 := nowSeconds()
	res.Timings.Prior = t1 - t0
	o.phase("posterior")
	m := 0
	for _, mk := range u.post {
		m += mk
	}
	q, err := trainRounds(u.clients, u.post, p, m, o.Arch, &o.Objective, &o.PosteriorFed)
	if err != nil {
		return nil, err
	}
	t2 := nowSeconds()
	res.Timings.Posterior = t2 - t1
	o.phase("bound")
	var s []Client
	for _, c := range u.local {
		s = append(s, c.post)
	}
	if res.Bound, err = o.fedBound(u, s, q, p); err != nil {
		return nil, err
	}
	res.TrainError = res.Bound.Err
	t3 := nowSeconds()
	res.Timings.Bound = t3 - t2
	o.phase("test")
	if o.TestDraws < 1 {
		return nil, fmt.Errorf("genfl: %d weight draws per test example, want ≥ 1", o.TestDraws)
	}
	qv := append(append([]float64(nil), q.Mu...), q.Rho...)
	if res.TestError, err = u.pooledErrors(o.PosteriorFed.Rounds, ModelGibbsError, qv, o.TestDraws); err != nil {
		return nil, err
	}
	if res.MeanTest, err = u.pooledErrors(o.PosteriorFed.Rounds, ModelMeanError, q.Mu, 1); err != nil {
		return nil, err
	}
	res.Timings.Test = nowSeconds() - t3
	return &res, nil
}

// ClientBound is one client's personalised result in PFL.
type ClientBound struct {
	Bound      *Bound
	TestError  float64 // Gibbs 0–1 error of Q_k on the client's test examples
	TrainError float64 // Monte Carlo Gibbs error on S²_k (the bound's sample)
}

// PFLResult is Alg. 3/4: per-client personalised posteriors and bounds.
type PFLResult struct {
	Clients    []ClientBound
	Posteriors []*Posterior
	Prior      *Prior
	PriorTest  float64
	Timings    Timings
}

// RunPFL is the paper's PFL experiment (Alg. 3 and 4): the prior (learnt by
// federated ERM on every user's S¹_k, or data-free), each user's
// personalised posterior Q_k by userUpdate from P on its S²_k (all of S_k
// with a data-free prior) with its own m_k, and its own bound (Alg. 4:
// FEDBOUND without aggregation, m = m_k, each holding with probability
// ≥ 1 − δ − δ′ on its own), with Q_k's Gibbs error on the user's test
// examples. The paper learns the prior mean with "GenFL on S_P" in Alg. 3
// and by ERM in its experiments section; ERM is used here (PriorFed). Q_k
// stays on user k's client, which answers its bound's terms and test
// errors; the server inverts the bound.
func RunPFL(train, test []Client, o Options) (*PFLResult, error) {
	if err := o.Arch.Validate(); err != nil {
		return nil, err
	}
	u, err := o.runUsers(train, test)
	if err != nil {
		return nil, err
	}
	if o.PersonalEpochs < 1 {
		return nil, fmt.Errorf("genfl: %d personalisation epochs, want ≥ 1", o.PersonalEpochs)
	}
	K := len(train)
	res := &PFLResult{Clients: make([]ClientBound, K)}
	t0 := nowSeconds()
	p, err := o.prior(u)
	if err != nil {
		return nil, err
	}
	res.Prior = p
	if res.PriorTest, err = u.pooledErrors(o.PriorFed.Rounds, ModelMeanError, p.Mu, 1); err != nil {
		return nil, err
	}
	t1 := nowSeconds()
	res.Timings.Prior = t1 - t0
	o.phase("personalise")
	fed := o.PosteriorFed
	fed.LocalEpochs = o.PersonalEpochs
	workers := o.Workers
	if workers < 1 {
		workers = fed.workers()
	}
	// One client per worker; each personalisation runs single-threaded.
	var mu sync.Mutex
	done := 0
	tick := func() {
		if o.UserProgress != nil {
			mu.Lock()
			done++
			o.UserProgress(fl.RoundEvent{Round: done, Rounds: K, Value: math.NaN()})
			mu.Unlock()
		}
	}
	if err := personalise(u.clients, p, o.Arch, &o.Objective, &fed, workers, tick); err != nil {
		return nil, err
	}
	if u.local != nil {
		res.Posteriors = make([]*Posterior, K)
		for k, c := range u.local {
			res.Posteriors[k] = c.q
		}
	}
	t2 := nowSeconds()
	res.Timings.Posterior = t2 - t1
	o.phase("bound")
	done = 0
	prior := append([]float64{p.Sigma}, p.Mu...)
	bounds, err := u.evaluate(0, ModelPersonalBound, prior, 6, nil, tick)
	if err != nil {
		return nil, err
	}
	for k, e := range bounds {
		b, err := o.personalBound(e, u.post[k])
		if err != nil {
			return nil, fmt.Errorf("user %d: %w", k, err)
		}
		res.Clients[k].Bound = b
		res.Clients[k].TrainError = b.Err
	}
	t3 := nowSeconds()
	res.Timings.Bound = t3 - t2
	o.phase("test")
	if o.TestDraws < 1 {
		return nil, fmt.Errorf("genfl: %d weight draws per test example, want ≥ 1", o.TestDraws)
	}
	tests, err := u.evaluate(0, ModelPersonalTest, nil, 1, u.test, nil)
	if err != nil {
		return nil, err
	}
	for k, e := range tests {
		c, err := count(e, 0)
		if err != nil {
			return nil, fmt.Errorf("user %d: %w", k, err)
		}
		res.Clients[k].TestError = float64(c) / float64(u.test[k]*o.TestDraws)
	}
	res.Timings.Test = nowSeconds() - t3
	return res, nil
}

// forEach runs f(0..n−1) on w goroutines; the first error wins.
func forEach(n, w int, f func(i int) error) error {
	return parallelBlocks(n, w, func() struct{} { return struct{}{} }, func(_ struct{}, i int) error { return f(i) })
}

// Summary of per-client figures: min, mean, max.
type Spread struct{ Min, Mean, Max float64 }

// SpreadOf returns the min, mean and max of xs (NaN for none).
func SpreadOf(xs []float64) Spread {
	if len(xs) == 0 {
		return Spread{math.NaN(), math.NaN(), math.NaN()}
	}
	s := Spread{Min: math.Inf(1), Max: math.Inf(-1)}
	for _, x := range xs {
		s.Min = math.Min(s.Min, x)
		s.Max = math.Max(s.Max, x)
		s.Mean += x
	}
	s.Mean /= float64(len(xs))
	return s
}

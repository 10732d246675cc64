package genfl

import (
	"fmt"
	"math"
	"sync"

	"github.com/pacpfl/pacpfl/data"
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
)

// String is "random" or "learnt".
func (k PriorKind) String() string {
	switch k {
	case RandomPriorKind:
		return "random"
	case LearntPriorKind:
		return "learnt"
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
	Arch       Arch
	Prior      PriorKind
	SigmaPrior float64
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

// prior builds the data-free prior, or learns one on the first halves and
// returns the second halves as the bound's sample.
func (o *Options) prior(train []Client) (*Prior, []Client, error) {
	p0, err := RandomPrior(o.Arch, o.SigmaPrior, stream(o.Seed, tagPrior))
	if err != nil {
		return nil, nil, err
	}
	switch o.Prior {
	case RandomPriorKind:
		return p0, train, nil
	case LearntPriorKind:
		s1 := make([]Client, len(train))
		s2 := make([]Client, len(train))
		for k := range train {
			s1[k], s2[k] = train[k].Split()
			if s1[k].M() == 0 || s2[k].M() == 0 {
				return nil, nil, fmt.Errorf(
					"genfl: user %d has %d examples, too few to split between prior and posterior", k, train[k].M())
			}
		}
		o.phase("prior")
		p, err := LearnPrior(s1, p0, o.SigmaPrior, o.Arch, o.Dropout, o.PriorFed)
		return p, s2, err
	}
	return nil, nil, fmt.Errorf("genfl: unknown prior kind %v", o.Prior)
}

// RunFLSOB is the paper's FL-SOB experiment: prior (data-free, or learnt on
// S¹), GenFL (Alg. 1) on the bound's sample with m = its total size,
// FEDBOUND (Alg. 2) on it, and the Gibbs test error on the users' test
// examples.
func RunFLSOB(train, test []Client, o Options) (*FLSOBResult, error) {
	if err := checkClients(test, o.Arch); err != nil {
		return nil, fmt.Errorf("test examples: %w", err)
	}
	var res FLSOBResult
	t0 := nowSeconds()
	p, s, err := o.prior(train)
	if err != nil {
		return nil, err
	}
	if res.PriorTest, err = MeanError(p.Mu, o.Arch, test); err != nil {
		return nil, err
	}
	t1 := nowSeconds()
	res.Timings.Prior = t1 - t0
	o.phase("posterior")
	q, err := Train(s, p, TotalM(s), o.Arch, o.Objective, o.PosteriorFed)
	if err != nil {
		return nil, err
	}
	t2 := nowSeconds()
	res.Timings.Posterior = t2 - t1
	o.phase("bound")
	if res.Bound, err = FedBound(q, p, o.Arch, s, o.Objective.Delta, o.DeltaPrime, o.MC); err != nil {
		return nil, err
	}
	res.TrainError = res.Bound.Err
	t3 := nowSeconds()
	res.Timings.Bound = t3 - t2
	o.phase("test")
	if res.TestError, _, err = GibbsError(q, o.Arch, test, o.TestDraws, o.Workers, o.Seed); err != nil {
		return nil, err
	}
	if res.MeanTest, err = MeanError(q.Mu, o.Arch, test); err != nil {
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
// and by ERM in its experiments section; ERM is used here (PriorFed).
func RunPFL(train, test []Client, o Options) (*PFLResult, error) {
	if err := checkClients(test, o.Arch); err != nil {
		return nil, fmt.Errorf("test examples: %w", err)
	}
	if len(test) != len(train) {
		return nil, fmt.Errorf("genfl: %d users with training data, %d with test data", len(train), len(test))
	}
	if o.PersonalEpochs < 1 {
		return nil, fmt.Errorf("genfl: %d personalisation epochs, want ≥ 1", o.PersonalEpochs)
	}
	res := &PFLResult{Clients: make([]ClientBound, len(train)), Posteriors: make([]*Posterior, len(train))}
	t0 := nowSeconds()
	p, s, err := o.prior(train)
	if err != nil {
		return nil, err
	}
	res.Prior = p
	if res.PriorTest, err = MeanError(p.Mu, o.Arch, test); err != nil {
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
			o.UserProgress(fl.RoundEvent{Round: done, Rounds: len(s), Value: math.NaN()})
			mu.Unlock()
		}
	}
	err = forEach(len(s), workers, func(k int) error {
		q, err := Personalise(&s[k], k, p, o.Arch, o.Objective, fed)
		res.Posteriors[k] = q
		tick()
		return err
	})
	if err != nil {
		return nil, err
	}
	t2 := nowSeconds()
	res.Timings.Posterior = t2 - t1
	o.phase("bound")
	done = 0
	for k := range s {
		mc := o.ClientMC
		mc.Seed = data.StreamID(tagPBound, o.Seed, uint64(k))
		b, err := FedBound(res.Posteriors[k], p, o.Arch, s[k:k+1], o.Objective.Delta, o.DeltaPrime, mc)
		if err != nil {
			return nil, fmt.Errorf("user %d: %w", k, err)
		}
		res.Clients[k].Bound = b
		res.Clients[k].TrainError = b.Err
		tick()
	}
	t3 := nowSeconds()
	res.Timings.Bound = t3 - t2
	o.phase("test")
	for k := range s {
		g, _, err := GibbsError(res.Posteriors[k], o.Arch, test[k:k+1], o.TestDraws, workers,
			data.StreamID(tagPTest, o.Seed, uint64(k)))
		if err != nil {
			return nil, fmt.Errorf("user %d: %w", k, err)
		}
		res.Clients[k].TestError = g
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

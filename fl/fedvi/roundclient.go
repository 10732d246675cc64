package fedvi

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/fedavg"
	"github.com/pacpfl/pacpfl/fl/internal/fedround"
	"github.com/pacpfl/pacpfl/fl/internal/fedrun"
)

// The groups of a data set's clients (NewClient's and NewFedAvgClient's
// group): the group and the client's index in it name its evaluation
// streams.
const (
	GroupExisting = 0 // participating clients (ds.Existing), in training
	GroupNew      = 1 // non-participating clients (ds.New), never in training
)

// The models a client's Evaluate scores (fl.EvalTask.Model).
const (
	// ModelPersonal is a FedVI client's local classifier, built through P
	// from its whole training set under the server's θ.
	ModelPersonal = 0
	// ModelGlobal is a FedAvg client's score of the global weights.
	ModelGlobal = 0
	// ModelFineTuned is FedAvg+FT: the global weights fine-tuned on the
	// client's training data (FineTune) before scoring.
	ModelFineTuned = 1
)

// client is one FedVI client: Fit is Algorithm 1's ClientUpdate, Evaluate
// personalises through P and scores the test set. It keeps nothing between
// rounds.
type client struct {
	c            *data.ClientData
	o            *Options // validated, Arch with its defaults
	pool         *Pool
	group, index int
}

// NewClient builds FedVI client index of group (GroupExisting or GroupNew)
// from its own data c and the run's options o, as a client process does:
// it computes the same updates and scores as the client of that place in
// Train. A participating client needs at least 2 training examples.
func NewClient(c *data.ClientData, o Options, group, index int) (fl.RoundClient, error) {
	o.Arch = o.Arch.withDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return newClient(c, &o, &Pool{A: o.Arch}, group, index)
}

// newClient is NewClient with validated options and a pool of models that
// the clients of one process share.
func newClient(c *data.ClientData, o *Options, pool *Pool, group, index int) (*client, error) {
	if err := checkClient(c, o.Arch, group, index, 2); err != nil {
		return nil, err
	}
	return &client{c: c, o: o, pool: pool, group: group, index: index}, nil
}

// Fit is ClientUpdate(k, θ = global): θ_k into out. FedVI reports no
// training loss (NaN).
func (k *client) Fit(t fl.RoundTask, global, out []float64) (float64, error) {
	if len(out) != len(global) {
		return math.NaN(), fmt.Errorf("fedvi: an output of %d values for %d parameters", len(out), len(global))
	}
	m, err := k.pool.get()
	if err != nil {
		return math.NaN(), err
	}
	defer k.pool.put(m)
	_, err = m.ClientUpdate(global, out, k.c.X, k.c.Y, k.o, t.Rand())
	return math.NaN(), err
}

// Evaluate scores ModelPersonal under θ = global after t.Round rounds,
// the β draws from the stream (Seed, "fvie", group, t.Round, index).
func (k *client) Evaluate(t fl.EvalTask, global []float64) (fl.ClientEval, error) {
	if t.Model != ModelPersonal || t.Round < 0 {
		return fl.ClientEval{}, fmt.Errorf("fedvi: no model %d after round %d (FedVI's is %d)", t.Model, t.Round,
			ModelPersonal)
	}
	m, err := k.pool.get()
	if err != nil {
		return fl.ClientEval{}, err
	}
	defer k.pool.put(m)
	rng := rand.New(rand.NewPCG(k.o.Seed, data.StreamID(evalStream(k.group, t.Round), uint64(k.index))))
	probs, err := m.predictClient(global, k.c, k.o.EvalDraws, rng)
	if err != nil {
		return fl.ClientEval{}, err
	}
	return fl.ScoreClient(probs, k.c.YTest, k.o.Arch.Classes)
}

// evalStream is the tag of group's evaluation streams after round.
func evalStream(group, round int) uint64 { return data.StreamID(tagEval, uint64(group), uint64(round)) }

// predictClient personalises m through P on c's training set under theta
// and returns its class probabilities on c's test set.
func (m *Model) predictClient(theta []float64, c *data.ClientData, draws int, rng *rand.Rand) ([]float64, error) {
	if err := m.Personalise(theta, c.X); err != nil {
		return nil, err
	}
	return m.Predict(c.XTest, draws, rng)
}

// avgClient is one client of FedAvg on FedVI's network (Plain): Fit is
// o.LocalEpochs epochs of mini-batch SGD, Evaluate scores the global or
// the fine-tuned weights. It keeps nothing between rounds.
type avgClient struct {
	c            *data.ClientData
	local, ft    fedavg.Schedule
	seed         uint64
	classes      int
	pool         *fedrun.Pool[*Plain]
	group, index int
}

// NewFedAvgClient builds client index of group (GroupExisting or GroupNew)
// of FedAvg on FedVI's network (TrainFedAvg) from its own data c, the
// run's options o and fine-tuning ft (Epochs 0: no ModelFineTuned), as a
// client process does: it computes the same updates and scores as the
// client of that place in TrainFedAvg. A participating client needs a
// training example.
func NewFedAvgClient(c *data.ClientData, o Options, ft FineTune, group, index int) (fl.RoundClient, error) {
	o.Arch = o.Arch.withDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if err := ft.validate(); err != nil {
		return nil, err
	}
	a := o.Arch
	return newAvgClient(c, &o, ft, fedrun.NewPool(1, func() (*Plain, error) { return NewPlain(a) }), group, index)
}

// newAvgClient is NewFedAvgClient with validated settings and a pool of
// networks that the clients of one process share.
func newAvgClient(c *data.ClientData, o *Options, ft FineTune, pool *fedrun.Pool[*Plain], group,
	index int) (*avgClient, error) {
	if err := checkClient(c, o.Arch, group, index, 1); err != nil {
		return nil, err
	}
	return &avgClient{c: c, seed: o.Seed, classes: o.Arch.Classes, pool: pool, group: group, index: index,
		local: fedavg.Schedule{Steps: o.LocalEpochs, Batch: o.Batch, LR: o.ClientLR},
		ft:    fedavg.Schedule{Steps: ft.Epochs, Batch: ft.Batch, LR: ft.LR}}, nil
}

// Fit trains the global weights on the client's data; it returns the mean
// mini-batch loss.
func (k *avgClient) Fit(t fl.RoundTask, global, out []float64) (float64, error) {
	if len(out) != len(global) {
		return math.NaN(), fmt.Errorf("fedvi: an output of %d values for %d weights", len(out), len(global))
	}
	p, err := k.pool.Get()
	if err != nil {
		return math.NaN(), err
	}
	defer k.pool.Put(p)
	return p.Train(k.c, global, out, k.local, t.Rand())
}

// Evaluate scores ModelGlobal (global) or ModelFineTuned (global
// fine-tuned on the training data, drawing from the stream (Seed, "favf",
// group, index)) on the client's test set.
func (k *avgClient) Evaluate(t fl.EvalTask, global []float64) (fl.ClientEval, error) {
	if (t.Model != ModelGlobal && t.Model != ModelFineTuned) || t.Round < 0 {
		return fl.ClientEval{}, fmt.Errorf("fedvi: FedAvg has no model %d after round %d", t.Model, t.Round)
	}
	if t.Model == ModelFineTuned && k.ft.Steps < 1 {
		return fl.ClientEval{}, fmt.Errorf("fedvi: FedAvg+FT asked of a client without fine-tuning epochs")
	}
	p, err := k.pool.Get()
	if err != nil {
		return fl.ClientEval{}, err
	}
	defer k.pool.Put(p)
	w := global
	if t.Model == ModelFineTuned {
		w = make([]float64, len(global))
		rng := rand.New(rand.NewPCG(k.seed, data.StreamID(data.StreamID(tagAvgFT, uint64(k.group)), uint64(k.index))))
		if _, err := p.Train(k.c, global, w, k.ft, rng); err != nil {
			return fl.ClientEval{}, fmt.Errorf("fine-tuning: %w", err)
		}
	}
	probs, err := p.Predict(w, k.c.XTest)
	if err != nil {
		return fl.ClientEval{}, err
	}
	return fl.ScoreClient(probs, k.c.YTest, k.classes)
}

// checkClient refuses client data the network a cannot take: not images
// of a's size, labels that are not classes, or (participating) fewer than
// minTrain training examples.
func checkClient(c *data.ClientData, a Arch, group, index, minTrain int) error {
	D := a.InChannels * a.InH * a.InW
	switch {
	case group != GroupExisting && group != GroupNew:
		return fmt.Errorf("fedvi: client group %d, want %d (participating) or %d (new)", group, GroupExisting,
			GroupNew)
	case index < 0:
		return fmt.Errorf("fedvi: client index %d < 0", index)
	case c == nil:
		return fmt.Errorf("fedvi: client %d has no data", index)
	case len(c.X) != len(c.Y)*D || len(c.XTest) != len(c.YTest)*D:
		return fmt.Errorf("fedvi: client %d: %d training and %d test inputs are not %d and %d images of %d pixels",
			index, len(c.X), len(c.XTest), len(c.Y), len(c.YTest), D)
	case group == GroupExisting && c.M() < minTrain:
		return fmt.Errorf("fedvi: participating client %d has %d training examples, needs at least %d", index, c.M(),
			minTrain)
	}
	for _, y := range [][]float64{c.Y, c.YTest} {
		for i, l := range y {
			if !(l >= 0 && l < float64(a.Classes)) || l != math.Trunc(l) {
				return fmt.Errorf("fedvi: client %d: label %v of example %d is not a class 0..%d", index, l, i,
					a.Classes-1)
			}
		}
	}
	return nil
}

// roundClients returns the run's participating and non-participating
// clients: inject's, checked against ds's groups, or nil inject: build's
// over ds's data.
func roundClients(ds *data.Dataset, inject func(existing, new int) ([]fl.RoundClient, []fl.RoundClient, error),
	build func(c *data.ClientData, group, index int) (fl.RoundClient, error)) (ex, nw []fl.RoundClient, err error) {
	if inject != nil {
		if ex, nw, err = inject(len(ds.Existing), len(ds.New)); err != nil {
			return nil, nil, fmt.Errorf("fedvi: the run's clients: %w", err)
		}
		if len(ex) != len(ds.Existing) || len(nw) != len(ds.New) {
			return nil, nil, fmt.Errorf("fedvi: %d participating and %d new clients for a data set of %d and %d",
				len(ex), len(nw), len(ds.Existing), len(ds.New))
		}
		for i, c := range append(ex[:len(ex):len(ex)], nw...) {
			if c == nil {
				return nil, nil, fmt.Errorf("fedvi: client %d of the run is nil", i)
			}
		}
		return ex, nw, nil
	}
	group := func(cs []data.ClientData, g int) ([]fl.RoundClient, error) {
		out := make([]fl.RoundClient, len(cs))
		for i := range cs {
			var err error
			if out[i], err = build(&cs[i], g, i); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	if ex, err = group(ds.Existing, GroupExisting); err != nil {
		return nil, nil, err
	}
	if nw, err = group(ds.New, GroupNew); err != nil {
		return nil, nil, fmt.Errorf("non-participating clients: %w", err)
	}
	return ex, nw, nil
}

// scoreGroup scores model t of every client of a group under global: the
// per-client accuracy and CE and the accuracy weighted by the clients'
// test-set sizes, built from their ClientEvals.
func scoreGroup(clients []fl.RoundClient, t fl.EvalTask, global []float64) (GroupEval, error) {
	evals, err := fedround.Evaluate(clients, t, global)
	if err != nil {
		return GroupEval{}, err
	}
	g := fl.GroupClassMetrics(evals)
	sizes := make([]float64, len(evals))
	for i, e := range evals {
		sizes[i] = float64(e.Tests)
	}
	w, err := fl.WeightedMean(g.Accuracy, sizes)
	if err != nil {
		return GroupEval{}, err
	}
	return GroupEval{ClassGroupMetrics: g, Weighted: w}, nil
}

// evaluateGroups scores model t of both groups under global into one
// round's evaluation (New empty without non-participating clients).
func evaluateGroups(ex, nw []fl.RoundClient, t fl.EvalTask, global []float64) (evaluation, error) {
	r := evaluation{round: fl.NewRoundEval(t.Round)}
	var err error
	if r.existing, err = scoreGroup(ex, t, global); err != nil {
		return r, fmt.Errorf("participating clients: %w", err)
	}
	r.round.ExistingWeighted = r.existing.Weighted
	if len(nw) > 0 {
		if r.new, err = scoreGroup(nw, t, global); err != nil {
			return r, fmt.Errorf("non-participating clients: %w", err)
		}
		r.round.NewWeighted = r.new.Weighted
	}
	return r, nil
}

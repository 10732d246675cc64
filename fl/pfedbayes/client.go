package pfedbayes

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/internal/fedrun"
)

// The groups of clients NewClient builds: the existing clients train and
// are scored on both models, the new ones are only scored on the global
// model.
const (
	GroupExisting = 0
	GroupNew      = 1
)

// The models a client's Evaluate scores (fl.EvalTask.Model); the number is
// also the group slot of the predictive's stream (tagEval, round, model, i).
const (
	ModelPM    = 0 // an existing client's personalised model q_i
	ModelGM    = 1 // the global model w on an existing client's test set
	ModelNewGM = 2 // the global model w on a new client's test set
)

// Init returns v⁰ = (μ⁰, ρ⁰) of o.Seed: the server's first global vector
// and every client's first v_i. A client process computes it from its
// Options alone, without the server.
func Init(o Options) ([]float64, error) {
	o.Arch = o.Arch.WithDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return initial(&o), nil
}

// initial is v⁰ of validated options: μ⁰ ~ N(0, MuInit²) from the stream
// (Seed, tagInit), ρ⁰ constant.
func initial(o *Options) []float64 {
	nw := o.Arch.NumWeights()
	v := make([]float64, 2*nw)
	init := rand.New(rand.NewPCG(o.Seed, tagInit))
	for j := 0; j < nw; j++ {
		v[j] = o.MuInit * init.NormFloat64()
		v[nw+j] = o.Rho0
	}
	return v
}

// client is one pFedBayes client (fl.StatefulClient): its data, and for
// an existing client the state it keeps across rounds.
type client struct {
	data         *data.ClientData
	o            *Options
	pool         *fedrun.Pool[*worker]
	group, index int
	dim          int // the length of v = (μ, ρ), of the global vector
	st           clientState
}

// NewClient builds client index of group (GroupExisting or GroupNew) from
// its own data c and the run's Options, as the in-process run builds it:
// an existing client starts at v_i = v⁰ of o.Seed (Init) with zero Adam
// moments, and the result is an fl.StatefulClient whose state is v_i, the
// Code variant's place in its rows and, with Adam, the moments of both
// optimisers. A new client only answers Evaluate of ModelNewGM and keeps
// no state. Bad options or data (shapes, labels outside 0..classes−1, no
// training rows for an existing client, no test rows) are an error.
func NewClient(c *data.ClientData, o Options, group, index int) (fl.RoundClient, error) {
	o.Arch = o.Arch.WithDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	pool := fedrun.NewPool(1, func() (*worker, error) { return newWorker(o.Arch) })
	return newClient(c, &o, pool, group, index, initial(&o))
}

// newClient is NewClient on validated options, its workers from pool and
// its v_i a copy of v0.
func newClient(c *data.ClientData, o *Options, pool *fedrun.Pool[*worker], group, index int,
	v0 []float64) (*client, error) {
	if err := checkClient(c, o, group, index); err != nil {
		return nil, err
	}
	k := &client{data: c, o: o, pool: pool, group: group, index: index, dim: len(v0)}
	if group == GroupExisting {
		k.st.v = append([]float64(nil), v0...)
		if o.Optimizer == Adam {
			z := func() *adamState { return &adamState{m: make([]float64, len(v0)), s: make([]float64, len(v0))} }
			k.st.adamQ, k.st.adamW = z(), z()
		}
	}
	return k, nil
}

// checkClient refuses data client index of group cannot run on.
func checkClient(c *data.ClientData, o *Options, group, index int) error {
	if group != GroupExisting && group != GroupNew || index < 0 {
		return fmt.Errorf("pfedbayes: client %d of group %d (existing %d, new %d)", index, group, GroupExisting,
			GroupNew)
	}
	who := fmt.Sprintf("pfedbayes: existing client %d", index)
	if group == GroupNew {
		who = fmt.Sprintf("pfedbayes: new client %d", index)
	}
	if c == nil {
		return fmt.Errorf("%s has no data", who)
	}
	d, classes := o.Arch.D(), o.Arch.Classes
	m, mt := len(c.Y), len(c.YTest)
	switch {
	case len(c.X) != m*d || len(c.XTest) != mt*d:
		return fmt.Errorf("%s: %d and %d inputs for %d training and %d test labels of %d features", who,
			len(c.X), len(c.XTest), m, mt, d)
	case group == GroupExisting && m < 1 || mt < 1:
		return fmt.Errorf("%s has %d training and %d test examples", who, m, mt)
	}
	for _, y := range [][]float64{c.Y, c.YTest} {
		for j, l := range y {
			if !(l >= 0 && l < float64(classes)) || l != math.Trunc(l) {
				return fmt.Errorf("%s: label %v of row %d is not a class 0..%d", who, l, j, classes-1)
			}
		}
	}
	return nil
}

// Fit is ClientUpdate(i, vᵗ) of an existing client: R local iterations
// from v_w = global and its own v_i (updated in place), the localised
// global model v_w written into out. It returns the mean over the
// iterations of the data term's cross-entropy.
func (k *client) Fit(t fl.RoundTask, global, out []float64) (float64, error) {
	if k.group != GroupExisting {
		return 0, fmt.Errorf("pfedbayes: new client %d does not train", k.index)
	}
	if n := k.dim; len(global) != n || len(out) != n {
		return 0, fmt.Errorf("pfedbayes: client %d: global of %d and update of %d values, the model has %d", k.index,
			len(global), len(out), n)
	}
	w, err := k.pool.Get()
	if err != nil {
		return 0, err
	}
	defer k.pool.Put(w)
	if err := w.clientUpdate(k.data, &k.st, global, out, k.o, t.Rand()); err != nil {
		return 0, err
	}
	return w.loss, nil
}

// Evaluate scores model t.Model (ModelPM, ModelGM for an existing client,
// ModelNewGM for a new one) on the client's test set: the predictive of
// EvalDraws weight draws from the stream (Seed, tagEval, t.Round, t.Model,
// index), or of the mean μ.
func (k *client) Evaluate(t fl.EvalTask, global []float64) (fl.ClientEval, error) {
	if n := k.dim; len(global) != n {
		return fl.ClientEval{}, fmt.Errorf("pfedbayes: client %d: global of %d values, the model has %d", k.index,
			len(global), n)
	}
	v := global
	switch {
	case k.group == GroupExisting && t.Model == ModelPM:
		v = k.st.v
	case k.group == GroupExisting && t.Model == ModelGM, k.group == GroupNew && t.Model == ModelNewGM:
	default:
		return fl.ClientEval{}, fmt.Errorf("pfedbayes: client %d of group %d has no model %d", k.index, k.group,
			t.Model)
	}
	if t.Round < 0 {
		return fl.ClientEval{}, fmt.Errorf("pfedbayes: client %d: round %d", k.index, t.Round)
	}
	w, err := k.pool.Get()
	if err != nil {
		return fl.ClientEval{}, err
	}
	defer k.pool.Put(w)
	rng := rand.New(rand.NewPCG(k.o.Seed, data.StreamID(tagEval, uint64(t.Round), uint64(t.Model),
		uint64(k.index))))
	probs, err := w.predict(v, k.data.XTest, k.o.EvalDraws, k.o.NoiseStd, rng)
	if err != nil {
		return fl.ClientEval{}, err
	}
	return fl.ScoreClient(probs, k.data.YTest, k.o.Arch.Classes)
}

// The state's layout: v_i (2·nw), then with the Code variant the next row
// of its cursor, then with Adam the personalised optimiser's first and
// second moments (2·nw each) and step count, and the same of the localised
// global one. A new client's state is empty.

// stateLen is the length of the client's state.
func (k *client) stateLen() int {
	if k.group != GroupExisting {
		return 0
	}
	n := k.dim
	if k.o.Variant == Code {
		n++
	}
	if k.o.Optimizer == Adam {
		n += 2 * (2*k.dim + 1)
	}
	return n
}

// AppendState appends the client's state (v_i, the Code variant's row
// cursor, Adam's moments and step counts) to dst.
func (k *client) AppendState(dst []float64) []float64 {
	if k.group != GroupExisting {
		return dst
	}
	dst = append(dst, k.st.v...)
	if k.o.Variant == Code {
		dst = append(dst, float64(k.st.rows.next))
	}
	if k.o.Optimizer == Adam {
		for _, a := range []*adamState{k.st.adamQ, k.st.adamW} {
			dst = append(append(append(dst, a.m...), a.s...), float64(a.t))
		}
	}
	return dst
}

// SetState replaces the client's state by s (AppendState's layout),
// refusing the wrong length, a non-finite entry, a negative second moment,
// or a row cursor or step count that is not a count in range.
func (k *client) SetState(s []float64) error {
	if n := k.stateLen(); len(s) != n {
		return fmt.Errorf("pfedbayes: client %d: state of %d values, want %d", k.index, len(s), n)
	}
	for j, v := range s {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("pfedbayes: client %d: state entry %d is %v", k.index, j, v)
		}
	}
	if k.group != GroupExisting {
		return nil
	}
	count := func(what string, v float64, hi float64) error {
		if !(v >= 0 && v <= hi) || v != math.Trunc(v) {
			return fmt.Errorf("pfedbayes: client %d: %s %v is not a count in [0, %g]", k.index, what, v, hi)
		}
		return nil
	}
	d := k.dim
	rest := s[d:]
	next := 0
	if k.o.Variant == Code {
		if err := count("the row cursor", rest[0], float64(k.data.M())); err != nil {
			return err
		}
		next, rest = int(rest[0]), rest[1:]
	}
	if k.o.Optimizer == Adam {
		for q := 0; q < 2; q++ {
			a := rest[q*(2*d+1):]
			for j, v := range a[d : 2*d] {
				if v < 0 {
					return fmt.Errorf("pfedbayes: client %d: Adam's second moment %d is %v", k.index, j, v)
				}
			}
			if err := count("Adam's step count", a[2*d], 1<<53); err != nil {
				return err
			}
		}
	}
	copy(k.st.v, s[:d])
	k.st.rows.next = next
	if k.o.Optimizer == Adam {
		for q, a := range []*adamState{k.st.adamQ, k.st.adamW} {
			r := rest[q*(2*d+1):]
			copy(a.m, r[:d])
			copy(a.s, r[d:2*d])
			a.t = int(r[2*d])
		}
	}
	return nil
}

package fedvi

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
)

// method is Train or TrainFedAvg (with fine-tuning) as the tests below run
// them: its results, its clients and its server's step.
type method struct {
	name string
	// run returns the run's results (TrainFedAvg: FedAvg and FedAvg+FT).
	run    func(ds *data.Dataset, o Options) ([]*Result, error)
	client func(c *data.ClientData, o Options, group, index int) (fl.RoundClient, error)
	weight func(c *data.ClientData, o Options) float64 // n_k
	// step is the server's step from θ and v (updated in place) and the
	// mean of the clients' outputs.
	step func(o Options, theta, vel, mean []float64)
}

func methods() []method {
	ft := FineTune{Epochs: 1, Batch: 16, LR: 0.05}
	return []method{{
		name: "FedVI",
		run: func(ds *data.Dataset, o Options) ([]*Result, error) {
			r, err := Train(ds, o)
			return []*Result{r}, err
		},
		client: NewClient,
		weight: func(c *data.ClientData, o Options) float64 {
			return float64(QueryCount(c.M(), o.Batch, o.LocalEpochs))
		},
		step: func(o Options, theta, vel, mean []float64) {
			for j, th := range theta {
				vel[j] = o.Momentum*vel[j] - o.ServerLR*(th-mean[j])
				theta[j] = th + vel[j]
			}
		},
	}, {
		name: "FedAvg",
		run: func(ds *data.Dataset, o Options) ([]*Result, error) {
			p, f, err := TrainFedAvg(ds, o, ft)
			return []*Result{p, f}, err
		},
		client: func(c *data.ClientData, o Options, group, index int) (fl.RoundClient, error) {
			return NewFedAvgClient(c, o, ft, group, index)
		},
		weight: func(c *data.ClientData, _ Options) float64 { return float64(c.M()) },
		step: func(o Options, theta, vel, mean []float64) {
			for j, th := range theta {
				vel[j] = o.Momentum*vel[j] + o.ServerLR*(mean[j]-th)
				theta[j] = th + vel[j]
			}
		},
	}}
}

// keep returns a Checkpoint.AfterRound that appends a copy of every state
// to states.
func keep(states *[]*fl.RoundState) func(*fl.RoundState) error {
	return func(st *fl.RoundState) error {
		c := *st
		c.Global, c.Server, c.History = slices.Clone(st.Global), slices.Clone(st.Server), slices.Clone(st.History)
		*states = append(*states, &c)
		return nil
	}
}

// TestResumeBitIdentical: a run resumed from the state after any round
// (none, one before the evaluated rounds, one among them, the last) ends
// with the uninterrupted run's Result bit for bit, and saves the same
// states after the rounds it runs; states that do not fit the run are
// refused.
func TestResumeBitIdentical(t *testing.T) {
	ds := synthetic(t, 5, 2, 3)
	for _, m := range methods() {
		o := tinyOptions()
		o.Rounds, o.ClientsPerRound, o.EvalLast, o.EvalDraws = 5, 3, 3, 2
		var states []*fl.RoundState
		o.Checkpoint.AfterRound = keep(&states)
		want, err := m.run(ds, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(states) != o.Rounds || len(want[0].History) != o.EvalLast {
			t.Fatalf("%s: %d states and %d evaluations, want %d and %d", m.name, len(states),
				len(want[0].History), o.Rounds, o.EvalLast)
		}
		for i, st := range states {
			if st.Round != i+1 || len(st.Server) != len(st.Global) {
				t.Fatalf("%s: state %d is after round %d with a server state of %d values", m.name, i, st.Round,
					len(st.Server))
			}
		}
		init := o
		init.Rounds, init.EvalLast, init.Checkpoint = 0, 0, fl.RoundCheckpoint{}
		r0, err := m.run(ds, init)
		if err != nil {
			t.Fatal(err)
		}
		// The state before the first round: θ⁽⁰⁾ (a run of no rounds), v = 0.
		states = append([]*fl.RoundState{{Global: r0[0].Theta, Server: make([]float64, len(r0[0].Theta))}},
			states...)
		all := states
		for _, k := range []int{0, 1, 3, 5} {
			states = nil
			o.Checkpoint.Resume = all[k]
			got, err := m.run(ds, o)
			if err != nil {
				t.Fatalf("%s resumed after round %d: %v", m.name, k, err)
			}
			if !bitsEqual(reflect.ValueOf(want), reflect.ValueOf(got)) {
				t.Errorf("%s resumed after round %d: the result differs from the uninterrupted run's", m.name, k)
			}
			if !bitsEqual(reflect.ValueOf(all[k+1:]), reflect.ValueOf(states)) {
				t.Errorf("%s resumed after round %d: the states saved differ from the uninterrupted run's",
					m.name, k)
			}
		}
		st := all[3]
		for name, bad := range map[string]fl.RoundState{
			"after round 6":      {Round: 6, Global: st.Global, Server: st.Server},
			"after round −1":     {Round: -1, Global: st.Global, Server: st.Server},
			"short θ":            {Round: 3, Global: st.Global[1:], Server: st.Server, History: st.History},
			"no momentum":        {Round: 3, Global: st.Global, History: st.History},
			"NaN in v":           {Round: 3, Global: st.Global, Server: nanAt(st.Server, 2), History: st.History},
			"a missing eval":     {Round: 4, Global: st.Global, Server: st.Server, History: st.History},
			"an extra eval":      {Round: 2, Global: st.Global, Server: st.Server, History: st.History},
			"another run's eval": {Round: 3, Global: st.Global, Server: st.Server, History: relabel(st.History, 2)},
		} {
			o.Checkpoint.Resume = &bad
			if _, err := m.run(ds, o); err == nil || !strings.Contains(err.Error(), "checkpoint") {
				t.Errorf("%s resumed from a state %s: %v", m.name, name, err)
			}
		}
		// A checkpoint that cannot be saved ends the run with its error.
		o.Checkpoint = fl.RoundCheckpoint{AfterRound: func(*fl.RoundState) error { return errors.New("disk full") }}
		if _, err := m.run(ds, o); err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Errorf("%s: a failing checkpoint: %v", m.name, err)
		}
	}
}

func nanAt(xs []float64, i int) []float64 {
	xs = slices.Clone(xs)
	xs[i] = math.NaN()
	return xs
}

// relabel is h with its first evaluation's round set to round.
func relabel(h []fl.RoundEval, round int) []fl.RoundEval {
	h = slices.Clone(h)
	h[0].Round = round
	return h
}

// flaky is a participating client that, in round `round` (0-based), fails
// after writing NaN into its output (fail) or returns a far-off update
// (outlier); other rounds' outputs it keeps in outs[index].
type flaky struct {
	fl.RoundClient
	index, round int
	outlier      bool
	outs         [][]float64
}

func (f flaky) Fit(t fl.RoundTask, global, out []float64) (float64, error) {
	loss, err := f.RoundClient.Fit(t, global, out)
	switch {
	case t.Round != f.round:
	case f.index == 1 && f.outlier:
		for j := range out {
			out[j] += 1e3
		}
	case f.index == 1:
		for j := range out {
			out[j] = math.NaN()
		}
		return loss, errors.New("connection lost")
	default:
		f.outs[f.index] = slices.Clone(out)
	}
	return loss, err
}

// TestQuorum: client 1 fails in round 2 (its output NaN). With a quorum
// the run completes without its update: OnDrop hears it, and the round's
// step is the server's step from the size-weighted mean of the other
// clients' updates, their weights renormalised; an update far from the
// others' is rejected with MaxNormFactor, the same round as if it had
// failed. Without a quorum the run ends with the client's error.
func TestQuorum(t *testing.T) {
	ds := synthetic(t, 5, 1, 3)
	for _, m := range methods() {
		o := tinyOptions()
		o.Rounds, o.ClientsPerRound, o.EvalLast, o.EvalDraws = 3, 0, 1, 0
		outs := make([][]float64, len(ds.Existing))
		inject := func(outlier bool) func(int, int) ([]fl.RoundClient, []fl.RoundClient, error) {
			return func(int, int) (ex, nw []fl.RoundClient, err error) {
				for g, cs := range [][]data.ClientData{ds.Existing, ds.New} {
					for i := range cs {
						c, err := m.client(&cs[i], o, g, i)
						if err != nil {
							return nil, nil, err
						}
						if g == GroupExisting {
							ex = append(ex, flaky{RoundClient: c, index: i, round: 1, outlier: outlier, outs: outs})
						} else {
							nw = append(nw, c)
						}
					}
				}
				return ex, nw, nil
			}
		}
		o.Clients = inject(false)
		var states []*fl.RoundState
		o.Checkpoint.AfterRound = keep(&states)
		if _, err := m.run(ds, o); err == nil || !strings.Contains(err.Error(), "connection lost") ||
			len(states) != 1 {
			t.Errorf("%s without a quorum: %v after %d rounds", m.name, err, len(states))
		}

		states = nil
		var drops []string
		o.Quorum = 4
		o.OnDrop = func(round, client int, err error) {
			drops = append(drops, fmt.Sprintf("%d/%d: %v", round, client, err))
		}
		failed, err := m.run(ds, o)
		if err != nil {
			t.Fatalf("%s with a quorum of 4: %v", m.name, err)
		}
		if len(drops) != 1 || drops[0] != "2/1: connection lost" {
			t.Errorf("%s: OnDrop heard %q", m.name, drops)
		}
		// Round 2's step by hand from the state after round 1.
		theta, vel := slices.Clone(states[0].Global), slices.Clone(states[0].Server)
		mean := make([]float64, len(theta))
		total := 0.0
		for k := range ds.Existing {
			if k != 1 {
				total += m.weight(&ds.Existing[k], o)
			}
		}
		for k, out := range outs {
			if k == 1 {
				continue
			}
			f := m.weight(&ds.Existing[k], o) / total
			for j, v := range out {
				mean[j] += f * v
			}
		}
		m.step(o, theta, vel, mean)
		for j, th := range states[1].Global {
			if math.IsNaN(th) || math.Abs(th-theta[j]) > 1e-9*math.Max(1, math.Abs(th)) {
				t.Fatalf("%s: θ_%d after the round without client 1 is %v, by hand %v", m.name, j, th, theta[j])
			}
		}

		// A far-off update is rejected: the same run as with it failed.
		drops, states = nil, nil
		o.Clients, o.MaxNormFactor = inject(true), 10
		rejected, err := m.run(ds, o)
		if err != nil {
			t.Fatalf("%s with an outlier: %v", m.name, err)
		}
		if len(drops) != 1 || !strings.HasPrefix(drops[0], "2/1: update rejected") {
			t.Errorf("%s: OnDrop heard %q", m.name, drops)
		}
		if !bitsEqual(reflect.ValueOf(failed), reflect.ValueOf(rejected)) {
			t.Errorf("%s: the run with an outlier rejected differs from the one with the client failed", m.name)
		}

		o.Quorum = 5
		o.Clients, o.MaxNormFactor = inject(false), 0
		if _, err := m.run(ds, o); err == nil || !strings.Contains(err.Error(), "quorum 5") {
			t.Errorf("%s: 4 of 5 clients with a quorum of 5: %v", m.name, err)
		}
	}
	o := tinyOptions()
	for _, d := range []struct {
		q int
		f float64
	}{{-1, 0}, {0, 2}, {2, -1}, {2, math.NaN()}, {2, math.Inf(1)}} {
		o.Quorum, o.MaxNormFactor = d.q, d.f
		if _, err := Train(ds, o); err == nil || !strings.Contains(err.Error(), "quorum") {
			t.Errorf("quorum %d, norm factor %v: %v", d.q, d.f, err)
		}
	}
}

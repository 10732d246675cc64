package fedavg

import (
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pacpfl/pacpfl/asm/asmtest"
	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
)

// remote stands for a client in another process: every call builds a
// fresh client with NewClient from the client's own data, sees copies of
// the vectors only, and draws from (Seed, Stream), never the caller's RNG.
type remote struct {
	t            *testing.T
	c            *data.ClientData
	o            Options
	group, index int
	fits         *atomic.Int64
}

func (r remote) client() fl.RoundClient {
	k, err := NewClient(r.c, r.o, r.group, r.index)
	if err != nil {
		r.t.Fatal(err)
	}
	return k
}

func (r remote) Fit(t fl.RoundTask, global, out []float64) (float64, error) {
	r.fits.Add(1)
	t.RNG = nil
	o := make([]float64, len(out))
	loss, err := r.client().Fit(t, append([]float64(nil), global...), o)
	copy(out, o)
	return loss, err
}

func (r remote) Evaluate(t fl.EvalTask, global []float64) (fl.ClientEval, error) {
	return r.client().Evaluate(t, append([]float64(nil), global...))
}

// A run whose clients are remote ones built by NewClient is bit-identical
// to the in-process run: every weight, evaluation and fine-tuned score.
func TestRemoteClientsBitIdentical(t *testing.T) {
	ds := data.Blobs(4, 30, 20, 3)
	for _, mu := range []float64{0, 0.3} {
		o := DefaultOptions()
		o.Arch, o.Rounds, o.LocalSteps, o.Batch, o.ClientsPerRound = tinyArch, 5, 3, 8, 3
		o.EvalLast, o.FineTune, o.Seed, o.LR, o.Mu = 2, 3, 11, 0.1, mu
		want, err := Run(ds, o)
		if err != nil {
			t.Fatal(err)
		}
		var fits atomic.Int64
		o.Clients = func(ne, nn int) (ex, nw []fl.RoundClient, err error) {
			for g, group := range [][]data.ClientData{ds.Existing, ds.New} {
				for i := range group {
					r := remote{t: t, c: &group[i], o: o, group: g, index: i, fits: &fits}
					if g == GroupExisting {
						ex = append(ex, r)
					} else {
						nw = append(nw, r)
					}
				}
			}
			return ex, nw, nil
		}
		got, err := Run(ds, o)
		if err != nil {
			t.Fatal(err)
		}
		if n := fits.Load(); n != int64(o.Rounds*o.ClientsPerRound) {
			t.Fatalf("μ = %g: %d remote updates, want %d", mu, n, o.Rounds*o.ClientsPerRound)
		}
		// %v prints every float exactly (shortest round trip), NaN as NaN.
		values := func(r *Result) string {
			return asmtest.Digest(r.Global, r.History, r.BestGM, r.GM, *r.NewGM, *r.FT, *r.NewFT)
		}
		if values(got) != values(want) {
			t.Errorf("μ = %g: the run with remote clients differs from the in-process run", mu)
		}
	}
}

// NewClient refuses bad data and settings with an error; a client refuses
// vectors of the wrong size and models it does not have.
func TestNewClientErrors(t *testing.T) {
	ds := data.Blobs(2, 10, 5, 2)
	o := DefaultOptions()
	o.Arch = tinyArch
	bad := ds.Existing[0]
	bad.X = bad.X[:len(bad.X)-1]
	for name, f := range map[string]func() error{
		"ragged rows": func() error { _, err := NewClient(&bad, o, GroupExisting, 0); return err },
		"no data":     func() error { _, err := NewClient(nil, o, GroupExisting, 0); return err },
		"group":       func() error { _, err := NewClient(&ds.Existing[0], o, 7, 0); return err },
		"settings": func() error {
			p := o
			p.LR = math.NaN()
			_, err := NewClient(&ds.Existing[0], p, GroupExisting, 0)
			return err
		},
	} {
		if err := f(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	k, err := NewClient(&ds.Existing[0], o, GroupExisting, 0)
	if err != nil {
		t.Fatal(err)
	}
	d := tinyArch.NumWeights()
	if _, err := k.Fit(fl.RoundTask{}, make([]float64, d+1), make([]float64, d+1)); err == nil {
		t.Error("Fit accepted global weights of the wrong size")
	}
	if _, err := k.Evaluate(fl.EvalTask{Model: 9}, make([]float64, d)); err == nil ||
		!strings.Contains(err.Error(), "no model 9") {
		t.Errorf("Evaluate of model 9: %v", err)
	}
	o.FineTune = 0
	k, _ = NewClient(&ds.Existing[0], o, GroupExisting, 0)
	if _, err := k.Evaluate(fl.EvalTask{Model: EvalFineTuned}, make([]float64, d)); err == nil {
		t.Error("a client without fine-tuning scored a fine-tuned model")
	}
}

// A run resumed from the state after any round (none, some, all) ends
// with the uninterrupted run's weights and scores; a state that does not
// fit the run is refused.
func TestResumeBitIdentical(t *testing.T) {
	ds := data.Blobs(4, 30, 20, 3)
	o := DefaultOptions()
	o.Arch, o.Rounds, o.LocalSteps, o.Batch, o.ClientsPerRound = tinyArch, 5, 3, 8, 3
	o.EvalLast, o.FineTune, o.Seed, o.LR = 3, 3, 11, 0.1
	states := []*fl.RoundState{{Round: 0}}
	o.Checkpoint.AfterRound = func(st *fl.RoundState) error {
		c := *st
		c.Global, c.History = append([]float64(nil), st.Global...), append([]fl.RoundEval(nil), st.History...)
		states = append(states, &c)
		return nil
	}
	want, err := Run(ds, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(states) != o.Rounds+1 {
		t.Fatalf("%d states saved, want %d", len(states)-1, o.Rounds)
	}
	states[0].Global = make([]float64, len(want.Global))
	w0, _ := Run(ds, Options{Arch: o.Arch, LR: o.LR, Batch: 1, LocalSteps: 1, ClientsPerRound: 1, EvalLast: 1,
		Seed: o.Seed})
	copy(states[0].Global, w0.Global) // the initial weights: a run of no rounds
	values := func(r *Result) string {
		return asmtest.Digest(r.Global, r.History, r.BestGM, r.GM, *r.NewGM, *r.FT, *r.NewFT)
	}
	o.Checkpoint.AfterRound = nil
	for _, k := range []int{0, 2, 4, 5} {
		o.Checkpoint.Resume = states[k]
		got, err := Run(ds, o)
		if err != nil {
			t.Fatal(err)
		}
		if values(got) != values(want) {
			t.Errorf("resumed after round %d: the result differs from the uninterrupted run", k)
		}
	}
	for _, bad := range []fl.RoundState{{Round: 6, Global: states[2].Global}, {Round: 2, Global: []float64{1}},
		{Round: 2, Global: states[2].Global, Server: []float64{1}}} {
		o.Checkpoint.Resume = &bad
		if _, err := Run(ds, o); err == nil {
			t.Errorf("resumed from %+v", bad)
		}
	}
}

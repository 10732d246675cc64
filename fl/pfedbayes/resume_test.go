package pfedbayes

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/fedavg"
	"github.com/pacpfl/pacpfl/fl/internal/fedrun"
)

// liveClients are NewClient's clients over ds, kept by the test across
// runs as client processes keep their state, and Options.Clients handing
// them out.
func liveClients(t *testing.T, ds *data.Dataset, o Options) (
	func(int, int) ([]fl.RoundClient, []fl.RoundClient, error), []fl.RoundClient) {
	t.Helper()
	var ex, nc []fl.RoundClient
	for g, group := range [][]data.ClientData{ds.Existing, ds.New} {
		for i := range group {
			k, err := NewClient(&group[i], o, g, i)
			if err != nil {
				t.Fatal(err)
			}
			if g == GroupExisting {
				ex = append(ex, k)
			} else {
				nc = append(nc, k)
			}
		}
	}
	return func(int, int) ([]fl.RoundClient, []fl.RoundClient, error) { return ex, nc, nil }, ex
}

func copyState(st *fl.RoundState) *fl.RoundState {
	c := *st
	c.Global, c.History = slices.Clone(st.Global), slices.Clone(st.History)
	return &c
}

var errStop = errors.New("stopped for the test")

// A run stopped after round k (none, some, all) and resumed from its
// checkpoint with the same clients ends with the uninterrupted run's
// result bit for bit, the clients' states included, on both variants and
// optimisers; a checkpoint that does not fit the run is refused, and so is
// resuming in-process clients after round k > 0.
func TestResumeBitIdentical(t *testing.T) {
	ds := data.Blobs(4, 30, 20, 2)
	ds.Existing[1].X, ds.Existing[1].Y = ds.Existing[1].X[:10*2], ds.Existing[1].Y[:10] // unequal sizes
	eachVariant(t, func(t *testing.T, v Variant, opt Optimizer, o Options) {
		o.Arch, o.Batch, o.LocalSteps, o.Rounds, o.ClientsPerRound, o.EvalLast, o.Seed = tinyArch, 8, 3, 4, 2,
			3, 7
		o.Optimizer, o.EvalDraws, o.LR1, o.LR2, o.Beta = opt, 2, 0.01, 0.01, 0.7
		if v == Code && opt == SGD {
			o.LR1, o.LR2 = 1e-4, 1e-4 // the summed likelihood's steps are larger
		}
		saved := 0
		o.Checkpoint.AfterRound = func(st *fl.RoundState) error {
			if saved++; st.Round != saved || st.Server != nil {
				return fmt.Errorf("state of round %d (server %v) after %d rounds", st.Round, st.Server, saved)
			}
			return nil
		}
		want, err := Run(ds, o)
		if err != nil {
			t.Fatal(err)
		}
		if saved != o.Rounds {
			t.Fatalf("%d states saved in %d rounds", saved, o.Rounds)
		}
		nw := 2 * tinyArch.NumWeights()
		wantClients := want.Clients
		want.Clients, want.Seconds, want.TrainSeconds = nil, 0, 0
		for _, k := range []int{0, 2, o.Rounds} {
			clients, live := liveClients(t, ds, o)
			b := o
			b.Clients = clients
			var st *fl.RoundState
			b.Checkpoint.AfterRound = func(s *fl.RoundState) error {
				if s.Round == k {
					st = copyState(s)
					return errStop
				}
				return nil
			}
			if k == 0 {
				v0, err := Init(o)
				if err != nil {
					t.Fatal(err)
				}
				st = &fl.RoundState{Global: v0}
			} else if _, err := Run(ds, b); !errors.Is(err, errStop) {
				t.Fatalf("k = %d: the run was not stopped: %v", k, err)
			}
			if st == nil || st.Round != k {
				t.Fatalf("k = %d: no state of round %d", k, k)
			}
			c := o
			c.Clients, c.Checkpoint = clients, fl.RoundCheckpoint{Resume: st}
			got, err := Run(ds, c)
			if err != nil {
				t.Fatal(err)
			}
			got.Seconds, got.TrainSeconds = 0, 0
			if err := bitEqual(reflect.ValueOf(want), reflect.ValueOf(got), "Result"); err != nil {
				t.Errorf("resumed after round %d: %v", k, err)
			}
			for i, l := range live {
				s := l.(fl.StatefulClient).AppendState(nil)[:nw]
				if err := bitEqual(reflect.ValueOf(wantClients[i]), reflect.ValueOf(s), "v_i"); err != nil {
					t.Errorf("resumed after round %d, client %d: %v", k, i, err)
				}
			}
		}
		o.Checkpoint.AfterRound = nil
		inf := slices.Clone(want.Global)
		inf[3] = math.Inf(1)
		clients, _ := liveClients(t, ds, o)
		for _, bad := range []fl.RoundState{{Round: 5, Global: want.Global}, {Round: 2, Global: []float64{1}},
			{Round: 2, Global: want.Global, Server: []float64{1}}, {Round: 2, Global: inf},
			{Round: -1, Global: want.Global}} {
			c := o
			c.Clients, c.Checkpoint.Resume = clients, &bad
			if _, err := Run(ds, c); err == nil || !strings.Contains(err.Error(), "checkpoint") {
				t.Errorf("resumed from round %d of %d values: %v", bad.Round, len(bad.Global), err)
			}
		}
		o.Checkpoint.Resume = &fl.RoundState{Round: 2, Global: want.Global}
		if _, err := Run(ds, o); err == nil || !strings.Contains(err.Error(), "in-process clients") {
			t.Errorf("in-process clients resumed after round 2: %v", err)
		}
	})
}

// flaky is a client whose Fit fails in round failAt (0-based; −1: never)
// and that keeps a copy of every update it returned, by round.
type flaky struct {
	fl.RoundClient
	failAt int
	outs   map[int][]float64
}

func (f *flaky) Fit(t fl.RoundTask, global, out []float64) (float64, error) {
	if t.Round == f.failAt {
		return 0, errors.New("dropped")
	}
	loss, err := f.RoundClient.Fit(t, global, out)
	f.outs[t.Round] = slices.Clone(out)
	return loss, err
}

// With a quorum, a round goes on without a client whose Fit failed: the
// server's v is (1 − β) v + β × the mean over the clients it hears that
// answered (Paper: plain, over the heard ones; Code: size-weighted over
// the selected ones), built here by hand from the updates the clients
// returned; OnDrop hears the client. Without a quorum, or with one the
// round misses, the same failure ends the run.
func TestQuorumLeavesOutFailedClient(t *testing.T) {
	ds := data.Blobs(5, 30, 20, 1)
	for i := range ds.Existing {
		m := 12 + 4*i // unequal sizes: the Code variant's weights
		ds.Existing[i].X, ds.Existing[i].Y = ds.Existing[i].X[:m*2], ds.Existing[i].Y[:m]
	}
	const round = 1 // the round (0-based) the client fails in
	for _, v := range []Variant{Paper, Code} {
		t.Run(v.String(), func(t *testing.T) {
			o := DefaultOptions()
			if v == Code {
				o = CodeOptions()
			}
			o.Arch, o.Batch, o.LocalSteps, o.Rounds, o.ClientsPerRound, o.EvalLast, o.Seed = tinyArch, 8, 3, 2, 3, 1,
				9
			o.LR1, o.LR2, o.Beta = 0.01, 0.01, 0.6
			n := len(ds.Existing)
			// The round's clients in the order the server sums them, and the
			// slots it hears (fedrun's draws).
			train := o.ClientsPerRound
			if v == Paper {
				train = n
			}
			chosen, err := fedrun.NewUniform(n, train, o.Seed, tagRound).Select(round)
			if err != nil {
				t.Fatal(err)
			}
			chosen = slices.Clone(chosen)
			heard := make([]int, len(chosen))
			for s := range heard {
				heard[s] = s
			}
			if v == Paper {
				agg := rand.New(rand.NewPCG(o.Seed, data.StreamID(tagRound, 0x616767, round)))
				heard = agg.Perm(n)[:o.ClientsPerRound]
				slices.Sort(heard)
			}
			bad := chosen[heard[1]] // a client the server hears
			run := func(d fedavg.Drops) (*Result, []*flaky, []float64, error) {
				clients, live := liveClients(t, ds, o)
				ks := make([]*flaky, n)
				for i, l := range live {
					ks[i] = &flaky{RoundClient: l, failAt: -1, outs: map[int][]float64{}}
					live[i] = ks[i]
				}
				ks[bad].failAt = round
				var before []float64 // v after the round before
				r := o
				r.Drops, r.Clients = d, clients
				r.Checkpoint.AfterRound = func(st *fl.RoundState) error {
					if st.Round == round {
						before = slices.Clone(st.Global)
					}
					return nil
				}
				res, err := Run(ds, r)
				return res, ks, before, err
			}
			var drops []string
			res, ks, before, err := run(fedavg.Drops{Quorum: 2, OnDrop: func(r, c int, err error) {
				drops = append(drops, fmt.Sprintf("%d/%d/%v", r, c, err))
			}})
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{fmt.Sprintf("%d/%d/dropped", round+1, bad)}; !slices.Equal(drops, want) {
				t.Errorf("OnDrop heard %q, want %q", drops, want)
			}
			expect := func(without int) []float64 {
				var slots []int
				total := 0.0
				for _, s := range heard {
					if i := chosen[s]; i != without {
						slots = append(slots, s)
						total += weight(v, ds, i)
					}
				}
				mean := make([]float64, len(before))
				for _, s := range slots {
					i := chosen[s]
					f := weight(v, ds, i) / total
					for j, x := range ks[i].outs[round] {
						mean[j] += f * x
					}
				}
				g := slices.Clone(before)
				for j, x := range g {
					g[j] = (1-o.Beta)*x + o.Beta*mean[j]
				}
				return g
			}
			if err := bitEqual(reflect.ValueOf(res.Global), reflect.ValueOf(expect(bad)), "v"); err != nil {
				t.Errorf("v after the round without client %d: %v", bad, err)
			}
			ks[bad].outs[round] = slices.Clone(before) // what it would have sent, had it trained from v
			if reflect.DeepEqual(res.Global, expect(-1)) {
				t.Error("the expectation does not depend on the client left out")
			}
			_, _, _, err = run(fedavg.Drops{})
			if want := fmt.Sprintf("round %d, client %d: dropped", round+1, bad); err == nil ||
				!strings.Contains(err.Error(), want) {
				t.Errorf("without a quorum: %v, want %q", err, want)
			}
			_, _, _, err = run(fedavg.Drops{Quorum: train})
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("quorum %d", train)) {
				t.Errorf("a quorum of all %d: %v", train, err)
			}
		})
	}
}

// weight is client i's weight in the server's mean: the Paper variant's
// plain mean, the Code variant's data size.
func weight(v Variant, ds *data.Dataset, i int) float64 {
	if v == Code {
		return float64(ds.Existing[i].M())
	}
	return 1
}

// Drops' settings out of range are refused.
func TestBadDrops(t *testing.T) {
	for _, d := range []fedavg.Drops{{Quorum: -1}, {MaxNormFactor: 2}, {Quorum: 1, MaxNormFactor: math.NaN()},
		{Quorum: 1, MaxNormFactor: -1}, {Quorum: 1, MaxNormFactor: math.Inf(1)}} {
		o := DefaultOptions()
		o.Drops = d
		if err := o.Validate(); err == nil {
			t.Errorf("%+v accepted", d)
		}
	}
}

package rpc

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pacpfl/pacpfl/asm/asmtest"
	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/fedavg"
	"github.com/pacpfl/pacpfl/lml"
)

var tinyMLP = lml.BNN{Arch: lml.ArchMLP, InC: 1, InH: 1, InW: 2, Hidden: 4, Classes: 2}

// peerNet serves n remote clients built by newClient(id) and returns the
// coordinator once all have joined.
func peerNet(t *testing.T, n, dim int, kind string, newClient func(id int) (fl.RoundClient, error),
	state func(id int) string) *testNet {
	t.Helper()
	tn := startNet(t, ServerConfig{Clients: n, ModelKind: kind, Dim: dim, RoundTimeout: time.Minute})
	cfgs := make([]ClientConfig, n)
	for i := range cfgs {
		cfgs[i] = ClientConfig{ID: i, ModelKind: kind, Dim: dim, NewRound: func() (fl.RoundClient, error) {
			return newClient(i)
		}}
		if state != nil {
			cfgs[i].StateFile = state(i)
		}
	}
	wait := tn.serveAll(t, cfgs)
	t.Cleanup(func() {
		tn.co.Finish()
		for i, err := range wait() {
			if err != nil {
				t.Errorf("client %d: %v", i, err)
			}
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := tn.co.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return tn
}

// FedAvg, FedProx and FedAvg+FT with their clients across the transport
// (the existing and the new ones, each built by fedavg.NewClient from its
// own data) are bit-identical to the in-process run.
func TestFedAvgOverRPCBitIdentical(t *testing.T) {
	ds := data.Blobs(4, 30, 20, 3)
	for _, mu := range []float64{0, 0.3} {
		o := fedavg.DefaultOptions()
		o.Arch, o.Rounds, o.LocalSteps, o.Batch, o.ClientsPerRound = tinyMLP, 5, 3, 8, 3
		o.EvalLast, o.FineTune, o.Seed, o.LR, o.Mu = 2, 3, 11, 0.1, mu
		want, err := fedavg.Run(ds, o)
		if err != nil {
			t.Fatal(err)
		}
		ne, co := len(ds.Existing), o // the client processes' options
		tn := peerNet(t, ne+len(ds.New), tinyMLP.NumWeights(), "fedavg-test", func(id int) (fl.RoundClient, error) {
			if id < ne {
				return fedavg.NewClient(&ds.Existing[id], co, fedavg.GroupExisting, id)
			}
			return fedavg.NewClient(&ds.New[id-ne], co, fedavg.GroupNew, id-ne)
		}, nil)
		o.Clients = func(ne, nn int) (ex, nw []fl.RoundClient, err error) {
			rc := tn.co.RoundClients()
			return rc[:ne], rc[ne : ne+nn], nil
		}
		got, err := fedavg.Run(ds, o)
		if err != nil {
			t.Fatal(err)
		}
		values := func(r *fedavg.Result) string {
			return asmtest.Digest(r.Global, r.History, r.BestGM, r.GM, *r.NewGM, *r.FT, *r.NewFT)
		}
		if values(got) != values(want) {
			t.Errorf("μ = %g: the networked run differs from the in-process run", mu)
		}
	}
}

// counter is a stateful client: its state s counts its updates and its
// update is global + s + the first draw of its stream.
type counter struct {
	s    float64
	fail bool
}

func (c *counter) Fit(t fl.RoundTask, global, out []float64) (float64, error) {
	c.s++
	if c.fail {
		return 0, errors.New("local failure")
	}
	u := t.Rand().Float64()
	for j, g := range global {
		out[j] = g + c.s + u
	}
	return c.s, nil
}

func (c *counter) Evaluate(t fl.EvalTask, global []float64) (fl.ClientEval, error) {
	return fl.ClientEval{Accuracy: c.s, CE: 0.5, Tests: 3, Extra: []float64{float64(t.Model), global[0]}}, nil
}

func (c *counter) AppendState(dst []float64) []float64 { return append(dst, c.s) }

func (c *counter) SetState(s []float64) error {
	if len(s) != 1 {
		return fmt.Errorf("state of %d values", len(s))
	}
	c.s = s[0]
	return nil
}

// A stateful client keeps its state across rounds and restarts (its state
// file); the server's record of its accepted updates decides which state
// it must be at: a client one update ahead goes back, one that cannot
// match is refused, a failed update leaves the state as it was.
func TestStatefulRoundClient(t *testing.T) {
	dir := t.TempDir()
	clients := []*counter{{}, {}}
	tn := peerNet(t, 2, 2, "counter", func(id int) (fl.RoundClient, error) { return clients[id], nil },
		func(id int) string { return filepath.Join(dir, fmt.Sprintf("state-%d", id)) })
	rc := tn.co.RoundClients()
	global, out := []float64{1, 2}, make([]float64, 2)
	for r := 0; r < 3; r++ {
		loss, err := rc[0].Fit(fl.RoundTask{Round: r, Seed: 5, Stream: uint64(r)}, global, out)
		if err != nil {
			t.Fatal(err)
		}
		u := fl.ClientStream(5, uint64(r)).Float64()
		if loss != float64(r+1) || out[0] != 1+float64(r+1)+u || out[1] != 2+float64(r+1)+u {
			t.Fatalf("round %d: loss %v, update %v", r, loss, out)
		}
	}
	ev, err := rc[0].Evaluate(fl.EvalTask{Round: 3, Model: 7}, global)
	if err != nil || ev.Accuracy != 3 || ev.CE != 0.5 || ev.Tests != 3 || ev.Extra[0] != 7 || ev.Extra[1] != 1 {
		t.Fatalf("evaluation %+v, %v", ev, err)
	}
	if got := tn.co.StateRounds(); got[0] != 2 || got[1] != -1 {
		t.Fatalf("state rounds %v", got)
	}
	// The server restarted from the checkpoint after round 2 (index 1):
	// the client goes back one update.
	if err := tn.co.SetStateRounds([]int{1, -1}); err != nil {
		t.Fatal(err)
	}
	if ev, err := rc[0].Evaluate(fl.EvalTask{Round: 2}, global); err != nil || ev.Accuracy != 2 {
		t.Fatalf("after going back: %+v, %v", ev, err)
	}
	// Two updates back: the client no longer has that state.
	if err := tn.co.SetStateRounds([]int{-1, -1}); err != nil {
		t.Fatal(err)
	}
	if _, err := rc[0].Fit(fl.RoundTask{Round: 3}, global, out); err == nil ||
		!strings.Contains(err.Error(), "client state mismatch") {
		t.Fatalf("a client whose state cannot match: %v", err)
	}
	// A failed update leaves the state as it was.
	clients[1].fail = true
	if _, err := rc[1].Fit(fl.RoundTask{Round: 0}, global, out); err == nil {
		t.Fatal("a failed update was accepted")
	}
	clients[1].fail = false
	if ev, err := rc[1].Evaluate(fl.EvalTask{}, global); err != nil || ev.Accuracy != 0 {
		t.Fatalf("after a failed update: %+v, %v", ev, err)
	}
	// The state file restores client 0 in a new process.
	c := &counter{}
	cs, err := newClientState(filepath.Join(dir, "state-0"), 0, "counter", c)
	if err != nil || c.s != 2 || cs.cur.Round != 1 {
		t.Fatalf("restored state %v (round %d), %v", c.s, cs.cur.Round, err)
	}
	if _, err := newClientState(filepath.Join(dir, "state-0"), 1, "counter", c); err == nil {
		t.Error("client 1 took client 0's state file")
	}
}

// poison answers every Fit with a non-finite update.
type poison struct{ counter }

func (p *poison) Fit(t fl.RoundTask, global, out []float64) (float64, error) {
	for j := range out {
		out[j] = math.NaN()
	}
	return 0, nil
}

// The server refuses a non-finite update before it reaches the
// aggregation.
func TestRoundClientPoisonedUpdateRejected(t *testing.T) {
	tn := peerNet(t, 1, 3, "poison", func(int) (fl.RoundClient, error) { return &poison{}, nil }, nil)
	out := []float64{7, 7, 7}
	_, err := tn.co.RoundClients()[0].Fit(fl.RoundTask{}, []float64{1, 2, 3}, out)
	if err == nil || !strings.Contains(err.Error(), "NaN") {
		t.Fatalf("poisoned update: %v", err)
	}
	if out[0] != 7 {
		t.Error("the poisoned update reached the caller's buffer")
	}
}

// liar answers Evaluate with the score it is given.
type liar struct {
	counter
	ev fl.ClientEval
}

func (l *liar) Evaluate(fl.EvalTask, []float64) (fl.ClientEval, error) { return l.ev, nil }

// The server refuses a client's score outside its ranges before anyone
// uses it, and a loss beyond ±MaxLoss.
func TestRoundClientBadScoresRejected(t *testing.T) {
	l := &liar{}
	tn := peerNet(t, 1, 2, "liar", func(int) (fl.RoundClient, error) { return l, nil }, nil)
	rc := tn.co.RoundClients()[0]
	for _, c := range []struct {
		ev   fl.ClientEval
		want string
	}{
		{fl.ClientEval{Accuracy: 101, Tests: 1}, "accuracy"},
		{fl.ClientEval{Accuracy: math.NaN(), Tests: 1}, "accuracy"},
		{fl.ClientEval{CE: 1.5, Tests: 1}, "calibration"},
		{fl.ClientEval{}, "test points"},
		{fl.ClientEval{Tests: 1, Extra: []float64{1, math.Inf(1)}}, "further number 1"},
		{fl.ClientEval{Tests: 1, Extra: make([]float64, maxExtra+1)}, "further numbers"},
	} {
		l.ev = c.ev
		if _, err := rc.Evaluate(fl.EvalTask{}, []float64{1, 2}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("score %+v: %v, want an error naming %q", c.ev, err, c.want)
		}
	}
	l.ev = fl.ClientEval{Accuracy: 50, CE: 0.25, Tests: 4, Extra: []float64{3}}
	if ev, err := rc.Evaluate(fl.EvalTask{}, []float64{1, 2}); err != nil || ev.Accuracy != 50 || ev.Extra[0] != 3 {
		t.Errorf("a good score: %+v, %v", ev, err)
	}
	if _, err := rc.Evaluate(fl.EvalTask{}, []float64{1, 2, 3}); err == nil {
		t.Error("a global vector of the wrong length was sent")
	}
	l.s = 2 * MaxLoss // Fit's loss is its state after the update
	if _, err := rc.Fit(fl.RoundTask{}, []float64{1, 2}, make([]float64, 2)); err == nil ||
		!strings.Contains(err.Error(), "training loss") {
		t.Errorf("a loss of %g: %v", 2*MaxLoss+1, err)
	}
}

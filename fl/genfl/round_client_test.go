package genfl

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
)

// netDataset is a small classification data set of k users (the synthetic
// task), as package data holds it.
func netDataset(k int) *data.Dataset {
	train, test := synthUsers(k, 40, 11), synthUsers(k, 20, 12)
	ds := &data.Dataset{Name: "synth", D: synthArch.In, Classes: synthArch.Classes}
	labels := func(y []int) []float64 {
		out := make([]float64, len(y))
		for i, v := range y {
			out[i] = float64(v)
		}
		return out
	}
	for i := range train {
		ds.Existing = append(ds.Existing, data.ClientData{X: train[i].X, Y: labels(train[i].Y), XTest: test[i].X,
			YTest: labels(test[i].Y)})
	}
	return ds
}

// netOptions are small settings of a whole run (every phase, odd block
// sizes) with progress recorded into events.
func netOptions(kind PriorKind, est Estimator, events *[]fl.RoundEvent) Options {
	o := DefaultOptions(kind, est, 3)
	o.Arch = synthArch
	o.PriorFed.Rounds, o.PriorFed.LocalEpochs, o.PriorFed.Fraction = 3, 1, 0.5
	o.PosteriorFed.Rounds, o.PosteriorFed.LocalEpochs, o.PosteriorFed.Fraction = 3, 2, 0.5
	o.PosteriorFed.LR, o.PriorFed.LR = 0.05, 0.05
	o.PersonalEpochs, o.MC.N, o.ClientMC.N, o.TestDraws = 2, 700, 300, 3
	var mu sync.Mutex
	rec := func(e fl.RoundEvent) {
		mu.Lock()
		*events = append(*events, e)
		mu.Unlock()
	}
	o.PriorFed.Progress, o.PosteriorFed.Progress = rec, rec
	return o
}

// netClients are the run's clients as another process would answer them
// (package rpc): every call gets copies of its vectors, a fresh client
// built by NewRoundClient from the user's data alone (with settings that
// have no callbacks) and restored from the state the previous Fit left,
// and a random stream made from (Seed, Stream) only.
type netClients struct {
	ds    *data.Dataset
	o     Options
	mu    sync.Mutex
	state map[int][]float64
	fits  int
}

func newNetClients(ds *data.Dataset, o Options) *netClients {
	o.PriorFed.Progress, o.PosteriorFed.Progress, o.Phase, o.UserProgress, o.MC.Progress = nil, nil, nil, nil, nil
	return &netClients{ds: ds, o: o, state: map[int][]float64{}}
}

func (n *netClients) make(existing, nw int) (ex, _ []fl.RoundClient, err error) {
	for k := range existing {
		ex = append(ex, &netClient{n: n, k: k})
	}
	return ex, nil, nil
}

type netClient struct {
	n *netClients
	k int
}

func (c *netClient) fresh() (fl.StatefulClient, error) {
	rc, err := NewRoundClient(&c.n.ds.Existing[c.k], c.n.o, 0, c.k)
	if err != nil {
		return nil, err
	}
	c.n.mu.Lock()
	s := slices.Clone(c.n.state[c.k])
	c.n.mu.Unlock()
	return rc, rc.SetState(s)
}

func (c *netClient) Fit(t fl.RoundTask, global, out []float64) (float64, error) {
	rc, err := c.fresh()
	if err != nil {
		return 0, err
	}
	o := make([]float64, len(out))
	loss, err := rc.Fit(fl.RoundTask{Round: t.Round, Seed: t.Seed, Stream: t.Stream}, slices.Clone(global), o)
	if err != nil {
		return loss, err
	}
	c.n.mu.Lock()
	c.n.state[c.k] = rc.AppendState(nil)
	c.n.fits++
	c.n.mu.Unlock()
	copy(out, o)
	return loss, nil
}

func (c *netClient) Evaluate(t fl.EvalTask, global []float64) (fl.ClientEval, error) {
	rc, err := c.fresh()
	if err != nil {
		return fl.ClientEval{}, err
	}
	e, err := rc.Evaluate(t, slices.Clone(global))
	e.Extra = slices.Clone(e.Extra)
	return e, err
}

// noTimes clears a bound's timing (wall clock).
func noTimes(b *Bound) Bound {
	c := *b
	c.MC.Seconds = 0
	return c
}

// Every phase run by clients across a simulated network (fresh client per
// call, state and vectors copied, streams from (Seed, Stream)) gives the
// in-process run's results to the bit: FL-SOB and PFL with both priors and
// estimators, and RunMethod; the clients' saved states are the in-process
// personalised posteriors.
func TestNetworkClientsAreBitIdentical(t *testing.T) {
	ds, train, test := netUsers(t, 5)
	for _, kind := range []PriorKind{RandomPriorKind, LearntPriorKind} {
		for _, est := range []Estimator{Pairs, Full} {
			var evWant, evGot []fl.RoundEvent
			want, err := RunFLSOB(train, test, netOptions(kind, est, &evWant))
			if err != nil {
				t.Fatal(err)
			}
			o := netOptions(kind, est, &evGot)
			net := newNetClients(ds, o)
			o.Clients = net.make
			got, err := RunFLSOB(train, test, o)
			if err != nil {
				t.Fatalf("%v %v: %v", kind, est, err)
			}
			if net.fits == 0 || !reflect.DeepEqual(noTimes(got.Bound), noTimes(want.Bound)) ||
				got.TestError != want.TestError || got.MeanTest != want.MeanTest || got.TrainError != want.TrainError ||
				got.PriorTest != want.PriorTest || !reflect.DeepEqual(evGot, evWant) {
				t.Errorf("FL-SOB %v %v over the network: %+v, %v; in process %+v, %v", kind, est, got.Bound, *got,
					want.Bound, *want)
			}

			evWant, evGot = nil, nil
			wantP, err := RunPFL(train, test, netOptions(kind, est, &evWant))
			if err != nil {
				t.Fatal(err)
			}
			o = netOptions(kind, est, &evGot)
			net = newNetClients(ds, o)
			o.Clients = net.make
			gotP, err := RunPFL(train, test, o)
			if err != nil {
				t.Fatalf("PFL %v %v: %v", kind, est, err)
			}
			if gotP.PriorTest != wantP.PriorTest || !reflect.DeepEqual(gotP.Prior, wantP.Prior) ||
				!reflect.DeepEqual(evGot, evWant) || gotP.Posteriors != nil || len(gotP.Clients) != len(wantP.Clients) {
				t.Errorf("PFL %v %v over the network: prior test %v, in process %v", kind, est, gotP.PriorTest,
					wantP.PriorTest)
			}
			for k := range wantP.Clients {
				g, w := gotP.Clients[k], wantP.Clients[k]
				if noTimes(g.Bound) != noTimes(w.Bound) || g.TestError != w.TestError || g.TrainError != w.TrainError {
					t.Errorf("PFL %v %v user %d: %+v, in process %+v", kind, est, k, g, w)
				}
				q := wantP.Posteriors[k]
				if s := net.state[k]; !slices.Equal(s, append(slices.Clone(q.Mu), q.Rho...)) {
					t.Errorf("PFL %v %v user %d: the client's state is not the personalised posterior", kind, est, k)
				}
			}
		}
		var evWant, evGot []fl.RoundEvent
		want, err := RunMethod(ds, netOptions(kind, Pairs, &evWant), 4)
		if err != nil {
			t.Fatal(err)
		}
		o := netOptions(kind, Pairs, &evGot)
		o.Clients = newNetClients(ds, o).make
		got, err := RunMethod(ds, o, 4)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.ExistingClass, want.ExistingClass) || got.NewClass != nil ||
			!reflect.DeepEqual(evGot, evWant) {
			t.Errorf("RunMethod %v over the network: %+v, in process %+v", kind, got.ExistingClass, want.ExistingClass)
		}
	}
}

// A client refuses a state of the wrong size or with non-finite entries,
// bad data (no panic), and vectors of the wrong shape.
func TestRoundClientRefusesBadInput(t *testing.T) {
	ds := netDataset(2)
	o := DefaultOptions(LearntPriorKind, Pairs, 1)
	o.Arch = synthArch
	c, err := NewRoundClient(&ds.Existing[0], o, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	P := synthArch.NumParams()
	good := make([]float64, 2*P)
	for _, s := range [][]float64{make([]float64, 2*P-1), make([]float64, 2*P+1), make([]float64, P)} {
		if c.SetState(s) == nil {
			t.Errorf("state of %d values accepted", len(s))
		}
	}
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		s := slices.Clone(good)
		s[P+3] = v
		if c.SetState(s) == nil {
			t.Errorf("state holding %v accepted", v)
		}
	}
	if err := c.SetState(good); err != nil || !slices.Equal(c.AppendState(nil), good) {
		t.Errorf("good state: %v", err)
	}
	if err := c.SetState(nil); err != nil || len(c.AppendState(nil)) != 0 {
		t.Errorf("empty state: %v", err)
	}
	if _, err := c.Evaluate(fl.EvalTask{Model: ModelPredict}, []float64{1}); err == nil {
		t.Error("an unpersonalised client predicted")
	}

	cd := ds.Existing[0]
	bad := []struct {
		name  string
		c     data.ClientData
		o     Options
		group int
		index int
	}{
		{"short rows", data.ClientData{X: cd.X[1:], Y: cd.Y}, o, 0, 0},
		{"fractional label", data.ClientData{X: cd.X, Y: append([]float64{0.5}, cd.Y[1:]...)}, o, 0, 0},
		{"label out of range", data.ClientData{X: cd.X, Y: append([]float64{3}, cd.Y[1:]...)}, o, 0, 0},
		{"bad test rows", data.ClientData{X: cd.X, Y: cd.Y, XTest: cd.XTest[1:], YTest: cd.YTest}, o, 0, 0},
		{"one example to split", data.ClientData{X: cd.X[:6], Y: cd.Y[:1]}, o, 0, 0},
		{"no examples", data.ClientData{}, o, 0, 0},
		{"new client", cd, o, 1, 0},
		{"negative index", cd, o, 0, -1},
		{"bad network", cd, func() Options { b := o; b.Arch.Classes = 1; return b }(), 0, 0},
		{"unknown prior", cd, func() Options { b := o; b.Prior = 0; return b }(), 0, 0},
	}
	for _, b := range bad {
		if _, err := NewRoundClient(&b.c, b.o, b.group, b.index); err == nil {
			t.Errorf("%s: no error", b.name)
		}
	}

	for _, g := range [][]float64{nil, {7}, {phaseERM}, {phasePosterior, 1}, make([]float64, 2+P)} {
		if _, err := c.Fit(fl.RoundTask{}, g, make([]float64, len(g))); err == nil {
			t.Errorf("Fit of %d values (phase %v) accepted", len(g), g)
		}
	}
	for _, m := range []int{0, ModelMeanError, ModelGibbsError, ModelPairErrors, ModelPersonalBound, 99} {
		if _, err := c.Evaluate(fl.EvalTask{Model: m}, []float64{1, 2}); err == nil {
			t.Errorf("Evaluate of model %d on 2 values accepted", m)
		}
	}
}

// The server refuses clients that answer what it cannot use: a missing
// count, a client that does not echo the round's header, too few clients.
func TestServerRefusesBadClients(t *testing.T) {
	ds := netDataset(3)
	train, _ := TrainClients(ds)
	test, _ := TestClients(ds)
	var ev []fl.RoundEvent
	o := netOptions(RandomPriorKind, Full, &ev)
	net := newNetClients(ds, o)
	for name, wrap := range map[string]func(fl.RoundClient) fl.RoundClient{
		"no count":  func(c fl.RoundClient) fl.RoundClient { return &lying{RoundClient: c, extra: true} },
		"no header": func(c fl.RoundClient) fl.RoundClient { return &lying{RoundClient: c, header: true} },
	} {
		o.Clients = func(existing, nw int) ([]fl.RoundClient, []fl.RoundClient, error) {
			ex, _, _ := net.make(existing, nw)
			ex[1] = wrap(ex[1])
			return ex, nil, nil
		}
		if _, err := RunFLSOB(train, test, o); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	o.Clients = func(existing, nw int) ([]fl.RoundClient, []fl.RoundClient, error) {
		ex, _, _ := net.make(existing, nw)
		return ex[1:], nil, nil
	}
	if _, err := RunPFL(train, test, o); err == nil || !strings.Contains(err.Error(), "clients for") {
		t.Errorf("too few clients: %v", err)
	}
}

// lying is a client that drops its counts or changes the round's header.
type lying struct {
	fl.RoundClient
	extra, header bool
}

func (l *lying) Fit(t fl.RoundTask, global, out []float64) (float64, error) {
	loss, err := l.RoundClient.Fit(t, global, out)
	if l.header {
		out[0]++
	}
	return loss, err
}

func (l *lying) Evaluate(t fl.EvalTask, global []float64) (fl.ClientEval, error) {
	e, err := l.RoundClient.Evaluate(t, global)
	if l.extra {
		e.Extra = nil
	}
	return e, err
}

// netUsers is netDataset(k) and its users' training and test rows.
func netUsers(t *testing.T, k int) (*data.Dataset, []Client, []Client) {
	t.Helper()
	ds := netDataset(k)
	train, err := TrainClients(ds)
	if err != nil {
		t.Fatal(err)
	}
	test, err := TestClients(ds)
	if err != nil {
		t.Fatal(err)
	}
	return ds, train, test
}

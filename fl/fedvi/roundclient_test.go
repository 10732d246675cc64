package fedvi

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
)

// netClient is a client across a simulated network: every call copies its
// vectors through fresh buffers, builds a fresh client with the exported
// constructor (FedVI's clients keep no state) and seeds its random stream
// from the task's (Seed, Stream) only.
type netClient struct {
	build      func() (fl.RoundClient, error)
	fits, evas *atomic.Int64
}

func (n netClient) Fit(t fl.RoundTask, global, out []float64) (float64, error) {
	n.fits.Add(1)
	c, err := n.build()
	if err != nil {
		return 0, err
	}
	if _, ok := c.(fl.StatefulClient); ok {
		return 0, errors.New("a FedVI-family client keeps state")
	}
	recv, sent := slices.Clone(global), make([]float64, len(out))
	loss, err := c.Fit(fl.RoundTask{Round: t.Round, Seed: t.Seed, Stream: t.Stream}, recv, sent)
	copy(out, sent)
	return loss, err
}

func (n netClient) Evaluate(t fl.EvalTask, global []float64) (fl.ClientEval, error) {
	n.evas.Add(1)
	c, err := n.build()
	if err != nil {
		return fl.ClientEval{}, err
	}
	e, err := c.Evaluate(fl.EvalTask{Round: t.Round, Model: t.Model}, slices.Clone(global))
	e.Extra = slices.Clone(e.Extra)
	return e, err
}

// network returns Options.Clients of netClients over full's data built by
// build, counting the calls in fits and evas.
func network(full *data.Dataset, fits, evas *atomic.Int64,
	build func(c *data.ClientData, group, index int) (fl.RoundClient, error)) func(int, int) (
	[]fl.RoundClient, []fl.RoundClient, error) {
	return func(existing, new int) (ex, nw []fl.RoundClient, err error) {
		if existing != len(full.Existing) || new != len(full.New) {
			return nil, nil, fmt.Errorf("asked for %d and %d clients", existing, new)
		}
		group := func(cs []data.ClientData, g int) []fl.RoundClient {
			out := make([]fl.RoundClient, len(cs))
			for i := range cs {
				out[i] = netClient{build: func() (fl.RoundClient, error) { return build(&cs[i], g, i) },
					fits: fits, evas: evas}
			}
			return out
		}
		return group(full.Existing, GroupExisting), group(full.New, GroupNew), nil
	}
}

// serverView is what the server of a run with remote clients may read of
// ds: its name, shapes, groups and training-set sizes; no inputs, labels
// or test data.
func serverView(ds *data.Dataset) *data.Dataset {
	v := &data.Dataset{Name: ds.Name, D: ds.D, Classes: ds.Classes,
		Existing: make([]data.ClientData, len(ds.Existing)), New: make([]data.ClientData, len(ds.New))}
	for k, c := range ds.Existing {
		v.Existing[k].Y = make([]float64, c.M())
	}
	return v
}

// bitsEqual reports whether a and b hold the same numbers bit for bit
// (NaN equal to NaN), following pointers, ignoring the timing fields.
func bitsEqual(a, b reflect.Value) bool {
	if a.Kind() != b.Kind() {
		return false
	}
	switch a.Kind() {
	case reflect.Float64:
		return math.Float64bits(a.Float()) == math.Float64bits(b.Float())
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return bitsEqual(a.Elem(), b.Elem())
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !bitsEqual(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Struct:
		for i := range a.NumField() {
			if n := a.Type().Field(i).Name; n == "Seconds" || n == "Elapsed" {
				continue
			}
			if !bitsEqual(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Func, reflect.Map, reflect.Chan:
		return a.IsNil() && b.IsNil()
	default:
		return a.Interface() == b.Interface()
	}
}

func sameBits(t *testing.T, what string, a, b any) {
	t.Helper()
	if !bitsEqual(reflect.ValueOf(a), reflect.ValueOf(b)) {
		t.Errorf("%s differs across the network:\n%+v\n%+v", what, a, b)
	}
}

// TestTrainOverNetwork: FedVI with every client behind a simulated network
// and a server that sees no client data gives the plain run's result bit
// for bit.
func TestTrainOverNetwork(t *testing.T) {
	ds := synthetic(t, 5, 2, 3)
	for _, c := range []struct {
		name           string
		rounds, per    int
		pool           bool
		wantFit, wantE int64
	}{
		{"sampled", 4, 3, false, 4 * 3, 2 * 7},
		{"pooled outputs, all", 2, 0, true, 2 * 5, 2 * 7},
		{"no rounds", 0, 3, false, 0, 7},
	} {
		o := tinyOptions()
		o.Rounds, o.ClientsPerRound, o.EvalLast, o.EvalDraws = c.rounds, c.per, 2, 3
		o.Arch.PoolOutputs = c.pool
		var ev1, ev2 []fl.RoundEvent
		o.Progress = func(e fl.RoundEvent) { ev1 = append(ev1, e) }
		m1, r1, err := RunMethod(ds, o)
		if err != nil {
			t.Fatal(err)
		}
		var fits, evas atomic.Int64
		built := o
		built.Progress = nil
		o.Progress = func(e fl.RoundEvent) { ev2 = append(ev2, e) }
		o.Clients = network(ds, &fits, &evas, func(cd *data.ClientData, g, i int) (fl.RoundClient, error) {
			return NewClient(cd, built, g, i)
		})
		m2, r2, err := RunMethod(serverView(ds), o)
		if err != nil {
			t.Fatal(err)
		}
		if fits.Load() != c.wantFit || evas.Load() != c.wantE {
			t.Errorf("%s: %d Fit and %d Evaluate calls, want %d and %d", c.name, fits.Load(), evas.Load(),
				c.wantFit, c.wantE)
		}
		sameBits(t, c.name+": Result", r1, r2)
		sameBits(t, c.name+": MethodResult", m1, m2)
		sameBits(t, c.name+": progress", ev1, ev2)
		if len(r1.History) == 0 || len(r1.New.Accuracy) != 2 {
			t.Fatalf("%s: nothing evaluated: %+v", c.name, r1)
		}
	}
}

// TestTrainFedAvgOverNetwork is TestTrainOverNetwork for FedAvg and
// FedAvg+FT on FedVI's network.
func TestTrainFedAvgOverNetwork(t *testing.T) {
	ds := synthetic(t, 5, 2, 3)
	ft := FineTune{Epochs: 1, Batch: 16, LR: 0.05}
	for _, c := range []struct {
		name           string
		rounds, per    int
		mom            float64
		wantFit, wantE int64
	}{
		{"momentum", 4, 3, 0.5, 4 * 3, 3 * 7}, // the last 2 rounds and FedAvg+FT
		{"all", 2, 0, 0, 2 * 5, 3 * 7},
		{"no rounds", 0, 3, 0.5, 0, 2 * 7},
	} {
		o := tinyOptions()
		o.Rounds, o.ClientsPerRound, o.Momentum, o.EvalLast = c.rounds, c.per, c.mom, 2
		p1, f1, err := TrainFedAvg(ds, o, ft)
		if err != nil {
			t.Fatal(err)
		}
		var fits, evas atomic.Int64
		o.Clients = network(ds, &fits, &evas, func(cd *data.ClientData, g, i int) (fl.RoundClient, error) {
			return NewFedAvgClient(cd, o, ft, g, i)
		})
		p2, f2, err := TrainFedAvg(serverView(ds), o, ft)
		if err != nil {
			t.Fatal(err)
		}
		if fits.Load() != c.wantFit || evas.Load() != c.wantE {
			t.Errorf("%s: %d Fit and %d Evaluate calls, want %d and %d", c.name, fits.Load(), evas.Load(),
				c.wantFit, c.wantE)
		}
		sameBits(t, c.name+": FedAvg", p1, p2)
		sameBits(t, c.name+": FedAvg+FT", f1, f2)
		sameBits(t, c.name+": FedAvg's method result", p1.MethodResult("a", ds), p2.MethodResult("a", ds))
		if f1 == nil || len(f1.History) != 1 || slices.Equal(f1.Existing.Accuracy, nil) {
			t.Fatalf("%s: no fine-tuned evaluation: %+v", c.name, f1)
		}
	}
}

// TestRoundClientsRefuse: the constructors refuse bad data and settings
// with an error, the clients refuse unknown models and outputs of the
// wrong size, and a run refuses injected clients that do not match the
// data set or fail.
func TestRoundClientsRefuse(t *testing.T) {
	ds := synthetic(t, 3, 1, 3)
	o := tinyOptions()
	good := ds.Existing[0]
	bad := func(f func(c *data.ClientData)) *data.ClientData {
		c := good
		c.X, c.Y, c.XTest, c.YTest = slices.Clone(c.X), slices.Clone(c.Y), slices.Clone(c.XTest), slices.Clone(c.YTest)
		f(&c)
		return &c
	}
	cases := []struct {
		name  string
		c     *data.ClientData
		group int
		index int
	}{
		{"no data", nil, GroupExisting, 0},
		{"ragged images", bad(func(c *data.ClientData) { c.X = c.X[:len(c.X)-1] }), GroupExisting, 0},
		{"ragged test images", bad(func(c *data.ClientData) { c.YTest = c.YTest[1:] }), GroupNew, 0},
		{"label out of range", bad(func(c *data.ClientData) { c.Y[2] = 3 }), GroupExisting, 0},
		{"fractional label", bad(func(c *data.ClientData) { c.YTest[0] = 0.5 }), GroupNew, 0},
		{"NaN label", bad(func(c *data.ClientData) { c.Y[0] = math.NaN() }), GroupExisting, 0},
		{"no training data", bad(func(c *data.ClientData) { c.X, c.Y = nil, nil }), GroupExisting, 0},
		{"bad group", &good, 2, 0},
		{"bad index", &good, GroupExisting, -1},
	}
	ft := DefaultFineTune()
	for _, c := range cases {
		if _, err := NewClient(c.c, o, c.group, c.index); err == nil {
			t.Errorf("NewClient accepted %s", c.name)
		}
		if _, err := NewFedAvgClient(c.c, o, ft, c.group, c.index); err == nil {
			t.Errorf("NewFedAvgClient accepted %s", c.name)
		}
	}
	one := bad(func(c *data.ClientData) { c.X, c.Y = c.X[:len(c.X)/len(c.Y)], c.Y[:1] })
	if _, err := NewClient(one, o, GroupExisting, 0); err == nil {
		t.Error("NewClient accepted a participating client of one training example")
	}
	bo := o
	bo.Rounds = -1
	if _, err := NewClient(&good, bo, GroupExisting, 0); err == nil {
		t.Error("NewClient accepted bad options")
	}
	if _, err := NewFedAvgClient(&good, o, FineTune{Epochs: 1}, GroupExisting, 0); err == nil {
		t.Error("NewFedAvgClient accepted fine-tuning of step 0")
	}

	// Unknown models and outputs of the wrong size.
	vi, err := NewClient(&good, o, GroupExisting, 0)
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewModel(o.Arch, nil)
	if err != nil {
		t.Fatal(err)
	}
	theta := make([]float64, m.NumParams())
	if _, err := vi.Evaluate(fl.EvalTask{Model: 1}, theta); err == nil {
		t.Error("FedVI scored model 1")
	}
	if _, err := vi.Fit(fl.RoundTask{}, theta, theta[1:]); err == nil {
		t.Error("FedVI's Fit took a short output")
	}
	if _, err := vi.Fit(fl.RoundTask{}, theta[1:], theta[2:]); err == nil {
		t.Error("FedVI's Fit took a short global vector")
	}
	avg, err := NewFedAvgClient(&good, o, FineTune{}, GroupExisting, 0)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlain(o.Arch)
	if err != nil {
		t.Fatal(err)
	}
	w := make([]float64, p.NumParams())
	if _, err := avg.Evaluate(fl.EvalTask{Model: ModelFineTuned}, w); err == nil {
		t.Error("FedAvg+FT scored without fine-tuning epochs")
	}
	if _, err := avg.Evaluate(fl.EvalTask{Model: 2}, w); err == nil {
		t.Error("FedAvg scored model 2")
	}
	if _, err := avg.Fit(fl.RoundTask{}, w, w[1:]); err == nil {
		t.Error("FedAvg's Fit took a short output")
	}

	// Injected clients that do not fit the data set, or fail.
	o.Rounds, o.EvalLast = 2, 1
	clients := func(ex, nw int, fail error) func(int, int) ([]fl.RoundClient, []fl.RoundClient, error) {
		return func(int, int) ([]fl.RoundClient, []fl.RoundClient, error) {
			mk := func(g, n int) []fl.RoundClient {
				out := make([]fl.RoundClient, n)
				for i := range out {
					c, err := NewClient(&ds.Existing[min(i, 2)], o, g, i)
					if err != nil {
						t.Fatal(err)
					}
					out[i] = c
				}
				return out
			}
			return mk(GroupExisting, ex), mk(GroupNew, nw), fail
		}
	}
	for _, c := range []struct {
		name string
		f    func(int, int) ([]fl.RoundClient, []fl.RoundClient, error)
	}{
		{"too few participating clients", clients(2, 1, nil)},
		{"too many new clients", clients(3, 2, nil)},
		{"an error", clients(3, 1, errors.New("no connection"))},
		{"a nil client", func(e, n int) ([]fl.RoundClient, []fl.RoundClient, error) {
			ex, nw, _ := clients(3, 1, nil)(e, n)
			nw[0] = nil
			return ex, nw, nil
		}},
	} {
		oc := o
		oc.Clients = c.f
		if _, err := Train(ds, oc); err == nil {
			t.Errorf("Train accepted injected clients with %s", c.name)
		}
		if _, _, err := TrainFedAvg(ds, oc, FineTune{}); err == nil {
			t.Errorf("TrainFedAvg accepted injected clients with %s", c.name)
		}
	}
	// A client that does not answer ends the run with its error.
	oc := o
	oc.Clients = func(e, n int) ([]fl.RoundClient, []fl.RoundClient, error) {
		ex, nw, err := clients(3, 1, nil)(e, n)
		ex[1] = failing{ex[1]}
		return ex, nw, err
	}
	oc.ClientsPerRound = 0
	if _, err := Train(ds, oc); err == nil || !strings.Contains(err.Error(), "lost") {
		t.Errorf("a run with a client that does not answer: %v", err)
	}
}

// failing is a client whose connection is lost.
type failing struct{ fl.RoundClient }

func (failing) Fit(fl.RoundTask, []float64, []float64) (float64, error) {
	return 0, errors.New("connection lost")
}

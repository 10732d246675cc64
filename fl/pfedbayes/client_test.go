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
	"github.com/pacpfl/pacpfl/fl/internal/fedround"
	"github.com/pacpfl/pacpfl/fl/internal/fedrun"
)

// netClient stands for a client in another process: every call builds a
// fresh client with NewClient from the client's own data and Options,
// restores the state the previous Fit left (kept here, outside the
// object, as a client process saves it), passes global and out through
// fresh buffers and draws from the stream (Seed, Stream) only.
type netClient struct {
	c            *data.ClientData
	o            Options
	group, index int
	state        []float64 // nil before the first Fit
}

func (n *netClient) build() (fl.RoundClient, error) {
	k, err := NewClient(n.c, n.o, n.group, n.index)
	if err != nil || n.state == nil {
		return k, err
	}
	return k, k.(fl.StatefulClient).SetState(slices.Clone(n.state))
}

func (n *netClient) Fit(t fl.RoundTask, global, out []float64) (float64, error) {
	k, err := n.build()
	if err != nil {
		return 0, err
	}
	g, o := slices.Clone(global), make([]float64, len(out))
	for j := range o {
		o[j] = math.NaN() // what a careless client would leave
	}
	loss, err := k.Fit(fl.RoundTask{Round: t.Round, Seed: t.Seed, Stream: t.Stream}, g, o)
	if err != nil {
		return 0, err
	}
	copy(out, o)
	n.state = k.(fl.StatefulClient).AppendState(nil)
	return loss, nil
}

func (n *netClient) Evaluate(t fl.EvalTask, global []float64) (fl.ClientEval, error) {
	k, err := n.build()
	if err != nil {
		return fl.ClientEval{}, err
	}
	e, err := k.Evaluate(t, slices.Clone(global))
	e.Extra = slices.Clone(e.Extra)
	return e, err
}

// netClients returns Options.Clients of netClients over ds and the
// clients it made.
func netClients(ds *data.Dataset, o Options) (
	func(int, int) ([]fl.RoundClient, []fl.RoundClient, error), *[]*netClient) {
	var made []*netClient
	return func(existing, nw int) (ex, nc []fl.RoundClient, err error) {
		made = nil
		for g, n := range []int{existing, nw} {
			for i := range n {
				c := &ds.Existing[i]
				if g == GroupNew {
					c = &ds.New[i]
				}
				k := &netClient{c: c, o: o, group: g, index: i}
				made = append(made, k)
				if g == GroupNew {
					nc = append(nc, k)
				} else {
					ex = append(ex, k)
				}
			}
		}
		return ex, nc, nil
	}, &made
}

// sizesOnly is ds as a server without the clients' data sees it: every
// row and label NaN or missing, only the numbers of rows kept.
func sizesOnly(ds *data.Dataset) *data.Dataset {
	s := *ds
	strip := func(cs []data.ClientData) []data.ClientData {
		out := make([]data.ClientData, len(cs))
		for i, c := range cs {
			nan := func(n int) []float64 {
				v := make([]float64, n)
				for j := range v {
					v[j] = math.NaN()
				}
				return v
			}
			out[i] = data.ClientData{Y: nan(len(c.Y)), YTest: nan(len(c.YTest))}
		}
		return out
	}
	s.Existing, s.New = strip(ds.Existing), strip(ds.New)
	return &s
}

// bitEqual reports where a and b differ, comparing floats bit for bit.
func bitEqual(a, b reflect.Value, path string) error {
	if a.Kind() != b.Kind() {
		return fmt.Errorf("%s: kinds %v and %v", path, a.Kind(), b.Kind())
	}
	switch a.Kind() {
	case reflect.Float64:
		if math.Float64bits(a.Float()) != math.Float64bits(b.Float()) {
			return fmt.Errorf("%s: %v and %v", path, a.Float(), b.Float())
		}
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return fmt.Errorf("%s: one is nil", path)
			}
			return nil
		}
		return bitEqual(a.Elem(), b.Elem(), path)
	case reflect.Slice:
		if a.Len() != b.Len() || a.IsNil() != b.IsNil() {
			return fmt.Errorf("%s: lengths %d and %d", path, a.Len(), b.Len())
		}
		for i := range a.Len() {
			if err := bitEqual(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Struct:
		for i := range a.NumField() {
			if err := bitEqual(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); err != nil {
				return err
			}
		}
	case reflect.Func:
		if !a.IsNil() || !b.IsNil() {
			return fmt.Errorf("%s: a function", path)
		}
	default:
		if a.Interface() != b.Interface() {
			return fmt.Errorf("%s: %v and %v", path, a, b)
		}
	}
	return nil
}

// A run whose clients sit behind a simulated network — a fresh client per
// call, its state restored from what its last Fit saved, fresh buffers, no
// shared rng, a server that holds only the numbers of rows — gives the
// in-process run's result bit for bit, on both variants and optimisers.
func TestInjectedClientsBitIdentical(t *testing.T) {
	ds := data.Blobs(5, 30, 20, 3)
	ds.Existing[1].X, ds.Existing[1].Y = ds.Existing[1].X[:10*2], ds.Existing[1].Y[:10] // unequal sizes
	eachVariant(t, func(t *testing.T, v Variant, opt Optimizer, o Options) {
		o.Arch, o.Batch, o.LocalSteps, o.Rounds, o.ClientsPerRound, o.EvalLast, o.Seed = tinyArch, 8, 3, 4, 3,
			2, 5
		o.Optimizer, o.EvalDraws, o.MC, o.LR1, o.LR2 = opt, 2, 2, 0.01, 0.01
		if v == Code {
			o.MC = 1
		}
		plain, err := Run(ds, o)
		if err != nil {
			t.Fatal(err)
		}
		clients, made := netClients(ds, o)
		on := o
		on.Clients = clients
		remote, err := Run(sizesOnly(ds), on)
		if err != nil {
			t.Fatal(err)
		}
		if remote.Clients != nil {
			t.Fatal("the server reports the clients' states")
		}
		nw := 2 * tinyArch.NumWeights()
		for i, c := range plain.Clients {
			if err := bitEqual(reflect.ValueOf(c), reflect.ValueOf((*made)[i].state[:nw]),
				"v_i"); err != nil {
				t.Fatalf("client %d: %v", i, err)
			}
		}
		plain.Clients = nil
		for _, r := range []*Result{plain, remote} {
			r.Seconds, r.TrainSeconds = 0, 0
		}
		if err := bitEqual(reflect.ValueOf(plain), reflect.ValueOf(remote), "Result"); err != nil {
			t.Fatal(err)
		}
		pm, err := RunMethod(ds, o)
		if err != nil {
			t.Fatal(err)
		}
		rm, err := RunMethod(sizesOnly(ds), on)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []*fl.MethodResult{pm, rm} {
			m.Seconds, m.Elapsed, m.RoundSeconds = 0, 0, 0
		}
		if err := bitEqual(reflect.ValueOf(pm), reflect.ValueOf(rm), "MethodResult"); err != nil {
			t.Fatal(err)
		}
	})
}

// Run refuses injected clients of the wrong number and stops at a
// client's error, naming it.
func TestInjectedClientsErrors(t *testing.T) {
	ds := data.Blobs(3, 20, 10, 1)
	o := DefaultOptions()
	o.Arch, o.Rounds, o.EvalLast, o.Batch, o.LocalSteps = tinyArch, 2, 1, 5, 2
	clients, _ := netClients(ds, o)
	o.Clients = func(e, n int) ([]fl.RoundClient, []fl.RoundClient, error) {
		ex, nc, err := clients(e, n)
		return ex[1:], nc, err
	}
	if _, err := Run(ds, o); err == nil || !strings.Contains(err.Error(), "2 existing and 1 new clients") {
		t.Errorf("too few clients: %v", err)
	}
	o.Clients = func(e, n int) ([]fl.RoundClient, []fl.RoundClient, error) { return nil, nil, errors.New("no network") }
	if _, err := Run(ds, o); err == nil || !strings.Contains(err.Error(), "no network") {
		t.Errorf("the clients' error: %v", err)
	}
	o.Clients = func(e, n int) ([]fl.RoundClient, []fl.RoundClient, error) {
		ex, nc, err := clients(e, n)
		ex[2] = failing{}
		return ex, nc, err
	}
	if _, err := Run(ds, o); err == nil || !strings.Contains(err.Error(), "round 1, client 2: gone") {
		t.Errorf("a failing client: %v", err)
	}
}

type failing struct{}

func (failing) Fit(fl.RoundTask, []float64, []float64) (float64, error) { return 0, errors.New("gone") }
func (failing) Evaluate(fl.EvalTask, []float64) (fl.ClientEval, error) {
	return fl.ClientEval{}, errors.New("gone")
}

// SetState takes back what AppendState gave and refuses states of the
// wrong size, non-finite entries, negative second moments and counts out
// of range; a new client has no state.
func TestClientState(t *testing.T) {
	ds := data.Blobs(2, 20, 10, 1)
	for _, v := range []Variant{Paper, Code} {
		for _, opt := range []Optimizer{SGD, Adam} {
			o := DefaultOptions()
			if v == Code {
				o = CodeOptions()
			}
			o.Arch, o.Batch, o.LocalSteps, o.Optimizer = tinyArch, 8, 3, opt
			name := v.String() + "/" + opt.String()
			k, err := NewClient(&ds.Existing[0], o, GroupExisting, 0)
			if err != nil {
				t.Fatal(err)
			}
			sc := k.(fl.StatefulClient)
			v0, err := Init(o)
			if err != nil {
				t.Fatal(err)
			}
			s0 := sc.AppendState(nil)
			if !slices.Equal(s0[:len(v0)], v0) {
				t.Fatalf("%s: the first state is not v⁰", name)
			}
			out := make([]float64, len(v0))
			loss, err := k.Fit(fl.RoundTask{Seed: 1, Stream: 2}, v0, out)
			if err != nil || math.IsNaN(loss) {
				t.Fatalf("%s: Fit: %v, %v", name, loss, err)
			}
			s1 := sc.AppendState([]float64{7})[1:]
			if slices.Equal(s1, s0) || len(s1) != len(s0) {
				t.Fatalf("%s: Fit left the state as it was", name)
			}
			if err := sc.SetState(s0); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !slices.Equal(sc.AppendState(nil), s0) {
				t.Fatalf("%s: SetState did not restore the state", name)
			}
			bad := map[string][]float64{"short": s0[1:], "long": append(slices.Clone(s0), 0)}
			for what, j := range map[string]int{"NaN": 0, "+Inf": len(v0) - 1} {
				b := slices.Clone(s0)
				b[j] = map[string]float64{"NaN": math.NaN(), "+Inf": math.Inf(1)}[what]
				bad[what] = b
			}
			d := len(v0)
			rest := d
			if v == Code {
				for what, c := range map[string]float64{"cursor −1": -1, "cursor 1.5": 1.5, "cursor 21": 21} {
					b := slices.Clone(s0)
					b[d] = c
					bad[what] = b
				}
				rest++
			}
			if opt == Adam {
				b := slices.Clone(s0)
				b[rest+d] = -1 // the personalised optimiser's first second moment
				bad["negative second moment"] = b
				b = slices.Clone(s0)
				b[len(b)-1] = 0.5 // the global optimiser's step count
				bad["step count 0.5"] = b
			}
			for what, s := range bad {
				if err := sc.SetState(s); err == nil {
					t.Errorf("%s: a state %s accepted", name, what)
				}
			}
			if !slices.Equal(sc.AppendState(nil), s0) {
				t.Errorf("%s: a refused state changed the client", name)
			}
		}
	}
	o := DefaultOptions()
	o.Arch = tinyArch
	k, err := NewClient(&ds.New[0], o, GroupNew, 0)
	if err != nil {
		t.Fatal(err)
	}
	sc := k.(fl.StatefulClient)
	if s := sc.AppendState(nil); len(s) != 0 || sc.SetState(nil) != nil || sc.SetState([]float64{1}) == nil {
		t.Error("a new client's state is not empty")
	}
	v0, _ := Init(o)
	if _, err := k.Fit(fl.RoundTask{}, v0, make([]float64, len(v0))); err == nil {
		t.Error("a new client trained")
	}
	if _, err := k.Evaluate(fl.EvalTask{Model: ModelPM}, v0); err == nil {
		t.Error("a new client scored a personalised model")
	}
	if e, err := k.Evaluate(fl.EvalTask{Model: ModelNewGM}, v0); err != nil || e.Tests != len(ds.New[0].YTest) {
		t.Errorf("a new client's GM: %+v, %v", e, err)
	}
}

// NewClient refuses bad data and options with an error, and a client
// refuses vectors of the wrong length and models it does not have.
func TestNewClientBadInput(t *testing.T) {
	ds := data.Blobs(2, 20, 10, 1)
	o := DefaultOptions()
	o.Arch = tinyArch
	good := ds.Existing[0]
	for name, c := range map[string]func(c *data.ClientData){
		"X short":       func(c *data.ClientData) { c.X = c.X[1:] },
		"XTest short":   func(c *data.ClientData) { c.XTest = c.XTest[:3] },
		"no training":   func(c *data.ClientData) { c.X, c.Y = nil, nil },
		"no test":       func(c *data.ClientData) { c.XTest, c.YTest = nil, nil },
		"label 2":       func(c *data.ClientData) { c.Y = slices.Clone(c.Y); c.Y[0] = 2 },
		"label NaN":     func(c *data.ClientData) { c.YTest = slices.Clone(c.YTest); c.YTest[3] = math.NaN() },
		"label 0.5":     func(c *data.ClientData) { c.Y = slices.Clone(c.Y); c.Y[1] = 0.5 },
		"test label −1": func(c *data.ClientData) { c.YTest = slices.Clone(c.YTest); c.YTest[0] = -1 },
	} {
		d := good
		c(&d)
		if _, err := NewClient(&d, o, GroupExisting, 0); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
	if _, err := NewClient(nil, o, GroupExisting, 0); err == nil {
		t.Error("nil data accepted")
	}
	if _, err := NewClient(&good, o, 2, 0); err == nil {
		t.Error("group 2 accepted")
	}
	if _, err := NewClient(&good, o, GroupNew, -1); err == nil {
		t.Error("index −1 accepted")
	}
	b := o
	b.Zeta = 0
	if _, err := NewClient(&good, b, GroupExisting, 0); err == nil {
		t.Error("ζ = 0 accepted")
	}
	if _, err := Init(b); err == nil {
		t.Error("Init accepted ζ = 0")
	}
	untrained := ds.New[0]
	untrained.X, untrained.Y = nil, nil
	if _, err := NewClient(&untrained, o, GroupNew, 0); err != nil {
		t.Errorf("a new client without training rows: %v", err)
	}
	k, err := NewClient(&good, o, GroupExisting, 0)
	if err != nil {
		t.Fatal(err)
	}
	v0, _ := Init(o)
	if _, err := k.Fit(fl.RoundTask{}, v0[1:], make([]float64, len(v0))); err == nil {
		t.Error("a short global vector accepted by Fit")
	}
	if _, err := k.Evaluate(fl.EvalTask{Model: ModelGM}, v0[1:]); err == nil {
		t.Error("a short global vector accepted by Evaluate")
	}
	for _, m := range []int{ModelNewGM, -1, 3} {
		if _, err := k.Evaluate(fl.EvalTask{Model: m}, v0); err == nil {
			t.Errorf("an existing client scored model %d", m)
		}
	}
	if _, err := k.Evaluate(fl.EvalTask{Round: -1, Model: ModelGM}, v0); err == nil {
		t.Error("round −1 accepted")
	}
}

// An in-process client's update, called as the round loop calls it, does
// not allocate (either variant and optimiser).
func TestFitAllocs(t *testing.T) {
	ds := data.Blobs(2, 30, 10, 1)
	for _, o := range []Options{DefaultOptions(), CodeOptions()} {
		o.Arch, o.Batch, o.LocalSteps = tinyArch.WithDefaults(), 8, 3
		pool := fedrun.NewPool(1, func() (*worker, error) { return newWorker(o.Arch) })
		v0 := initial(&o)
		c, err := newClient(&ds.Existing[0], &o, pool, GroupExisting, 0, v0)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]float64, len(v0))
		rng := rand.New(rand.NewPCG(1, 2))
		local := fedround.Local([]fl.RoundClient{c}, 1, tagRound, nil)
		if a := testing.AllocsPerRun(20, func() {
			if err := local(0, 3, v0, out, rng); err != nil {
				t.Fatal(err)
			}
		}); a != 0 {
			t.Errorf("%v, %v: a client update allocates %v times", o.Variant, o.Optimizer, a)
		}
	}
}

// eachVariant runs f as a subtest for both variants and both optimisers,
// o the variant's default options.
func eachVariant(t *testing.T, f func(t *testing.T, v Variant, opt Optimizer, o Options)) {
	for _, v := range []Variant{Paper, Code} {
		for _, opt := range []Optimizer{SGD, Adam} {
			t.Run(v.String()+"/"+opt.String(), func(t *testing.T) {
				o := DefaultOptions()
				if v == Code {
					o = CodeOptions()
				}
				f(t, v, opt, o)
			})
		}
	}
}

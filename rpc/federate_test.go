package rpc

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/credentials/insecure"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
)

// federation runs Federate on 127.0.0.1 with GP clients that dial it as
// soon as it listens; the clients stop with ctx.
type federation struct {
	t       *testing.T
	ds      *data.Dataset
	o       fl.PACPFLOptions
	fo      FederateOptions
	clients sync.WaitGroup
	logs    []string
	mu      sync.Mutex
}

func newFederation(t *testing.T, ds *data.Dataset, o fl.PACPFLOptions) *federation {
	f := &federation{t: t, ds: ds, o: o}
	f.fo = FederateOptions{Listen: "127.0.0.1:0", Creds: insecure.NewCredentials(), Train: &f.o.Server,
		Server: ServerConfig{Clients: len(ds.Existing), ModelKind: ModelGP, Dim: fl.NewGPModel(ds.D).Dim(),
			Beta: o.Beta.String(),
			Log: func(format string, a ...any) {
				f.mu.Lock()
				defer f.mu.Unlock()
				f.logs = append(f.logs, format)
			}}}
	return f
}

// run federates with clients that live until cctx is done.
func (f *federation) run(ctx, cctx context.Context) (*fl.MethodResult, error) {
	f.fo.OnListen = func(addr net.Addr) {
		for i := range f.ds.Existing {
			conn, err := Dial(addr.String(), insecure.NewCredentials())
			if err != nil {
				f.t.Error(err)
				return
			}
			c := GPClient(i, &f.ds.Existing[i], f.ds.D, fl.GPInference{})
			c.Backoff = 10 * time.Millisecond
			f.clients.Add(1)
			go func() {
				defer f.clients.Done()
				defer conn.Close()
				Serve(cctx, conn, c)
			}()
		}
	}
	return Federate(ctx, f.fo, func(clients func() ([]fl.Client, error)) (*fl.MethodResult, error) {
		o := f.o
		o.Clients = func(*fl.GPModel) ([]fl.Client, error) { return clients() }
		return fl.RunPACPFL(f.ds, fl.NewGPModel(f.ds.D), o, fl.MethodPACPFL)
	})
}

// A federated run equals the in-process one to the bit and saves its state
// every SaveEvery rounds and after the last.
func TestFederateEqualsInProcess(t *testing.T) {
	ds := smallPolynomial(t, 4)
	o := smallOptions(5)
	o.Server.Rounds = 5
	want, err := fl.RunPACPFL(ds, fl.NewGPModel(ds.D), o, fl.MethodPACPFL)
	if err != nil {
		t.Fatal(err)
	}
	f := newFederation(t, ds, o)
	var saved []int
	f.fo.Save = func(st *fl.State) error { saved = append(saved, st.Round); return nil }
	f.fo.SaveEvery = 2
	got, err := f.run(context.Background(), context.Background())
	if err != nil {
		t.Fatal(err)
	}
	f.clients.Wait() // Finish told them the federation is over
	sameBits(t, "particles", got.Train.Particles, want.Train.Particles)
	sameBits(t, "existing RSMSE", got.Existing.RSMSE, want.Existing.RSMSE)
	if len(saved) != 3 || saved[0] != 2 || saved[1] != 4 || saved[2] != 5 {
		t.Errorf("saved after rounds %v, want [2 4 5]", saved)
	}
	if f.o.Server.Workers != o.Server.ClientsPerRound {
		t.Errorf("workers %d, want one per client of a round (%d)", f.o.Server.Workers, o.Server.ClientsPerRound)
	}
	if !strings.HasPrefix(f.logs[0], "listening on") {
		t.Errorf("first log line %q", f.logs[0])
	}
}

// A done context stops the run after the round under way with its state
// saved; a run resumed from that state ends bit-identical to an
// uninterrupted one.
func TestFederateInterruptAndResume(t *testing.T) {
	ds := smallPolynomial(t, 4)
	o := smallOptions(8)
	o.Server.Rounds = 6
	want, err := fl.RunPACPFL(ds, fl.NewGPModel(ds.D), o, fl.MethodPACPFL)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cctx, stopClients := context.WithCancel(context.Background())
	f := newFederation(t, ds, o)
	f.o.Server.Progress = func(e fl.RoundEvent) {
		if e.Round == 3 {
			cancel()
		}
	}
	var last *fl.State
	f.fo.Save = func(st *fl.State) error { last = st; return nil }
	f.fo.SaveEvery = 100
	_, err = f.run(ctx, cctx)
	var intr *Interrupted
	if !errors.As(err, &intr) || intr.Round != 3 || !intr.Saved || last == nil || last.Round != 3 {
		t.Fatalf("interrupted run: %v (%+v), saved state %v", err, intr, last)
	}
	stopClients()
	f.clients.Wait()

	r := newFederation(t, ds, o)
	r.fo.Resume = last
	got, err := r.run(context.Background(), context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r.clients.Wait()
	sameBits(t, "particles", got.Train.Particles, want.Train.Particles)
	sameBits(t, "mean LML", got.Train.MeanLML, want.Train.MeanLML)
}

func TestFederateRefusesWhatCannotRun(t *testing.T) {
	ds := smallPolynomial(t, 2)
	f := newFederation(t, ds, smallOptions(1))
	train := func(func() ([]fl.Client, error)) (*fl.MethodResult, error) { return nil, errors.New("not reached") }
	for _, c := range []struct {
		name string
		edit func(*FederateOptions)
		want string
	}{
		{"no address", func(o *FederateOptions) { o.Listen = "" }, "no address"},
		{"no creds", func(o *FederateOptions) { o.Creds = nil }, "credentials"},
		{"no training", func(o *FederateOptions) { o.Train = nil }, "no training"},
		{"negative", func(o *FederateOptions) { o.Wait = -time.Second }, "negative"},
		{"bad address", func(o *FederateOptions) { o.Listen = "256.0.0.1:x" }, "listen on 256.0.0.1:x"},
	} {
		o := f.fo
		c.edit(&o)
		_, err := Federate(context.Background(), o, train)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		if c.name == "bad address" {
			var le *ListenError
			if !errors.As(err, &le) {
				t.Errorf("bad address: %T, want a *ListenError", err)
			}
		}
	}
	// Nobody joins: Wait ends the wait.
	o := f.fo
	o.Wait = 200 * time.Millisecond
	start := time.Now()
	_, err := Federate(context.Background(), o, func(clients func() ([]fl.Client, error)) (*fl.MethodResult, error) {
		_, err := clients()
		return nil, err
	})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 10*time.Second {
		t.Errorf("no clients within Wait: %v after %v", err, time.Since(start))
	}
}

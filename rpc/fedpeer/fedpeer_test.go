package fedpeer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/credentials/insecure"

	"github.com/pacpfl/pacpfl/asm/asmtest"
	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/fedavg"
	"github.com/pacpfl/pacpfl/fl/genfl"
	"github.com/pacpfl/pacpfl/harness"
	"github.com/pacpfl/pacpfl/lml"
	"github.com/pacpfl/pacpfl/methods"
	"github.com/pacpfl/pacpfl/rpc"
)

var tinyMLP = lml.BNN{Arch: lml.ArchMLP, InC: 1, InH: 1, InW: 2, Hidden: 4, Classes: 2}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// clients runs one client process per client of ds against addr until
// each is told the federation is over.
func clients(t *testing.T, m methods.Networked, ds *data.Dataset, seed uint64, addr string) func() {
	t.Helper()
	return clientsIn(t, m, ds, seed, addr, "")
}

// clientsIn is clients with state files in dir ("": none).
func clientsIn(t *testing.T, m methods.Networked, ds *data.Dataset, seed uint64, addr, dir string) func() {
	t.Helper()
	var wg sync.WaitGroup
	n := len(ds.Existing)
	for id := 0; id < n+len(ds.New); id++ {
		c := &ds.Existing[min(id, n-1)]
		if id >= n {
			c = &ds.New[id-n]
		}
		o := ClientOptions{ID: id, Existing: n, Data: c, Classes: ds.Classes, Seed: seed}
		if dir != "" {
			o.StateFile = filepath.Join(dir, fmt.Sprintf("state-%d", id))
		}
		cfg, err := Client(m, o)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Backoff, cfg.MaxBackoff = 10*time.Millisecond, 50*time.Millisecond
		conn, err := rpc.Dial(addr, insecure.NewCredentials())
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer conn.Close()
			if err := rpc.Serve(context.Background(), conn, cfg); err != nil {
				t.Errorf("client %d: %v", id, err)
			}
		}()
	}
	return wg.Wait
}

func serve(t *testing.T, ctx context.Context, m methods.Networked, ds *data.Dataset, seed uint64, addr, dir string,
	resume bool, obs harness.Observer) (*fl.MethodResult, error) {
	t.Helper()
	st := rpc.ServerSettings{Listen: addr, Auth: rpc.ServerAuth{Insecure: true}, MaxPayload: 1 << 20,
		Limits: rpc.Limits{MaxUnauth: 8, MaxUnauthPerHost: 8}, CheckpointEvery: 1, Wait: time.Minute,
		Checkpoint: dir, Resume: resume}
	setup, err := st.Open("hash")
	if err != nil {
		t.Fatal(err)
	}
	if obs == nil {
		obs = harness.ObserverFunc(func(harness.Event) {})
	}
	return Method(setup, m, nil).Run(ctx, ds, seed, obs)
}

func fedAvg(ft bool) methods.FedAvg {
	o := fedavg.DefaultOptions()
	o.Arch, o.Rounds, o.LocalSteps, o.Batch, o.ClientsPerRound = tinyMLP, 5, 3, 8, 3
	o.EvalLast, o.FineTune, o.LR = 2, 3, 0.1
	return methods.FedAvg{Options: o, FineTuned: ft}
}

// FedAvg+FT served to client processes over TCP gives the in-process
// result; stopped by a signal after round 2 and resumed from its
// checkpoint by a new server, it still does.
func TestServedFedAvgBitIdenticalAndResumes(t *testing.T) {
	ds, seed := data.Blobs(4, 30, 20, 3), uint64(11)
	m := fedAvg(true)
	want, err := m.Run(context.Background(), ds, seed, harness.ObserverFunc(func(harness.Event) {}))
	if err != nil {
		t.Fatal(err)
	}
	values := func(r *fl.MethodResult) string {
		return asmtest.Digest(*r.ExistingClass, *r.NewClass)
	}
	addr, dir := freeAddr(t), t.TempDir()
	wait := clients(t, m, ds, seed, addr)
	got, err := serve(t, context.Background(), m, ds, seed, addr, dir, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	wait()
	if values(got) != values(want) {
		t.Errorf("served run %v, in process %v", values(got), values(want))
	}

	addr, dir = freeAddr(t), t.TempDir()
	wait = clients(t, m, ds, seed, addr)
	ctx, cancel := context.WithCancel(context.Background())
	stop := harness.ObserverFunc(func(e harness.Event) {
		if e.Kind == harness.Round && e.Round == 2 {
			cancel()
		}
	})
	_, err = serve(t, ctx, m, ds, seed, addr, dir, false, stop)
	var intr *rpc.Interrupted
	if !errors.As(err, &intr) || intr.Round != 2 || !intr.Saved {
		t.Fatalf("interrupted run: %v", err)
	}
	got, err = serve(t, context.Background(), m, ds, seed, addr, dir, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	wait()
	if values(got) != values(want) {
		t.Errorf("resumed run %v, uninterrupted %v", values(got), values(want))
	}
}

// A client process of another method, network or data is refused.
func TestClientMismatchRefused(t *testing.T) {
	ds, seed := data.Blobs(2, 10, 5, 3), uint64(1)
	m := fedAvg(false)
	other := fedAvg(false)
	other.Options.Arch.Hidden = 5
	addr := freeAddr(t)
	cfg, err := Client(other, ClientOptions{ID: 0, Existing: 2, Data: &ds.Existing[0], Classes: 2, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		conn, err := rpc.Dial(addr, insecure.NewCredentials())
		if err == nil {
			cfg.Backoff = 10 * time.Millisecond
			err = rpc.Serve(context.Background(), conn, cfg)
			conn.Close()
		}
		errc <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if _, err := serve(t, ctx, m, ds, seed, addr, "", false, nil); err == nil {
		t.Error("the server ran without its clients")
	}
	if err := <-errc; err == nil || !strings.Contains(err.Error(), "dim=") {
		t.Errorf("client of another network: %v", err)
	}
	if _, err := Client(m, ClientOptions{ID: -1, Existing: 2, Data: &ds.Existing[0]}); err == nil {
		t.Error("client id -1 accepted")
	}
}

// pFedBayes (stateful clients, state files) and GenFL (stateful, vectors
// of several lengths, no new clients) served over TCP give the in-process
// results bit for bit.
func TestServedStatefulMethodsBitIdentical(t *testing.T) {
	ds, seed := data.Blobs(4, 30, 20, 3), uint64(7)
	b := methods.DefaultPFedBayes()
	b.Options.Arch, b.Options.Rounds, b.Options.EvalLast, b.Options.LocalSteps, b.Options.ClientsPerRound = tinyMLP, 4,
		2, 2, 3
	g := methods.DefaultGenFL()
	g.Options.Arch = genfl.Arch{In: 2, Hidden: []int{4}, Classes: 2}
	g.Options.PriorFed.Rounds, g.Options.PosteriorFed.Rounds, g.Options.PersonalEpochs, g.Options.TestDraws = 3, 2, 1, 2
	g.Options.PriorFed.LocalEpochs = 1
	for _, m := range []methods.Networked{b, g} {
		want, err := m.Run(context.Background(), ds, seed, harness.ObserverFunc(func(harness.Event) {}))
		if err != nil {
			t.Fatal(err)
		}
		addr, dir := freeAddr(t), t.TempDir()
		sub := ds
		if m.Traits().NoNewClients {
			c := *ds
			c.New = nil
			sub = &c // the client processes there are
		}
		wait := clientsIn(t, m, sub, seed, addr, dir)
		ckpt := t.TempDir()
		if m.Traits().NoCheckpoint {
			ckpt = ""
		}
		got, err := serve(t, context.Background(), m, ds, seed, addr, ckpt, false, nil)
		if err != nil {
			t.Fatalf("%s: %v", m.Name(), err)
		}
		wait()
		if a, b := asmtest.Digest(*got.ExistingClass), asmtest.Digest(*want.ExistingClass); a != b {
			t.Errorf("%s: served %s, in process %s", m.Name(), a, b)
		}
	}
}

// The model kind tells methods apart by any exported setting, and not by
// hooks or run state.
func TestKindFingerprintsSettings(t *testing.T) {
	a, b := fedAvg(false), fedAvg(false)
	b.Options.Progress = func(fl.RoundEvent) {}
	b.Options.Stop = func() error { return nil }
	ka, _, err := Kind(a, 2)
	if err != nil {
		t.Fatal(err)
	}
	if kb, _, _ := Kind(b, 2); kb != ka {
		t.Errorf("hooks changed the kind: %s, %s", ka, kb)
	}
	b.Options.LocalSteps++
	if kb, _, _ := Kind(b, 2); kb == ka {
		t.Errorf("another number of local steps, the same kind %s", ka)
	}
	c := fedAvg(false)
	c.Options.LR = math.Nextafter(c.Options.LR, 1)
	if kc, _, _ := Kind(c, 2); kc == ka {
		t.Errorf("a step one ulp larger, the same kind %s", ka)
	}
	if Fingerprint(map[string]int{"a": 1, "b": 2}) != Fingerprint(map[string]int{"b": 2, "a": 1}) {
		t.Error("a map's fingerprint depends on its order")
	}
}

package rpc

import (
	"context"
	"math"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
)

// testNet is a Coordinator served over an in-memory connection.
type testNet struct {
	co  *Coordinator
	lis *bufconn.Listener
	srv *grpc.Server
}

func startNet(t *testing.T, cfg ServerConfig) *testNet {
	t.Helper()
	co, err := NewCoordinator(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tn := &testNet{co: co, lis: bufconn.Listen(4 << 20), srv: co.NewServer(insecure.NewCredentials())}
	RegisterService(tn.srv, co)
	go tn.srv.Serve(co.Listener(tn.lis))
	t.Cleanup(func() { co.Finish(); tn.srv.Stop() })
	return tn
}

func (tn *testNet) dial(t *testing.T) *grpc.ClientConn {
	t.Helper()
	return tn.dialLimit(t, maxMessage)
}

// dialLimit dials with a send limit of sendLimit bytes per message.
func (tn *testNet) dialLimit(t *testing.T, sendLimit int) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(
			func(ctx context.Context, _ string) (net.Conn, error) { return tn.lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessage), grpc.MaxCallSendMsgSize(sendLimit)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// serveAll runs one Serve per client config and returns their errors when
// all have ended.
func (tn *testNet) serveAll(t *testing.T, cfgs []ClientConfig) func() []error {
	t.Helper()
	errs := make([]error, len(cfgs))
	var wg sync.WaitGroup
	for i := range cfgs {
		conn := tn.dial(t)
		cfgs[i].Backoff = 10 * time.Millisecond
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = Serve(context.Background(), conn, cfgs[i])
		}()
	}
	return func() []error { wg.Wait(); return errs }
}

func smallPolynomial(t *testing.T, n int) *data.Dataset {
	t.Helper()
	c := data.DefaultPolynomial()
	c.Existing, c.New, c.Seed, c.Test = n, 2, 7, 20
	ds, err := data.Polynomial(c)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func smallOptions(seed uint64) fl.PACPFLOptions {
	o := fl.DefaultPACPFLOptions()
	o.Server.K, o.Server.Rounds, o.Server.ClientsPerRound, o.Server.Batch, o.Server.Seed = 2, 4, 3, 6, seed
	o.Server.LR = 0.01
	o.Bounds.PriorSamples, o.Bounds.Learned = 0, nil
	o.Beta, _ = fl.ParseTemperature("sqrt")
	return o
}

func gpConfigs(ds *data.Dataset, tokens [][]byte) []ClientConfig {
	cfgs := make([]ClientConfig, len(ds.Existing))
	for i := range cfgs {
		cfgs[i] = GPClient(i, &ds.Existing[i], ds.D, fl.GPInference{})
		if tokens != nil {
			cfgs[i].Token = tokens[i]
		}
	}
	return cfgs
}

func sameBits(t *testing.T, what string, a, b []float64) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: lengths %d and %d", what, len(a), len(b))
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			t.Fatalf("%s[%d]: %v (networked) vs %v (in process)", what, i, a[i], b[i])
		}
	}
}

// runNetworked trains PAC-PFL on ds with remote clients over tn.
func runNetworked(t *testing.T, tn *testNet, ds *data.Dataset, o fl.PACPFLOptions) (*fl.MethodResult, error) {
	t.Helper()
	o.Clients = func(g *fl.GPModel) ([]fl.Client, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := tn.co.WaitReady(ctx); err != nil {
			return nil, err
		}
		return tn.co.Clients(), nil
	}
	o.Server.Workers = o.Server.ClientsPerRound
	res, err := fl.RunPACPFL(ds, fl.NewGPModel(ds.D), o, fl.MethodPACPFL)
	tn.co.Finish()
	return res, err
}

// With every client answering, the networked run is bit-identical to the
// in-process one: particles, LML history and metrics.
func TestNetworkedEqualsInProcess(t *testing.T) {
	ds := smallPolynomial(t, 5)
	o := smallOptions(3)
	want, err := fl.RunPACPFL(ds, fl.NewGPModel(ds.D), o, fl.MethodPACPFL)
	if err != nil {
		t.Fatal(err)
	}
	var tokens [][]byte
	for range ds.Existing {
		tokens = append(tokens, NewToken())
	}
	tn := startNet(t, ServerConfig{Clients: 5, ModelKind: ModelGP, Dim: fl.NewGPModel(ds.D).Dim(),
		Beta: o.Beta.String(), Tokens: tokens})
	wait := tn.serveAll(t, gpConfigs(ds, tokens))
	got, err := runNetworked(t, tn, ds, o)
	if err != nil {
		t.Fatal(err)
	}
	for i, err := range wait() {
		if err != nil {
			t.Errorf("client %d: %v", i, err)
		}
	}
	sameBits(t, "particles", got.Train.Particles, want.Train.Particles)
	sameBits(t, "mean LML", got.Train.MeanLML, want.Train.MeanLML)
	sameBits(t, "existing RSMSE", got.Existing.RSMSE, want.Existing.RSMSE)
	sameBits(t, "new CE", got.New.CE, want.New.CE)
}

// With sparse inference too (the bound with inducing inputs each client
// chooses from its own data) the networked run equals the in-process one to
// the bit; a client with another inference setting is refused.
func TestNetworkedSparseEqualsInProcess(t *testing.T) {
	ds := smallPolynomial(t, 4)
	o := smallOptions(5)
	gi := fl.GPInference{Mode: fl.InferenceSparse, Inducing: 5, Seed: 5}
	g := fl.NewGPModel(ds.D)
	g.Inference = gi
	want, err := fl.RunPACPFL(ds, g, o, fl.MethodPACPFL)
	if err != nil {
		t.Fatal(err)
	}
	tn := startNet(t, ServerConfig{Clients: 4, ModelKind: GPKind(gi), Dim: g.Dim(), Beta: o.Beta.String()})
	cfgs := make([]ClientConfig, 4)
	for i := range cfgs {
		cfgs[i] = GPClient(i, &ds.Existing[i], ds.D, gi)
	}
	other := GPClient(0, &ds.Existing[0], ds.D, fl.GPInference{Mode: fl.InferenceSparse, Inducing: 6, Seed: 5})
	if err := Serve(context.Background(), tn.dial(t), other); err == nil ||
		!strings.Contains(err.Error(), "the server trains") {
		t.Errorf("a client with M = 6 against a server with M = 5: %v", err)
	}
	wait := tn.serveAll(t, cfgs)
	o.Clients = func(*fl.GPModel) ([]fl.Client, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := tn.co.WaitReady(ctx); err != nil {
			return nil, err
		}
		return tn.co.Clients(), nil
	}
	o.Server.Workers = o.Server.ClientsPerRound
	got, err := fl.RunPACPFL(ds, g, o, fl.MethodPACPFL)
	tn.co.Finish()
	if err != nil {
		t.Fatal(err)
	}
	for i, err := range wait() {
		if err != nil {
			t.Errorf("client %d: %v", i, err)
		}
	}
	sameBits(t, "particles", got.Train.Particles, want.Train.Particles)
	sameBits(t, "mean LML", got.Train.MeanLML, want.Train.MeanLML)
	sameBits(t, "existing RSMSE", got.Existing.RSMSE, want.Existing.RSMSE)
}

// A wrong token, a token of another client, an unknown id: refused, and the
// client gives up instead of retrying.
func TestBadCredentialsRefused(t *testing.T) {
	ds := smallPolynomial(t, 2)
	tokens := [][]byte{NewToken(), NewToken()}
	var logMu sync.Mutex
	var log []string
	tn := startNet(t,
		ServerConfig{Clients: 2, ModelKind: ModelGP, Dim: fl.NewGPModel(ds.D).Dim(), Beta: "m", Tokens: tokens,
			Log: func(f string, a ...any) { logMu.Lock(); log = append(log, f); logMu.Unlock() }})
	cases := []struct {
		name  string
		id    int
		token []byte
		want  string
	}{
		{"wrong token", 0, NewToken(), "Unauthenticated"},
		{"other client's token", 0, tokens[1], "Unauthenticated"},
		{"no token", 1, nil, "Unauthenticated"},
		{"unknown id", 5, tokens[0], "out of range"},
	}
	for _, c := range cases {
		cfg := GPClient(c.id, &ds.Existing[0], ds.D, fl.GPInference{})
		cfg.Token = c.token
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := Serve(ctx, tn.dial(t), cfg)
		cancel()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
	// Another model, or another dimension: refused, naming both.
	for _, mod := range []func(*ClientConfig){
		func(c *ClientConfig) { c.ModelKind = "bnn mlp hidden=16 classes=10 L=2" },
		func(c *ClientConfig) { c.Dim++ },
	} {
		cfg := GPClient(0, &ds.Existing[0], ds.D, fl.GPInference{})
		cfg.Token = tokens[0]
		mod(&cfg)
		if err := Serve(context.Background(), tn.dial(t), cfg); err == nil ||
			!strings.Contains(err.Error(), "the server trains") {
			t.Errorf("model %q dφ %d: err = %v", cfg.ModelKind, cfg.Dim, err)
		}
	}
	if tn.co.Connected() != 0 {
		t.Errorf("%d clients connected after refusals", tn.co.Connected())
	}
}

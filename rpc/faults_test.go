package rpc

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/rpc/pb"
	"github.com/pacpfl/pacpfl/svgd"
)

// affine returns G = w + 0.5·φ + noise from the stream; sleep delays it,
// hook runs after the computation.
type affine struct {
	w     float64
	sleep time.Duration
	hook  func()
}

func (a *affine) Update(p []float64, k, d, b int, rng *rand.Rand, g []float64) (float64, error) {
	for i := range g {
		g[i] = a.w + 0.5*p[i] + 0.01*rng.NormFloat64()
	}
	time.Sleep(a.sleep)
	if a.hook != nil {
		a.hook()
	}
	return a.w, nil
}

type failing struct{}

func (failing) Update([]float64, int, int, int, *rand.Rand, []float64) (float64, error) {
	return 0, errors.New("always fails")
}

const testDim = 4

func affineConfig(id int, c fl.Client) ClientConfig {
	return ClientConfig{ID: id, ModelKind: "affine", Dim: testDim, DataSize: 1, Backoff: 5 * time.Millisecond,
		New: func(string) (fl.Client, error) { return c, nil }}
}

func runFL(t *testing.T, cfg fl.Config, clients []fl.Client) *fl.Result {
	t.Helper()
	prior, _ := svgd.Isotropic(make([]float64, testDim), 1)
	s, err := fl.NewServer(cfg, prior, clients)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Run()
	if err != nil {
		t.Fatal(err)
	}
	return res
}

type logBuf struct {
	mu    sync.Mutex
	lines []string
}

func (l *logBuf) logf(format string, a ...any) {
	l.mu.Lock()
	l.lines = append(l.lines, strings.TrimSpace(fmt.Sprintf(format, a...)))
	l.mu.Unlock()
}

func (l *logBuf) has(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, x := range l.lines {
		if strings.Contains(x, s) {
			return true
		}
	}
	return false
}

// A client slower than the round deadline is dropped (quorum 2 of 3) and
// its session cut (nothing of it stays busy on the server); it rejoins and
// ends without error: the same particles as an in-process run in which that
// client always fails.
func TestDeadlineQuorumLateDiscarded(t *testing.T) {
	var lg logBuf
	tn := startNet(t,
		ServerConfig{Clients: 3, ModelKind: "affine", Dim: testDim, RoundTimeout: 500 * time.Millisecond, Log: lg.logf})
	a, b := &affine{w: 1}, &affine{w: -0.5}
	slow := &affine{w: 3, sleep: 1500 * time.Millisecond}
	wait := tn.serveAll(t, []ClientConfig{affineConfig(0, a), affineConfig(1, b), affineConfig(2, slow)})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tn.co.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	cfg := fl.Config{K: 2, Rounds: 2, ClientsPerRound: 3, LR: 0.1, Tau: 0.5, Seed: 2, Quorum: 2, Workers: 3}
	got := runFL(t, cfg, tn.co.Clients())
	tn.co.Finish()
	cfg.Workers = 0
	want := runFL(t, cfg, []fl.Client{&affine{w: 1}, &affine{w: -0.5}, failing{}})
	sameBits(t, "particles", got.Particles, want.Particles)
	for i, err := range wait() {
		if err != nil {
			t.Errorf("client %d: %v", i, err)
		}
	}
	for _, s := range []string{"client 2 late in round 1", "client 2 disconnected"} {
		if !lg.has(s) {
			t.Errorf("log lacks %q: %q", s, lg.lines)
		}
	}
}

// A client whose connection breaks after computing its update reconnects;
// the interrupted update is sent again and the run is bit-identical.
func TestReconnectResends(t *testing.T) {
	var lg logBuf
	tn := startNet(t, ServerConfig{Clients: 2, ModelKind: "affine", Dim: testDim, Log: lg.logf})
	ctx1, cut := context.WithCancel(context.Background())
	var once sync.Once
	flaky := &affine{w: 2}
	flaky.hook = func() { once.Do(cut) } // the first result never leaves
	conn0, conn1 := tn.dial(t), tn.dial(t)
	errs := make(chan error, 3)
	go func() { errs <- Serve(context.Background(), conn0, affineConfig(0, &affine{w: 1})) }()
	go func() {
		err := Serve(ctx1, conn1, affineConfig(1, flaky))
		if !errors.Is(err, context.Canceled) {
			errs <- err
			return
		}
		errs <- Serve(context.Background(), conn1, affineConfig(1, flaky)) // the client comes back
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tn.co.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	cfg := fl.Config{K: 2, Rounds: 3, ClientsPerRound: 2, LR: 0.1, Tau: 0.5, Seed: 5, Workers: 2}
	got := runFL(t, cfg, tn.co.Clients())
	tn.co.Finish()
	want := runFL(t, cfg, []fl.Client{&affine{w: 1}, &affine{w: 2}})
	sameBits(t, "particles", got.Particles, want.Particles)
	for range 2 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if !lg.has("client 1 rejoined") {
		t.Errorf("log lacks the rejoin: %q", lg.lines)
	}
}

// A hand-written client that answers badly: wrong shape, oversized, bad
// checksum, too many chunk bytes, no header: each refused with a clear
// error, the session closed with the matching status.
func TestBadResultsRefused(t *testing.T) {
	const k = 2
	good, _ := encodeFloats(nil, make([]float64, k*testDim))
	cases := []struct {
		name    string
		payload *pb.Payload
		chunks  [][]byte
		code    codes.Code
		want    string
	}{
		{"wrong shape", &pb.Payload{Size: 8 * 3}, [][]byte{make([]byte, 24)}, codes.InvalidArgument, "want 64"},
		{"oversized", &pb.Payload{Size: 1 << 20}, nil, codes.ResourceExhausted, "above the limit"},
		{"bad checksum", &pb.Payload{Size: uint64(len(good)), Crc32C: 12345}, [][]byte{good}, codes.DataLoss,
			"checksum"},
		{"overlong chunks", &pb.Payload{Size: uint64(len(good))}, [][]byte{good[:40], good}, codes.InvalidArgument,
			"exceed"},
		{"no header", nil, nil, codes.InvalidArgument, "header missing"},
		{"message above gRPC's limit", &pb.Payload{Size: uint64(len(good))}, [][]byte{make([]byte, 2<<20)},
			codes.ResourceExhausted, "larger than max"},
	}
	for _, c := range cases {
		tn := startNet(t, ServerConfig{Clients: 1, ModelKind: "affine", Dim: testDim, MaxPayload: 1024})
		st, err := pb.NewFederationClient(tn.dialLimit(t, 8<<20)).Session(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		st.Recv() // challenge
		st.Send(&pb.ClientMessage{Msg: &pb.ClientMessage_Register{
			Register: &pb.Register{ModelKind: "affine", Dimension: testDim, Protocol: ProtocolVersion}}})
		if m, err := st.Recv(); err != nil || m.GetWelcome() == nil {
			t.Fatalf("%s: no welcome: %v", c.name, err)
		}
		upd := make(chan error, 1)
		go func() {
			_, err := tn.co.proxies[0].UpdateSeeded(fl.Work{Particles: make([]float64, k*testDim), K: k, Dim: testDim},
				make([]float64, k*testDim))
			upd <- err
		}()
		m, _ := st.Recv() // work
		w := m.GetWork()
		for range (w.Payload.Size + ChunkSize - 1) / ChunkSize {
			st.Recv()
		}
		st.Send(&pb.ClientMessage{Msg: &pb.ClientMessage_Result{Result: &pb.Result{Seq: w.Seq, Payload: c.payload}}})
		for _, b := range c.chunks {
			st.Send(&pb.ClientMessage{Msg: &pb.ClientMessage_Chunk{Chunk: &pb.Chunk{Data: b}}})
		}
		_, err = st.Recv()
		if status.Code(err) != c.code || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: session ended with %v, want %v naming %q", c.name, err, c.code, c.want)
		}
		if err := <-upd; err == nil || !strings.Contains(err.Error(), "rejected") {
			t.Errorf("%s: update error %v", c.name, err)
		}
	}
}

// A plaintext client, or one trusting another CA, never reaches a TLS
// server's service: it gives up, and no client has joined.
func TestTLSRefusesPlaintextAndForeignCA(t *testing.T) {
	certs, err := GenerateCerts([]string{"127.0.0.1"}, time.Hour, 0)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := GenerateCerts([]string{"127.0.0.1"}, time.Hour, 0)
	sc, _, err := TLSFromCerts(certs, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	_, foreign, _ := TLSFromCerts(other, "127.0.0.1")
	co, _ := NewCoordinator(ServerConfig{Clients: 1, ModelKind: "affine", Dim: testDim})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(append(ServerOptions(), grpc.Creds(sc))...)
	RegisterService(srv, co)
	go srv.Serve(lis)
	defer srv.Stop()
	for name, creds := range map[string]credentials.TransportCredentials{"plaintext": insecure.NewCredentials(),
		"foreign CA": foreign} {
		conn, err := Dial(lis.Addr().String(), creds)
		if err != nil {
			t.Fatal(err)
		}
		cfg := affineConfig(0, &affine{})
		cfg.GiveUp = 300 * time.Millisecond
		err = Serve(context.Background(), conn, cfg)
		conn.Close()
		if err == nil || status.Code(errors.Unwrap(err)) != codes.Unavailable {
			t.Errorf("%s: err = %v, want giving up on an unavailable server", name, err)
		}
	}
	if n := co.Connected(); n != 0 {
		t.Errorf("%d clients joined", n)
	}
}

// Shutdown (a server stopped to be resumed) ends the sessions without Done:
// the clients keep retrying instead of exiting; Finish sends Done.
func TestShutdownKeepsClientsRetrying(t *testing.T) {
	tn := startNet(t, ServerConfig{Clients: 1, ModelKind: "affine", Dim: testDim})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	conn := tn.dial(t)
	go func() { errc <- Serve(ctx, conn, affineConfig(0, &affine{})) }()
	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	if err := tn.co.WaitReady(wctx); err != nil {
		t.Fatal(err)
	}
	tn.co.Shutdown()
	if _, err := tn.co.proxies[0].UpdateSeeded(fl.Work{Particles: make([]float64, testDim), K: 1, Dim: testDim},
		make([]float64, testDim)); !errors.Is(err, ErrStopped) {
		t.Errorf("update after Shutdown: %v", err)
	}
	select {
	case err := <-errc:
		t.Fatalf("client exited after Shutdown: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("client: %v", err)
	}
}

// A connection that never registers is dropped after RegisterTimeout.
func TestSilentConnectionDropped(t *testing.T) {
	var lg logBuf
	tn := startNet(t, ServerConfig{Clients: 1, ModelKind: "affine", Dim: testDim,
		RegisterTimeout: 100 * time.Millisecond, Log: lg.logf})
	st, err := pb.NewFederationClient(tn.dial(t)).Session(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if m, err := st.Recv(); err != nil || m.GetChallenge() == nil {
		t.Fatalf("no challenge: %v", err)
	}
	_, err = st.Recv() // say nothing
	// The stream's deadline and the connection's (Listener) are the same:
	// either ends it.
	if c := status.Code(err); (c != codes.DeadlineExceeded && c != codes.Unavailable) ||
		!lg.has("no registration within") {
		t.Errorf("err = %v, log %q", err, lg.lines)
	}
}

// Mutual TLS: a client may register only as the id its certificate names;
// one without a certificate never gets through the handshake.
func TestMutualTLS(t *testing.T) {
	dir := t.TempDir()
	certs, err := GenerateCerts([]string{"127.0.0.1"}, time.Hour, 2)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := dir + "/" + name
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ca, scert, skey := write("ca.pem", certs.CA), write("s.pem", certs.ServerCert), write("s.key", certs.ServerKey)
	c0, k0 := write("c0.pem", certs.ClientCert[0]), write("c0.key", certs.ClientKey[0])
	c1, k1 := write("c1.pem", certs.ClientCert[1]), write("c1.key", certs.ClientKey[1])
	sc, err := ServerTLS(scert, skey, ca)
	if err != nil {
		t.Fatal(err)
	}
	var lg logBuf
	co, _ := NewCoordinator(
		ServerConfig{Clients: 2, ModelKind: "affine", Dim: testDim, ClientCerts: true, Log: lg.logf})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(append(ServerOptions(), grpc.Creds(sc))...)
	RegisterService(srv, co)
	go srv.Serve(lis)
	defer srv.Stop()
	addr := lis.Addr().String()
	serve := func(id int, cert, key string) error {
		creds, err := ClientTLS(ca, addr, cert, key)
		if err != nil {
			t.Fatal(err)
		}
		conn, err := Dial(addr, creds)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		cfg := affineConfig(id, &affine{})
		cfg.GiveUp = 300 * time.Millisecond
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return Serve(ctx, conn, cfg)
	}
	if err := serve(0, c1, k1); status.Code(err) != codes.PermissionDenied {
		t.Errorf("client 1's certificate registering as 0: %v", err)
	}
	if err := serve(1, "", ""); err == nil || status.Code(errors.Unwrap(err)) != codes.Unavailable {
		t.Errorf("no certificate: %v", err)
	}
	if co.Connected() != 0 {
		t.Fatal("a refused client joined")
	}
	done := make(chan error, 1)
	go func() { done <- serve(0, c0, k0) }()
	wctx, wcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer wcancel()
	for co.Connected() == 0 && wctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	co.Finish()
	if err := <-done; err != nil {
		t.Errorf("client 0 with its own certificate: %v", err)
	}
	if !lg.has("client 0 joined") || !lg.has("client certificate of client 1 used to register as client 0") {
		t.Errorf("log: %q", lg.lines)
	}
}

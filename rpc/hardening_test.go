package rpc

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"math"
	"math/rand/v2"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/option"
	"github.com/pacpfl/pacpfl/rpc/pb"
)

// tcpNet is a Coordinator served on 127.0.0.1 over TCP behind its
// Listener, with TLS when tlsConf is wanted.
type tcpNet struct {
	co     *Coordinator
	addr   string
	client credentials.TransportCredentials
	tls    *tls.Config // the client side's, for raw connections (nil: plaintext)
}

func startTCP(t *testing.T, cfg ServerConfig, useTLS bool) *tcpNet {
	t.Helper()
	co, err := NewCoordinator(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tn := &tcpNet{co: co, client: insecure.NewCredentials()}
	var sc credentials.TransportCredentials = insecure.NewCredentials()
	if useTLS {
		c, err := GenerateCerts([]string{"127.0.0.1"}, time.Hour, 0)
		if err != nil {
			t.Fatal(err)
		}
		if sc, tn.client, err = TLSFromCerts(c, "127.0.0.1"); err != nil {
			t.Fatal(err)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(c.CA)
		tn.tls = &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", NextProtos: []string{"h2"},
			MinVersion: tls.VersionTLS13}
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tn.addr = lis.Addr().String()
	srv := co.NewServer(sc)
	RegisterService(srv, co)
	go srv.Serve(co.Listener(lis))
	t.Cleanup(func() { co.Finish(); srv.Stop() })
	return tn
}

func (tn *tcpNet) dial(t *testing.T) *grpc.ClientConn {
	t.Helper()
	conn, err := Dial(tn.addr, tn.client)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// rawFrom opens a TCP connection to addr from the loopback address src.
func rawFrom(t *testing.T, src, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 2 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// closedWithin reports whether the server closes c within d (a read
// returns EOF or a reset; nothing is sent).
func closedWithin(c net.Conn, d time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, 4096)
	for {
		_, err := c.Read(buf)
		if err == nil {
			continue // the server's HTTP/2 settings, pings
		}
		var ne net.Error
		return !(errors.As(err, &ne) && ne.Timeout())
	}
}

// Connections that have not registered are capped in all and per IP
// address; at the total cap a connection from an address holding fewer
// takes the place of the oldest of the address holding the most, and one
// from an address holding as many as any is closed on arrival; a silent
// one is closed at the registration deadline, bare TCP or after the TLS
// handshake; then a real client still gets in.
func TestUnregisteredConnectionsCapped(t *testing.T) {
	var lg logBuf
	tn := startTCP(t,
		ServerConfig{Clients: 1, ModelKind: "affine", Dim: testDim, RegisterTimeout: 700 * time.Millisecond,
			Limits: Limits{MaxUnauth: 4, MaxUnauthPerHost: 3}, Log: lg.logf}, true)
	start := time.Now()
	a1 := rawFrom(t, "127.0.0.1", tn.addr)
	time.Sleep(20 * time.Millisecond) // a1 is the oldest
	a2, a3 := rawFrom(t, "127.0.0.1", tn.addr), rawFrom(t, "127.0.0.1", tn.addr)
	a4 := rawFrom(t, "127.0.0.1", tn.addr)
	if !closedWithin(a4, 300*time.Millisecond) {
		t.Error("a fourth unregistered connection from 127.0.0.1 stayed open (per-address cap 3)")
	}
	// A TLS connection that completes the handshake and opens no stream:
	// the fourth unregistered connection, the cap.
	b1 := tls.Client(rawFrom(t, "127.0.0.2", tn.addr), tn.tls)
	if err := b1.Handshake(); err != nil {
		t.Fatal(err)
	}
	b1.Write([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00"))
	// 127.0.0.3 holds none: it takes the place of a1, the oldest of
	// 127.0.0.1, which holds the most (3).
	c1 := rawFrom(t, "127.0.0.3", tn.addr)
	if !closedWithin(a1, 300*time.Millisecond) {
		t.Error("at the cap, a connection from a new address did not take the oldest one's place")
	}
	if closedWithin(c1, 100*time.Millisecond) {
		t.Error("the connection from a new address was closed")
	}
	// 127.0.0.2 holds 1, 127.0.0.1 now 2: one more from .2 would hold as
	// many as any: refused.
	b2 := rawFrom(t, "127.0.0.2", tn.addr)
	if !closedWithin(b2, 300*time.Millisecond) {
		t.Error("at the cap, a connection from an address that would hold as many as any stayed open")
	}
	for name, c := range map[string]net.Conn{"bare TCP": a2, "bare TCP 2": a3, "TLS without a stream": b1,
		"bare TCP from .3": c1} {
		if !closedWithin(c, 2*time.Second) {
			t.Errorf("%s: still open %v after it was accepted (registration deadline 700ms)", name, time.Since(start))
		}
	}
	if open, unauth := tn.co.guard.counts(); open != 0 || unauth != 0 {
		t.Errorf("guard counts %d open, %d unregistered after all closed", open, unauth)
	}
	errc := make(chan error, 1)
	go func() { errc <- Serve(context.Background(), tn.dial(t), affineConfig(0, &affine{})) }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tn.co.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	// At the end of training the connections that have not registered are
	// closed at once: they would only hold the shutdown up.
	late := rawFrom(t, "127.0.0.4", tn.addr)
	time.Sleep(50 * time.Millisecond)
	tn.co.Finish()
	if !closedWithin(late, 300*time.Millisecond) {
		t.Error("an unregistered connection outlived Finish")
	}
	if err := <-errc; err != nil {
		t.Errorf("client after the attack: %v", err)
	}
	for _, s := range []string{"not registered (the limit per address)", "not registered (the limit), 1 of them from " +
		"127.0.0.2", "its place went to 127.0.0.3", "no registration within"} {
		if !lg.has(s) {
			t.Errorf("log lacks %q: %q", s, lg.lines)
		}
	}
}

// A client that registers again on a new connection takes its id over and
// its old connection is closed (one per client); a registered connection
// whose session ended is closed after IdleTimeout.
func TestOneConnectionPerClientAndIdle(t *testing.T) {
	tn := startTCP(t, ServerConfig{Clients: 1, ModelKind: "affine", Dim: testDim,
		Limits: Limits{IdleTimeout: 300 * time.Millisecond}}, false)
	register := func(conn *grpc.ClientConn) (pb.Federation_SessionClient, context.CancelFunc) {
		ctx, cancel := context.WithCancel(context.Background())
		st, err := pb.NewFederationClient(conn).Session(ctx)
		if err != nil {
			t.Fatal(err)
		}
		st.Recv()
		st.Send(&pb.ClientMessage{Msg: &pb.ClientMessage_Register{
			Register: &pb.Register{ModelKind: "affine", Dimension: testDim, Protocol: ProtocolVersion}}})
		if m, err := st.Recv(); err != nil || m.GetWelcome() == nil {
			t.Fatalf("no welcome: %v", err)
		}
		return st, cancel
	}
	stA, cancelA := register(tn.dial(t))
	defer cancelA()
	_, cancelB := register(tn.dial(t))
	defer cancelB()
	if _, err := stA.Recv(); err == nil || !strings.Contains(err.Error(), "replaced") {
		t.Errorf("old session: %v", err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		open, _ := tn.co.guard.counts()
		if open == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d connections open, want only the new one", open)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancelB() // the session ends; the connection stays until it is idle
	deadline = time.Now().Add(3 * time.Second)
	for {
		open, _ := tn.co.guard.counts()
		if open == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a registered connection without a session still open after %v (idle timeout 300ms)",
				3*time.Second)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// lmlClient returns the affine gradient with a chosen mean ln Z^C.
type lmlClient struct {
	affine
	lml float64
	err error
}

func (c *lmlClient) Update(p []float64, k, d, b int, rng *rand.Rand, g []float64) (float64, error) {
	c.affine.Update(p, k, d, b, rng, g)
	return c.lml, c.err
}

// A client whose updates are refused (a mean ln Z^C of NaN, ±Inf or 1e300)
// is told why, stays in the federation and rejoins for the next round; with
// a quorum the run finishes and equals, to the bit (particles and the LML
// history), a run in which that client always fails.
func TestRefusedUpdatesClientStays(t *testing.T) {
	for _, bad := range []float64{math.NaN(), math.Inf(1), 1e300, -1e300} {
		var lg logBuf
		// A deadline, so that a client that left makes the run fail, not hang.
		tn := startNet(t,
			ServerConfig{Clients: 3, ModelKind: "affine", Dim: testDim, RoundTimeout: 3 * time.Second, Log: lg.logf})
		liar := &lmlClient{affine: affine{w: 7}, lml: bad}
		wait := tn.serveAll(t,
			[]ClientConfig{affineConfig(0, &affine{w: 1}), affineConfig(1, &affine{w: -0.5}), affineConfig(2, liar)})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := tn.co.WaitReady(ctx); err != nil {
			t.Fatal(err)
		}
		cancel()
		cfg := fl.Config{K: 2, Rounds: 4, ClientsPerRound: 3, LR: 0.1, Tau: 0.5, Seed: 2, Quorum: 2, Workers: 3}
		got := runFL(t, cfg, tn.co.Clients())
		tn.co.Finish()
		cfg.Workers = 0
		want := runFL(t, cfg, []fl.Client{&affine{w: 1}, &affine{w: -0.5}, failing{}})
		sameBits(t, "particles", got.Particles, want.Particles)
		sameBits(t, "mean LML", got.MeanLML, want.MeanLML)
		for i, err := range wait() {
			if err != nil {
				t.Errorf("lml %v: client %d ended with %v, want it to stay until Done", bad, i, err)
			}
		}
		if !lg.has("client 2: update of round 4 rejected: mean ln Z^C") {
			t.Errorf("lml %v: log %q", bad, lg.lines)
		}
	}
}

// A client's error text (a megabyte with newlines and terminal escapes,
// made to look like server log lines) reaches the log as one escaped line
// of bounded length.
func TestClientErrorTextCleaned(t *testing.T) {
	var lg logBuf
	tn := startNet(t, ServerConfig{Clients: 2, ModelKind: "affine", Dim: testDim, Log: lg.logf})
	forged := strings.Repeat(
		"x\n2026/11/26 12:00:00.000000 pacpfl server: client 0 joined from 10.0.0.1 (1 of 2)\x1b[2J\r", 12000)
	wait := tn.serveAll(t,
		[]ClientConfig{affineConfig(0, &affine{w: 1}), affineConfig(1, &lmlClient{err: errors.New(forged)})})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tn.co.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	runFL(t, fl.Config{K: 1, Rounds: 2, ClientsPerRound: 2, LR: 0.1, Tau: 0.5, Seed: 2, Quorum: 1, Workers: 2},
		tn.co.Clients())
	tn.co.Finish()
	wait()
	lg.mu.Lock()
	defer lg.mu.Unlock()
	found := 0
	for _, l := range lg.lines {
		if strings.ContainsAny(l, "\n\r\x1b") || len(l) > 4*MaxLoggedText {
			t.Errorf("log line of %d bytes with a control character or too long: %.200q", len(l), l)
		}
		if strings.HasPrefix(l, "client 1 failed in round") && strings.Contains(l, `x\n2026/11/26`) &&
			strings.Contains(l, "more bytes)") {
			found++
		}
	}
	if found == 0 {
		t.Errorf("no cleaned error line: %q", lg.lines)
	}
}

// A session whose update misses the deadline is cut at once (the server
// holds nothing of it while the client computes), not when the client
// finally answers.
func TestStalledSessionCut(t *testing.T) {
	tn := startNet(t, ServerConfig{Clients: 2, ModelKind: "affine", Dim: testDim, RoundTimeout: 200 * time.Millisecond})
	var calls atomic.Int32
	slow := &affine{w: 3, hook: func() {
		if calls.Add(1) == 1 {
			time.Sleep(3 * time.Second)
		}
	}}
	wait := tn.serveAll(t, []ClientConfig{affineConfig(0, &affine{w: 1}), affineConfig(1, slow)})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tn.co.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	runFL(t, fl.Config{K: 1, Rounds: 1, ClientsPerRound: 2, LR: 0.1, Tau: 0.5, Seed: 2, Quorum: 1, Workers: 2},
		tn.co.Clients())
	time.Sleep(300 * time.Millisecond)
	if n := tn.co.Connected(); n != 1 || time.Since(start) > 2*time.Second {
		t.Errorf("%d sessions %v after the round began (deadline 200 ms; the slow client computes for 3 s), want 1", n,
			time.Since(start))
	}
	tn.co.Finish()
	for i, err := range wait() {
		if err != nil {
			t.Errorf("client %d: %v", i, err)
		}
	}
}

// fakeServer plays a malicious server: it sends a challenge, then welcome.
type fakeServer struct {
	pb.UnimplementedFederationServer
	welcome *pb.Welcome
	done    string
}

func (f *fakeServer) Session(st pb.Federation_SessionServer) error {
	st.Send(&pb.ServerMessage{Msg: &pb.ServerMessage_Challenge{Challenge: &pb.Challenge{Nonce: make([]byte, 32)}}})
	if _, err := st.Recv(); err != nil {
		return err
	}
	if f.welcome != nil {
		return st.Send(&pb.ServerMessage{Msg: &pb.ServerMessage_Welcome{Welcome: f.welcome}})
	}
	return st.Send(&pb.ServerMessage{Msg: &pb.ServerMessage_Done{Done: &pb.Done{Reason: f.done}}})
}

// A malicious server's Welcome is checked before the client builds
// anything from it (a class list sizes a classification client's network),
// and its texts are cleaned before they are logged.
func TestMaliciousServerWelcome(t *testing.T) {
	classes := func(n int) []string {
		c := make([]string, n)
		for i := range c {
			c[i] = strings.Repeat("c", 8) + string(rune('a'+i%26)) + strings.Repeat("z", i/26%50) +
				string(rune('0'+i/1300))
		}
		return c
	}
	uniq := classes(20000)
	cases := []struct {
		name string
		wel  *pb.Welcome
		want string
	}{
		{"too many classes", &pb.Welcome{Beta: "m", Classes: uniq}, "20000 class labels"},
		{"long label", &pb.Welcome{Beta: "m", Classes: []string{"a", strings.Repeat("b", 1000)}}, "1000 bytes long"},
		{"duplicate label", &pb.Welcome{Beta: "m", Classes: []string{"a\n", "a\n"}}, `label "a\n" twice`},
		{"mismatched standardisation", &pb.Welcome{Beta: "m", Standardisation: &pb.Standardisation{
			XMean: []float64{0, 1}, XStd: []float64{1}, YStd: 1}}, "2 means and 1 scales"},
		{"zero scale", &pb.Welcome{Beta: "m",
			Standardisation: &pb.Standardisation{XMean: []float64{0}, XStd: []float64{0}, YStd: 1}}, "feature 0"},
		{"NaN target scale", &pb.Welcome{Beta: "m", Standardisation: &pb.Standardisation{YStd: math.NaN()}},
			"of the target"},
		{"long temperature", &pb.Welcome{Beta: strings.Repeat("9", 1<<16)}, "temperature is 65536 bytes"},
	}
	for _, c := range cases {
		if len(c.wel.Classes) > 0 && c.name == "too many classes" {
			seen := map[string]bool{}
			for _, l := range c.wel.Classes {
				if seen[l] {
					t.Fatalf("test classes not distinct: %q", l)
				}
				seen[l] = true
			}
		}
		err, prepared := runAgainstFake(t, &fakeServer{welcome: c.wel})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
		var fe *option.FieldError
		if c.name == "too many classes" && (!errors.As(err, &fe) || fe.Fields[0] != "MaxClasses") {
			t.Errorf("%s: err = %v, want a FieldError of MaxClasses", c.name, err)
		}
		if prepared {
			t.Errorf("%s: the client built its model from the refused Welcome", c.name)
		}
	}
	// A Welcome whose classes make a model too large for a payload: the
	// model is refused before the client builds it.
	cfg := affineConfig(0, &affine{})
	cfg.Dim, cfg.MaxPayload = 0, 1<<10
	built := false
	cfg.Prepare = func(_ *data.Scaling, classes []string) (int, error) { return 100 * len(classes), nil }
	cfg.New = func(string) (fl.Client, error) { built = true; return &affine{}, nil }
	if err := serveFake(t, &fakeServer{welcome: &pb.Welcome{Beta: "m", Classes: classes(500)}}, cfg); err == nil ||
		!strings.Contains(err.Error(), "exceeds the payload limit") || built {
		t.Errorf("a model of 500 classes above a 1 KiB payload limit: err = %v, built %v", err, built)
	}
	// A Done reason made to forge client log lines is logged as one line.
	var lg logBuf
	cfg = affineConfig(0, &affine{})
	cfg.Log = lg.logf
	if err := serveFake(t, &fakeServer{done: strings.Repeat(
		"over\n2026/11/26 pacpfl client: client 0: registered\x1b]0;pwned\x07", 5000)}, cfg); err != nil {
		t.Fatal(err)
	}
	lg.mu.Lock()
	defer lg.mu.Unlock()
	for _, l := range lg.lines {
		if strings.ContainsAny(l, "\n\x1b\x07") || len(l) > 4*MaxLoggedText {
			t.Errorf("client log line of %d bytes with a control character: %.200q", len(l), l)
		}
	}
}

func runAgainstFake(t *testing.T, f *fakeServer) (err error, prepared bool) {
	t.Helper()
	cfg := affineConfig(0, &affine{})
	cfg.Dim = 0
	cfg.Prepare = func(*data.Scaling, []string) (int, error) { prepared = true; return testDim, nil }
	return serveFake(t, f, cfg), prepared
}

func serveFake(t *testing.T, f *fakeServer, cfg ClientConfig) error {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(ServerOptions()...)
	pb.RegisterFederationServer(srv, f)
	go srv.Serve(lis)
	defer srv.Stop()
	conn, err := Dial(lis.Addr().String(), insecure.NewCredentials())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cfg.GiveUp = time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return Serve(ctx, conn, cfg)
}

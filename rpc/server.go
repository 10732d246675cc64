package rpc

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/rpc/pb"
)

// ProtocolVersion is the version of the wire protocol (Register.protocol).
const ProtocolVersion = 2

// ServerConfig configures the server side of the federation.
type ServerConfig struct {
	Clients   int    // n: client ids are 0..n-1
	ModelKind string // the clients' model ("gp")
	Dim       int    // dφ, or the length of a peer method's global vector
	// VariableDim: a peer method's vectors vary in length, Dim being the
	// most entries of one.
	VariableDim bool
	Beta        string // client temperature sent to the clients
	// Tokens[i] is client i's secret; nil: no token authentication.
	Tokens [][]byte
	// DataHashes[i], if set, is the DataHash client i must report.
	DataHashes [][]byte
	// DataHint names the flags to check when a client's data hash differs
	// ("" : --seed, --clients, --extra).
	DataHint string
	// Scaling, if set, is sent to every client in its Welcome: the
	// standardisation a client reading its own CSV file applies.
	Scaling *data.Scaling
	// Classes, if set, are sent in the Welcome: the class labels of a
	// classification client reading its own CSV file, which registers
	// with dimension 0 (it learns dφ from the number of classes).
	Classes []string
	// ClientCerts: the transport verifies client certificates (mutual TLS)
	// and a client may only register as the id its certificate names.
	ClientCerts bool
	// MaxPayload limits one payload in bytes (0: DefaultMaxPayload).
	MaxPayload int64
	// RoundTimeout is how long a client's update may take, from the moment
	// the server hands it out (0: DefaultRoundTimeout; negative: no limit,
	// the server waits for a client to come back). An update not back in
	// time fails, and the client's session is cut (its connection closed)
	// so that a stalled or trickling client holds nothing.
	RoundTimeout time.Duration
	// RegisterTimeout is how long a new connection may take to register
	// (0: 10 s).
	RegisterTimeout time.Duration
	// Limits bound connections before and after registration; they apply
	// to connections accepted by Listener (and to the gRPC server of
	// NewServer).
	Limits Limits
	// Log, if set, receives one line per event (joins, refusals, late
	// results). Refusals that strangers can cause are rate-limited, and
	// every text from a client is cut and escaped (Clean).
	Log func(format string, a ...any)
}

// DefaultRoundTimeout is the deadline of a client update when
// ServerConfig.RoundTimeout is 0: a client that never answers cannot stall
// the run.
const DefaultRoundTimeout = 10 * time.Minute

// MaxLMLPerSample bounds |mean ln Z^C| / max(1, m_i) of a client's update:
// a log-likelihood of 10¹² nats per training sample is beyond anything a GP
// (noise std ≥ 10⁻³) or BNN client computes on standardised data, and
// finite numbers as large as 10³⁰⁰ would otherwise enter the report.
const MaxLMLPerSample = 1e12

// MaxLoss bounds |training loss| of a peer method's update: beyond any
// cross-entropy or bound objective of a network that has not diverged.
const MaxLoss = 1e12

// Bounds on a client's Evaluation.
const (
	maxTests = 1 << 40 // test points
	maxExtra = 1 << 10 // further numbers
)

// checkEvaluation refuses a client's score that is missing or outside its
// ranges: an accuracy in [0, 100] %, a calibration error in [0, 1], at
// least one test point, at most maxExtra finite further numbers.
func checkEvaluation(e *pb.Evaluation) (fl.ClientEval, error) {
	switch {
	case e == nil:
		return fl.ClientEval{}, errors.New("evaluation missing")
	case !(e.Accuracy >= 0 && e.Accuracy <= 100):
		return fl.ClientEval{}, fmt.Errorf("accuracy %v %% outside [0, 100]", e.Accuracy)
	case !(e.Ce >= 0 && e.Ce <= 1):
		return fl.ClientEval{}, fmt.Errorf("calibration error %v outside [0, 1]", e.Ce)
	case e.Tests < 1 || e.Tests > maxTests:
		return fl.ClientEval{}, fmt.Errorf("%d test points (want 1 to %d)", e.Tests, uint64(maxTests))
	case len(e.Extra) > maxExtra:
		return fl.ClientEval{}, fmt.Errorf("%d further numbers (at most %d)", len(e.Extra), maxExtra)
	}
	for i, v := range e.Extra {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fl.ClientEval{}, fmt.Errorf("further number %d is %v", i, v)
		}
	}
	ev := fl.ClientEval{Accuracy: e.Accuracy, CE: e.Ce, Tests: int(e.Tests)}
	if len(e.Extra) > 0 {
		ev.Extra = append([]float64(nil), e.Extra...)
	}
	return ev, nil
}

// maxDataSize bounds the training-set size a client may register.
const maxDataSize = 1 << 40

// Coordinator is the server side: a gRPC Federation service whose
// Proxies are the fl.Clients of an unchanged fl.Server loop.
type Coordinator struct {
	pb.UnimplementedFederationServer
	cfg     ServerConfig
	proxies []*Proxy

	done     chan struct{}
	doneOnce sync.Once
	stop     chan struct{} // Shutdown: sessions end, clients retry
	stopOnce sync.Once

	mu     sync.Mutex
	joined int
	ready  chan struct{} // closed once every client has registered

	guard    *guard   // nil until Listener wraps a listener
	refusals *rateLog // refusals strangers can cause
}

// NewCoordinator checks cfg and returns the coordinator.
func NewCoordinator(cfg ServerConfig) (*Coordinator, error) {
	switch {
	case cfg.Clients < 1:
		return nil, fmt.Errorf("rpc: %d clients", cfg.Clients)
	case cfg.Dim < 1:
		return nil, fmt.Errorf("rpc: model dimension %d", cfg.Dim)
	case cfg.Tokens != nil && len(cfg.Tokens) != cfg.Clients:
		return nil, fmt.Errorf("rpc: %d tokens for %d clients", len(cfg.Tokens), cfg.Clients)
	case cfg.DataHashes != nil && len(cfg.DataHashes) != cfg.Clients:
		return nil, fmt.Errorf("rpc: %d data hashes for %d clients", len(cfg.DataHashes), cfg.Clients)
	case cfg.MaxPayload < 0:
		return nil, errors.New("rpc: negative payload limit")
	}
	if cfg.MaxPayload == 0 {
		cfg.MaxPayload = DefaultMaxPayload
	}
	if cfg.RegisterTimeout <= 0 {
		cfg.RegisterTimeout = 10 * time.Second
	}
	switch {
	case cfg.RoundTimeout == 0:
		cfg.RoundTimeout = DefaultRoundTimeout
	case cfg.RoundTimeout < 0:
		cfg.RoundTimeout = 0 // no limit
	}
	lim, err := cfg.Limits.withDefaults(cfg.Clients)
	if err != nil {
		return nil, err
	}
	cfg.Limits = lim
	c := &Coordinator{cfg: cfg, done: make(chan struct{}), stop: make(chan struct{}), ready: make(chan struct{})}
	c.refusals = newRateLog(cfg.Log, 10*time.Second, 10)
	c.proxies = make([]*Proxy, cfg.Clients)
	for i := range c.proxies {
		c.proxies[i] = &Proxy{co: c, id: i, changed: make(chan struct{})}
	}
	return c, nil
}

// ServerOptions are the gRPC server options the protocol needs (message
// size limits, codec, buffers) with the default Limits (streams per
// connection, handshake timeout, keep-alive); add credentials to them, or
// use NewServer.
func ServerOptions() []grpc.ServerOption {
	lim, _ := (&Limits{}).withDefaults(0)
	return serverOptions(lim)
}

func serverOptions(lim Limits) []grpc.ServerOption {
	return []grpc.ServerOption{grpc.ForceServerCodecV2(codec{}), grpc.MaxRecvMsgSize(maxMessage),
		grpc.MaxSendMsgSize(maxMessage),
		grpc.InitialWindowSize(windowSize), grpc.InitialConnWindowSize(windowSize),
		grpc.WriteBufferSize(ioBuffer), grpc.ReadBufferSize(ioBuffer),
		grpc.MaxConcurrentStreams(uint32(lim.MaxStreamsPerConn)), grpc.ConnectionTimeout(lim.HandshakeTimeout),
		// A peer that stops answering is found by pings and closed; an idle
		// connection is also closed by the listener's guard.
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: lim.IdleTimeout, Time: time.Minute,
			Timeout: 20 * time.Second}),
	}
}

// NewServer is a gRPC server with ServerOptions and creds. Under TLS it
// reads without a buffer of its own: the TLS connection hands out whole
// decrypted records, and a second buffer would copy every byte once more.
func NewServer(creds credentials.TransportCredentials) *grpc.Server {
	return newServer(ServerOptions(), creds)
}

func newServer(opts []grpc.ServerOption, creds credentials.TransportCredentials) *grpc.Server {
	opts = append(opts, grpc.Creds(creds))
	if isTLS(creds) {
		opts = append(opts, grpc.ReadBufferSize(0))
	}
	return grpc.NewServer(opts...)
}

// NewServer is a gRPC server for c with creds and c's Limits; serve it on
// c.Listener(lis).
func (c *Coordinator) NewServer(creds credentials.TransportCredentials) *grpc.Server {
	return newServer(serverOptions(c.cfg.Limits), creds)
}

// Listener wraps lis so that c's Limits hold for its connections: the
// caps on connections (all, unregistered, unregistered per IP address),
// the pre-authentication byte budget and registration deadline, one
// connection per client, the idle timeout, and the cut of a session whose
// update misses its deadline. Call it once, before serving.
func (c *Coordinator) Listener(lis net.Listener) net.Listener {
	c.guard = newGuard(c.cfg.Limits, c.cfg.RegisterTimeout, c.refusals)
	return &guardListener{Listener: lis, g: c.guard}
}

// isTLS reports whether creds are TLS's.
func isTLS(creds credentials.TransportCredentials) bool {
	return creds != nil && creds.Info().SecurityProtocol == "tls"
}

func (c *Coordinator) logf(format string, a ...any) {
	if c.cfg.Log != nil {
		c.cfg.Log(format, a...)
	}
}

// Clients returns the n proxies as fl.Clients, in client-id order.
func (c *Coordinator) Clients() []fl.Client {
	out := make([]fl.Client, len(c.proxies))
	for i, p := range c.proxies {
		out[i] = p
	}
	return out
}

// WaitReady blocks until every client has registered once, or ctx ends.
func (c *Coordinator) WaitReady(ctx context.Context) error {
	select {
	case <-c.ready:
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		j := c.joined
		c.mu.Unlock()
		return fmt.Errorf("waiting for clients: %d of %d joined: %w", j, c.cfg.Clients, ctx.Err())
	}
}

// Finish tells every connected client that training is over (Done) and
// refuses further work; pending updates fail; connections that have not
// registered are closed.
func (c *Coordinator) Finish() {
	c.doneOnce.Do(func() {
		close(c.done)
		c.guard.closeUnregistered()
	})
}

// Shutdown ends every session with Unavailable, so that the clients keep
// retrying (a server stopped to be resumed), and fails pending updates.
func (c *Coordinator) Shutdown() { c.stopOnce.Do(func() { close(c.stop) }) }

// Done is closed by Finish.
func (c *Coordinator) Done() <-chan struct{} { return c.done }

// Stopped is closed by Shutdown.
func (c *Coordinator) Stopped() <-chan struct{} { return c.stop }

// Connected reports how many clients have a live session.
func (c *Coordinator) Connected() int {
	n := 0
	for _, p := range c.proxies {
		if s, _ := p.current(); s != nil {
			n++
		}
	}
	return n
}

// Proxy is one remote client as the fl.Server sees it (an fl.SeededClient).
type Proxy struct {
	co *Coordinator
	id int

	mu      sync.Mutex
	sess    *session
	changed chan struct{} // closed (and replaced) when sess changes
	joined  bool

	fitState // a peer method's client: its last accepted update
}

type session struct {
	jobs     chan *job
	dead     chan struct{} // closed when the session's handler returns
	sup      chan struct{} // closed when a newer session of the client replaces it
	peer     string
	conn     *guardConn // nil without Coordinator.Listener
	dataSize uint64     // m_i as registered
}

// cut ends a session whose update missed its deadline by closing its
// connection: whatever the handler waits for (a result that trickles in,
// a send to a client that does not read) fails, and the handler returns.
// The client reconnects when it is ready.
func (s *session) cut() {
	if s.conn != nil {
		s.conn.Close()
	}
}

type job struct {
	w    fl.Work
	task pb.Task
	// model and stateRound are a peer method's (Work.model, state_round).
	model      int
	stateRound int64
	grad       []float64  // the gradient (UPDATE) or the client's update (FIT)
	reply      chan reply // buffered: the handler never blocks on it

	mu        sync.Mutex
	abandoned bool // the proxy gave up (deadline): grad is no longer ours
}

type reply struct {
	lml   float64 // UPDATE: mean ln Z^C; FIT: the training loss
	eval  fl.ClientEval
	err   error
	retry bool // the session was lost: resend on the next one
}

// ErrStopped is the error of updates pending when Finish was called.
var ErrStopped = errors.New("rpc: the server is shutting down")

func (p *Proxy) current() (*session, chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sess, p.changed
}

func (p *Proxy) attach(s *session) {
	p.mu.Lock()
	old := p.sess
	p.sess = s
	close(p.changed)
	p.changed = make(chan struct{})
	first := !p.joined
	p.joined = true
	p.mu.Unlock()
	if old != nil {
		close(old.sup)
	}
	c := p.co
	if first {
		c.mu.Lock()
		c.joined++
		j := c.joined
		if j == c.cfg.Clients {
			close(c.ready)
		}
		c.mu.Unlock()
		c.logf("client %d joined from %s (%d of %d)", p.id, s.peer, j, c.cfg.Clients)
	} else {
		c.logf("client %d rejoined from %s", p.id, s.peer)
	}
}

func (p *Proxy) detach(s *session) {
	close(s.dead)
	p.mu.Lock()
	if p.sess == s {
		p.sess = nil
		close(p.changed)
		p.changed = make(chan struct{})
	}
	p.mu.Unlock()
}

// Update implements fl.Client; a remote client needs the seeds of its
// stream, which only UpdateSeeded carries.
func (p *Proxy) Update([]float64, int, int, int, *mrand.Rand, []float64) (float64, error) {
	return 0, errors.New("rpc: a remote client is driven through UpdateSeeded")
}

// UpdateSeeded sends w to the client's live session (waiting for the client
// to connect or reconnect) and writes its gradient into grad. With a round
// timeout, an update not back in time fails and its late result is
// discarded.
func (p *Proxy) UpdateSeeded(w fl.Work, grad []float64) (float64, error) {
	r, err := p.do(&job{w: w, task: pb.Task_UPDATE, grad: grad})
	return r.lml, err
}

// do hands j to the client's live session, waiting for the client to
// connect or reconnect, and returns its reply. With a round timeout, a job
// not answered in time fails and its late answer is discarded.
func (p *Proxy) do(j *job) (reply, error) {
	j.reply = make(chan reply, 1)
	w := j.w
	var deadline <-chan time.Time
	if t := p.co.cfg.RoundTimeout; t > 0 {
		timer := time.NewTimer(t)
		defer timer.Stop()
		deadline = timer.C
	}
	late := func(why string) error {
		j.mu.Lock()
		j.abandoned = true
		j.mu.Unlock()
		p.co.logf("client %d late in round %d (%s): update dropped", p.id, w.Round+1, why)
		return fmt.Errorf("no update within %v (%s)", p.co.cfg.RoundTimeout, why)
	}
	for {
		s, changed := p.current()
		if s == nil {
			select {
			case <-changed:
				continue
			case <-deadline:
				return reply{}, late("not connected")
			case <-p.co.done:
				return reply{}, ErrStopped
			case <-p.co.stop:
				return reply{}, ErrStopped
			}
		}
		select {
		case s.jobs <- j:
		case <-s.dead:
			continue
		case <-deadline:
			return reply{}, late("busy")
		case <-p.co.done:
			return reply{}, ErrStopped
		case <-p.co.stop:
			return reply{}, ErrStopped
		}
		select {
		case r := <-j.reply:
			if r.retry {
				continue
			}
			return r, r.err
		case <-deadline:
			err := late("no answer")
			s.cut()
			return reply{}, err
		case <-p.co.stop:
			return reply{}, ErrStopped
		}
	}
}

// Session implements pb.FederationServer: one client connection.
func (c *Coordinator) Session(st pb.Federation_SessionServer) error {
	from := "?"
	if pr, ok := peer.FromContext(st.Context()); ok {
		from = pr.Addr.String()
	}
	// One session at a time may be unregistered on a connection: a
	// stranger cannot multiply what it holds by opening streams.
	if !c.guard.beginSession(from) {
		return c.refuse(from, codes.Unavailable, "a registration is already under way on this connection")
	}
	registered := false
	defer func() { c.guard.endSession(from, registered) }()
	nonce := make([]byte, 32)
	rand.Read(nonce)
	if err := st.Send(
		&pb.ServerMessage{Msg: &pb.ServerMessage_Challenge{Challenge: &pb.Challenge{Nonce: nonce}}}); err != nil {
		return err
	}
	// A connection that does not register in time is dropped: it would
	// hold a handler for ever.
	type recvd struct {
		m   *pb.ClientMessage
		err error
	}
	rc := make(chan recvd, 1)
	go func() {
		m, err := st.Recv()
		rc <- recvd{m, err}
	}()
	var m *pb.ClientMessage
	select {
	case r := <-rc:
		if r.err != nil {
			return r.err
		}
		m = r.m
	case <-time.After(c.cfg.RegisterTimeout):
		return c.refuse(from, codes.DeadlineExceeded, "no registration within %v", c.cfg.RegisterTimeout)
	}
	reg := m.GetRegister()
	if reg == nil {
		return c.refuse(from, codes.InvalidArgument, "expected Register, got %T", m.Msg)
	}
	id := int(reg.ClientId)
	switch {
	case reg.Protocol != ProtocolVersion:
		return c.refuse(from, codes.FailedPrecondition, "client %d speaks protocol %d, server %d", id, reg.Protocol,
			ProtocolVersion)
	case id >= c.cfg.Clients:
		return c.refuse(from, codes.PermissionDenied, "client id %d out of range (clients 0 to %d)", id,
			c.cfg.Clients-1)
	}
	if c.cfg.Tokens != nil {
		if err := checkMAC(c.cfg.Tokens[id], nonce, reg.ClientId, reg.Mac); err != nil {
			return c.refuse(from, codes.Unauthenticated, "client %d: %v", id, err)
		}
	}
	if c.cfg.ClientCerts {
		cid, ok := ClientCertID(st.Context())
		switch {
		case !ok:
			return c.refuse(from, codes.Unauthenticated, "client %d: no verified client certificate naming a client",
				id)
		case cid != id:
			return c.refuse(from, codes.PermissionDenied,
				"client certificate of client %d used to register as client %d", cid, id)
		}
	}
	// The data first: a client started with another --seed differs there
	// before it differs in its model kind (which names the seed).
	if c.cfg.DataHashes != nil && !bytes.Equal(c.cfg.DataHashes[id], reg.DataSha256) {
		hint := c.cfg.DataHint
		if hint == "" {
			hint = "check --seed, --clients, --extra"
		}
		return c.refuse(from, codes.FailedPrecondition,
			"client %d's training data differ from the data set the server expects (%s)", id, hint)
	}
	wantDim := uint64(c.cfg.Dim)
	if c.cfg.Classes != nil {
		wantDim = 0 // the client's dφ follows from the classes it is sent
	}
	if reg.ModelKind != c.cfg.ModelKind || reg.Dimension != wantDim {
		return c.refuse(from, codes.FailedPrecondition,
			"client %d has model \"%s\" with dφ = %d; the server trains %q with dφ = %d",
			id, Clean(reg.ModelKind, 64), reg.Dimension, c.cfg.ModelKind, wantDim)
	}
	if reg.DataSize > maxDataSize {
		return c.refuse(from, codes.InvalidArgument, "client %d registers %d training samples (at most %d)", id,
			reg.DataSize, uint64(maxDataSize))
	}
	c.guard.registered(from, id)
	registered = true
	select {
	case <-c.done:
		return st.Send(&pb.ServerMessage{Msg: &pb.ServerMessage_Done{Done: &pb.Done{Reason: "training is over"}}})
	default:
	}
	wel := &pb.Welcome{Beta: c.cfg.Beta, MaxPayload: uint64(c.cfg.MaxPayload), Clients: uint32(c.cfg.Clients),
		Classes: c.cfg.Classes}
	if sc := c.cfg.Scaling; sc != nil {
		wel.Standardisation = &pb.Standardisation{XMean: sc.XMean, XStd: sc.XStd, YMean: sc.YMean, YStd: sc.YStd}
	}
	if err := st.Send(&pb.ServerMessage{Msg: &pb.ServerMessage_Welcome{Welcome: wel}}); err != nil {
		return err
	}
	s := &session{jobs: make(chan *job), dead: make(chan struct{}), sup: make(chan struct{}), peer: from,
		conn: c.guard.conn(from), dataSize: reg.DataSize}
	p := c.proxies[id]
	p.attach(s)
	defer p.detach(s)
	err := c.serve(st, s, id)
	if err != nil && st.Context().Err() != nil {
		c.logf("client %d disconnected", id)
	}
	return err
}

// refuse ends a session that has not registered; its log line is
// rate-limited (strangers can cause it at will).
func (c *Coordinator) refuse(from string, code codes.Code, format string, a ...any) error {
	msg := fmt.Sprintf(format, a...)
	c.refusals.add(code.String(), "refused a connection from %s: %s", from, msg)
	return status.Error(code, msg)
}

// serve hands the session's jobs to the client until training ends or the
// connection breaks.
func (c *Coordinator) serve(st pb.Federation_SessionServer, s *session, id int) error {
	var seq uint64
	var enc []byte
	var gbuf []float64
	var rd chunkReader
	for {
		var j *job
		select {
		case j = <-s.jobs:
		case <-c.done:
			return st.Send(&pb.ServerMessage{Msg: &pb.ServerMessage_Done{Done: &pb.Done{Reason: "training is over"}}})
		case <-st.Context().Done():
			return st.Context().Err()
		case <-c.stop:
			return status.Error(codes.Unavailable, "the server is stopping; retry later")
		case <-s.sup:
			c.logf("client %d: session replaced by a newer one", id)
			return status.Error(codes.Aborted, "replaced by a newer session of the same client")
		}
		seq++
		r, err := c.runJob(st, j, seq, &enc, &gbuf, &rd, id, s.dataSize)
		if err != nil {
			// The update never arrived: resend it on the client's next
			// session, unless it was refused.
			r.retry = r.err == nil
			j.reply <- r
			return err
		}
	}
}

// runJob sends one Work and receives its answer. A non-nil error ends the
// session; the reply is then delivered by the caller.
func (c *Coordinator) runJob(st pb.Federation_SessionServer, j *job, seq uint64, enc *[]byte, gbuf *[]float64,
	rd *chunkReader, id int, dataSize uint64) (reply, error) {
	w := j.w
	var crc uint32
	// The particles are the server's: read them only while the proxy still
	// waits (it takes j.mu to give up).
	j.mu.Lock()
	if j.abandoned {
		j.mu.Unlock()
		return reply{}, nil
	}
	*enc, crc = encodeFloats(*enc, w.Particles)
	j.mu.Unlock()
	if int64(len(*enc)) > c.cfg.MaxPayload {
		err := fmt.Errorf("particles of %d bytes above the payload limit of %d bytes", len(*enc), c.cfg.MaxPayload)
		return reply{err: err}, status.Error(codes.ResourceExhausted, err.Error())
	}
	err := st.Send(&pb.ServerMessage{Msg: &pb.ServerMessage_Work{Work: &pb.Work{
		Seq: seq, Round: uint32(w.Round), K: uint32(w.K), Dim: uint64(w.Dim), Batch: int64(w.Batch),
		Seed: w.Seed, Stream: w.Stream, Payload: &pb.Payload{Size: uint64(len(*enc)), Crc32C: crc}, Task: j.task,
		Model: uint32(j.model), StateRound: j.stateRound}}})
	if err == nil {
		err = chunks(*enc, func(b []byte) error {
			return st.Send(&pb.ServerMessage{Msg: &pb.ServerMessage_Chunk{Chunk: &pb.Chunk{Data: b}}})
		})
	}
	if err != nil {
		return reply{}, err
	}
	reject := func(code codes.Code, format string, a ...any) (reply, error) {
		err := fmt.Errorf(format, a...)
		c.logf("client %d: update of round %d rejected: %v", id, w.Round+1, err)
		return reply{err: fmt.Errorf("update rejected: %w", err)}, status.Error(code, err.Error())
	}
	// recvErr: a message above gRPC's limit is the client's fault (a
	// rejected update), any other failure a lost connection (resent).
	recvErr := func(err error) (reply, error) {
		if status.Code(err) == codes.ResourceExhausted {
			return reject(codes.ResourceExhausted, "message above the %d-byte limit: %v", maxMessage,
				status.Convert(err).Message())
		}
		return reply{}, err
	}
	m, err := st.Recv()
	if err != nil {
		return recvErr(err)
	}
	switch x := m.Msg.(type) {
	case *pb.ClientMessage_Error:
		if x.Error.Seq != seq {
			return reject(codes.InvalidArgument, "error for work %d, expected %d", x.Error.Seq, seq)
		}
		msg := Clean(x.Error.Message, MaxLoggedText)
		c.logf("client %d failed in round %d: %s", id, w.Round+1, msg)
		j.reply <- reply{err: fmt.Errorf("client failed: %s", msg)}
		return reply{}, nil
	case *pb.ClientMessage_Result:
		res := x.Result
		if res.Seq != seq {
			return reject(codes.InvalidArgument, "result for work %d, expected %d", res.Seq, seq)
		}
		want := w.K * w.Dim
		switch j.task {
		case pb.Task_UPDATE:
			if bound := MaxLMLPerSample * max(1, float64(dataSize)); !(math.Abs(res.MeanLml) <= bound) {
				return reject(codes.InvalidArgument, "mean ln Z^C = %v outside ±%g (10¹² per training sample, m_i = %d)",
					res.MeanLml, bound, dataSize)
			}
		case pb.Task_FIT:
			if !(math.Abs(res.Loss) <= MaxLoss) && !math.IsNaN(res.Loss) {
				return reject(codes.InvalidArgument, "training loss %v outside ±%g", res.Loss, MaxLoss)
			}
		case pb.Task_EVALUATE:
			ev, err := checkEvaluation(res.Evaluation)
			if err != nil {
				return reject(codes.InvalidArgument, "%v", err)
			}
			if err := checkHeader(res.Payload, 0, c.cfg.MaxPayload); err != nil {
				return reject(codes.InvalidArgument, "%v", err)
			}
			j.reply <- reply{eval: ev}
			return reply{}, nil
		}
		if err := checkHeader(res.Payload, want, c.cfg.MaxPayload); err != nil {
			code := codes.InvalidArgument
			if res.Payload != nil && res.Payload.Size > uint64(c.cfg.MaxPayload) {
				code = codes.ResourceExhausted
			}
			return reject(code, "%v", err)
		}
		if cap(*gbuf) < w.K*w.Dim {
			*gbuf = make([]float64, w.K*w.Dim)
		}
		rd.start(res.Payload, (*gbuf)[:w.K*w.Dim])
		for complete := false; !complete; {
			var m rawMessage
			if err := st.RecvMsg(&m); err != nil {
				return recvErr(err)
			}
			complete, err = rd.addRaw(&m, clientChunkField)
			m.free()
			if err != nil {
				code := codes.InvalidArgument
				if errors.As(err, new(checksumError)) {
					code = codes.DataLoss
				}
				return reject(code, "%v", err)
			}
		}
		j.mu.Lock()
		defer j.mu.Unlock()
		if j.abandoned {
			c.logf("client %d: late result of round %d discarded", id, w.Round+1)
			return reply{}, nil
		}
		if j.task == pb.Task_FIT {
			// A poisoned or diverged update never reaches the aggregation.
			if err := fl.CheckUpdate((*gbuf)[:want], w.Dim); err != nil {
				return reject(codes.InvalidArgument, "%v", err)
			}
			copy(j.grad, (*gbuf)[:want])
			j.reply <- reply{lml: res.Loss}
			return reply{}, nil
		}
		copy(j.grad, (*gbuf)[:want])
		j.reply <- reply{lml: res.MeanLml}
		return reply{}, nil
	default:
		return reject(codes.InvalidArgument, "expected Result or Error, got %T", m.Msg)
	}
}

// RegisterService registers c as the Federation service of s.
func RegisterService(s *grpc.Server, c *Coordinator) { pb.RegisterFederationServer(s, c) }

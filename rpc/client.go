package rpc

import (
	"context"
	"errors"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/option"
	"github.com/pacpfl/pacpfl/rpc/pb"
)

// ClientConfig configures one client process.
type ClientConfig struct {
	ID        int
	Token     []byte // nil: no authentication (the server must not ask)
	ModelKind string // "gp"
	Dim       int    // dφ of the local model (0: Prepare returns it)
	DataSize  int    // training samples m_i
	DataHash  []byte // SHA-256 of the training data (DataHash), optional
	// New builds the local training client once the server's Welcome has
	// said how to train (the client temperature β). It is called once.
	New func(beta string) (fl.Client, error)
	// NewRound, in place of New, builds a peer method's client (FedAvg,
	// pFedBayes, …) once the server's Welcome has arrived; it is called
	// once. A fl.StatefulClient's state is kept in StateFile.
	NewRound func() (fl.RoundClient, error)
	// VariableDim: a peer method whose vectors vary in length, Dim being
	// the most entries of one.
	VariableDim bool
	// StateFile is where a stateful client keeps its state between rounds
	// (written atomically after every update, before the update is sent);
	// a restarted client resumes from it. "": in memory only.
	StateFile string
	// Prepare, if set, is called once before New with the standardisation
	// and class labels the server's Welcome sent (nil if none): a client
	// reading its own CSV file standardises its rows with them and maps its
	// labels to class indices. It returns the local model's dφ (0: Dim).
	Prepare func(s *data.Scaling, classes []string) (dim int, err error)
	// MaxPayload limits one payload in bytes (0: DefaultMaxPayload).
	MaxPayload int64
	// MaxClasses bounds the class labels a server may send (0:
	// DefaultMaxClasses): a classification client's network, and so its
	// memory, grows with their number.
	MaxClasses int
	// Backoff is the first delay between connection attempts (0: 100 ms),
	// doubled up to MaxBackoff (0: 5 s).
	Backoff, MaxBackoff time.Duration
	// GiveUp stops retrying after this long without a session (0: never).
	GiveUp time.Duration
	Log    func(format string, a ...any)
}

func (cfg *ClientConfig) logf(format string, a ...any) {
	if cfg.Log != nil {
		cfg.Log(format, a...)
	}
}

// Dial returns a connection to addr with the protocol's message limits and
// a reconnection back-off suited to a server that restarts.
func Dial(addr string, creds credentials.TransportCredentials) (*grpc.ClientConn, error) {
	bc := backoff.DefaultConfig
	bc.BaseDelay, bc.MaxDelay = 100*time.Millisecond, 2*time.Second
	readBuffer := ioBuffer
	if isTLS(creds) {
		readBuffer = 0 // see NewServer
	}
	return grpc.NewClient(addr, grpc.WithTransportCredentials(creds),
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: bc, MinConnectTimeout: 5 * time.Second}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessage), grpc.MaxCallSendMsgSize(maxMessage)),
		grpc.WithInitialWindowSize(windowSize), grpc.WithInitialConnWindowSize(windowSize),
		grpc.WithWriteBufferSize(ioBuffer), grpc.WithReadBufferSize(readBuffer))
}

// DefaultMaxClasses is ClientConfig.MaxClasses's default: ten times
// ImageNet's classes per label set is more than any data set of ours needs.
const DefaultMaxClasses = 10_000

// Bounds on the other texts and sizes of a server's Welcome.
const (
	maxClassLabel = 256     // bytes per class label
	maxFeatures   = 1 << 20 // entries of the standardisation
	maxBeta       = 64      // bytes of the temperature
)

// checkWelcome refuses a Welcome whose sizes are beyond the client's
// bounds, before anything is built from it.
func checkWelcome(w *pb.Welcome, maxClasses int) error {
	if len(w.Beta) > maxBeta {
		return fmt.Errorf("the server's temperature is %d bytes long (at most %d)", len(w.Beta), maxBeta)
	}
	if len(w.Classes) > maxClasses {
		return option.Format("", []string{"MaxClasses"}, "the server sent %[2]d class labels (this client accepts at "+
			"most %[3]d; %[1]s)", len(w.Classes), maxClasses)
	}
	seen := make(map[string]bool, len(w.Classes))
	for i, l := range w.Classes {
		switch {
		case len(l) > maxClassLabel:
			return fmt.Errorf("the server's class label %d is %d bytes long (at most %d)", i, len(l), maxClassLabel)
		case seen[l]:
			return fmt.Errorf("the server sent class label \"%s\" twice", Clean(l, 64))
		}
		seen[l] = true
	}
	if s := w.Standardisation; s != nil {
		if len(s.XMean) > maxFeatures || len(s.XMean) != len(s.XStd) {
			return fmt.Errorf("the server's standardisation has %d means and %d scales (equal, at most %d)",
				len(s.XMean), len(s.XStd), maxFeatures)
		}
		bad := func(v float64, scale bool) bool { return math.IsNaN(v) || math.IsInf(v, 0) || (scale && !(v > 0)) }
		for i := range s.XMean {
			if bad(s.XMean[i], false) || bad(s.XStd[i], true) {
				return fmt.Errorf("the server's standardisation of feature %d is (%v, %v): want a finite mean and a "+
					"positive finite scale", i, s.XMean[i], s.XStd[i])
			}
		}
		if bad(s.YMean, false) || bad(s.YStd, true) {
			return fmt.Errorf("the server's standardisation of the target is (%v, %v): want a finite mean and a "+
				"positive finite scale", s.YMean, s.YStd)
		}
	}
	return nil
}

// serverError is an error whose text came from the server: cut and
// escaped for the client's log (Clean), its status kept for permanent.
type serverError struct {
	err error
	msg string
}

func (e serverError) Error() string { return e.msg }
func (e serverError) Unwrap() error { return e.err }

func fromServer(err error) error {
	if err == nil {
		return nil
	}
	var le localError
	if errors.As(err, &le) {
		return err
	}
	return serverError{err, Clean(err.Error(), 2*MaxLoggedText)}
}

// permanent reports whether a session error means retrying is useless.
func permanent(err error) bool {
	switch status.Code(err) {
	case codes.Unauthenticated, codes.PermissionDenied, codes.FailedPrecondition, codes.InvalidArgument,
		codes.ResourceExhausted:
		return true
	}
	var le localError
	return errors.As(err, &le)
}

// localError is a failure of this side (bad configuration): not retried.
type localError struct{ error }

func (e localError) Unwrap() error { return e.error }

// Serve connects to the server and answers its rounds until it says done:
// nil then. It retries with exponential back-off while the server is down
// or the connection breaks, and gives up on a refusal (bad token, wrong
// model) or after cfg.GiveUp without a session.
func Serve(ctx context.Context, conn grpc.ClientConnInterface, cfg ClientConfig) error {
	if cfg.MaxPayload == 0 {
		cfg.MaxPayload = DefaultMaxPayload
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = 100 * time.Millisecond
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = 5 * time.Second
	}
	if cfg.ID < 0 || (cfg.Dim < 1 && cfg.Prepare == nil) || cfg.Dim < 0 || (cfg.New == nil) == (cfg.NewRound == nil) {
		return fmt.Errorf("rpc: bad client configuration (id %d, dφ %d)", cfg.ID, cfg.Dim)
	}
	if cfg.MaxClasses <= 0 {
		cfg.MaxClasses = DefaultMaxClasses
	}
	cs := &clientSession{cfg: &cfg, registerDim: cfg.Dim}
	delay := cfg.Backoff
	lastOK := time.Now()
	for {
		done, established, err := cs.run(ctx, pb.NewFederationClient(conn))
		err = fromServer(err)
		if done {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// A refusal of the registration is final; once registered, the
		// server's refusal of one update ends that session only (the
		// client is told why, and rejoins for the next round).
		var le localError
		if permanent(err) && (!established || errors.As(err, &le)) {
			return err
		}
		if established {
			delay, lastOK = cfg.Backoff, time.Now()
		}
		if cfg.GiveUp > 0 && time.Since(lastOK) > cfg.GiveUp {
			return fmt.Errorf("no session with the server for %v: %w", cfg.GiveUp, err)
		}
		wait := delay/2 + time.Duration(mrand.Int64N(int64(delay)/2+1)) // jitter
		cfg.logf("client %d: %v; retrying in %v", cfg.ID, err, wait.Round(time.Millisecond))
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return ctx.Err()
		}
		delay = min(2*delay, cfg.MaxBackoff)
	}
}

// clientSession keeps the state that survives reconnections.
type clientSession struct {
	cfg         *ClientConfig
	registerDim int // dφ as registered (0: learnt from the Welcome)
	client      fl.Client
	round       fl.RoundClient // a peer method's client (NewRound)
	state       *clientState   // round's state, if it keeps one
	particles   []float64
	grad        []float64
	enc         []byte
	rd          chunkReader
}

// run is one session: done reports that the server finished training,
// established that the server accepted the registration.
func (cs *clientSession) run(ctx context.Context, fc pb.FederationClient) (done, established bool, err error) {
	cfg := cs.cfg
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := fc.Session(ctx, grpc.ForceCodecV2(codec{}))
	if err != nil {
		return false, false, err
	}
	m, err := st.Recv()
	if err != nil {
		return false, false, err
	}
	ch := m.GetChallenge()
	if ch == nil || len(ch.Nonce) < 16 {
		return false, false, localError{errors.New("server did not send a challenge")}
	}
	reg := &pb.Register{ClientId: uint32(cfg.ID), DataSize: uint64(cfg.DataSize), ModelKind: cfg.ModelKind,
		Dimension: uint64(cs.registerDim), Protocol: ProtocolVersion, DataSha256: cfg.DataHash}
	if cfg.Token != nil {
		reg.Mac = registerMAC(cfg.Token, ch.Nonce, uint32(cfg.ID))
	}
	if err := st.Send(&pb.ClientMessage{Msg: &pb.ClientMessage_Register{Register: reg}}); err != nil {
		return false, false, err
	}
	if m, err = st.Recv(); err != nil {
		return false, false, err
	}
	if m.GetDone() != nil {
		return true, true, nil
	}
	wel := m.GetWelcome()
	if wel == nil {
		return false, false, localError{fmt.Errorf("expected Welcome, got %T", m.Msg)}
	}
	if err := checkWelcome(wel, cfg.MaxClasses); err != nil {
		return false, true, localError{err}
	}
	if cs.client == nil && cs.round == nil {
		if cfg.Prepare != nil {
			var sc *data.Scaling
			if s := wel.Standardisation; s != nil {
				sc = &data.Scaling{XMean: s.XMean, XStd: s.XStd, YMean: s.YMean, YStd: s.YStd}
			}
			dim, err := cfg.Prepare(sc, wel.Classes)
			if err != nil {
				return false, true, localError{err}
			}
			if dim > 0 {
				cfg.Dim = dim
			}
			if cfg.Dim < 1 {
				return false, true,
					localError{fmt.Errorf("client %d: no model dimension after the server's Welcome", cfg.ID)}
			}
			// One particle must fit a payload: a model the server's
			// Welcome made larger is refused before it is built.
			if int64(cfg.Dim) > cfg.MaxPayload/8 {
				return false, true, localError{fmt.Errorf("client %d: the server's Welcome makes a model of dφ = %d, "+
					"whose particle (%d bytes) exceeds the payload limit of %d bytes", cfg.ID, cfg.Dim,
					8*int64(cfg.Dim), cfg.MaxPayload)}
			}
		}
		if err := cs.build(wel.Beta); err != nil {
			return false, true, localError{err}
		}
	}
	cfg.logf("client %d: registered", cfg.ID)
	for {
		m, err := st.Recv()
		if err != nil {
			return false, true, err
		}
		switch x := m.Msg.(type) {
		case *pb.ServerMessage_Done:
			cfg.logf("client %d: done (%s)", cfg.ID, Clean(x.Done.Reason, MaxLoggedText))
			return true, true, nil
		case *pb.ServerMessage_Work:
			work := cs.work
			if x.Work.Task != pb.Task_UPDATE {
				work = cs.roundWork
			}
			if err := work(st, x.Work); err != nil {
				return false, true, err
			}
		default:
			return false, true, localError{fmt.Errorf("unexpected %T from the server", m.Msg)}
		}
	}
}

// build makes the local client: PAC-PFL's (New) or a peer method's
// (NewRound, with its state restored from StateFile).
func (cs *clientSession) build(beta string) error {
	cfg := cs.cfg
	if cfg.New != nil {
		var err error
		cs.client, err = cfg.New(beta)
		return err
	}
	rc, err := cfg.NewRound()
	if err != nil {
		return err
	}
	if sc, ok := rc.(fl.StatefulClient); ok {
		if cs.state, err = newClientState(cfg.StateFile, cfg.ID, cfg.ModelKind, sc); err != nil {
			return err
		}
	}
	cs.round = rc
	return nil
}

// work receives the particles of w, runs the local update and sends the
// result (or an Error message when the update fails).
func (cs *clientSession) work(st pb.Federation_SessionClient, w *pb.Work) error {
	cfg := cs.cfg
	if cs.client == nil {
		return localError{errors.New("the server asks for PAC-PFL's update; this client trains a peer method")}
	}
	if w.Dim != uint64(cfg.Dim) || w.K == 0 {
		return localError{
			fmt.Errorf("work with k = %d particles of dimension %d; the local model has dφ = %d", w.K, w.Dim, cfg.Dim)}
	}
	if err := cs.receive(st, w); err != nil {
		return err
	}
	start := time.Now()
	lml, err := cs.client.Update(cs.particles, int(w.K), cfg.Dim, int(w.Batch), fl.ClientStream(w.Seed, w.Stream),
		cs.grad)
	elapsed := time.Since(start)
	if err != nil {
		cfg.logf("client %d: update of round %d failed: %v", cfg.ID, w.Round+1, err)
		return st.Send(
			&pb.ClientMessage{Msg: &pb.ClientMessage_Error{Error: &pb.Error{Seq: w.Seq, Message: err.Error()}}})
	}
	// The gradient is this session's own until the next Work: sent from
	// its memory where the machine is little-endian.
	payload, keep, crc := payloadOf(cs.enc, cs.grad)
	cs.enc = keep
	err = st.Send(
		&pb.ClientMessage{Msg: &pb.ClientMessage_Result{Result: &pb.Result{Seq: w.Seq, Round: w.Round, MeanLml: lml,
			ComputeNanos: elapsed.Nanoseconds(), Payload: &pb.Payload{Size: uint64(len(payload)), Crc32C: crc}}}})
	if err != nil {
		return err
	}
	return chunks(payload, func(b []byte) error {
		return st.Send(&pb.ClientMessage{Msg: &pb.ClientMessage_Chunk{Chunk: &pb.Chunk{Data: b}}})
	})
}

// receive reads the payload announced by w (k×dim float64s, dim w.Dim ≤
// the local model's, checked by the caller) into cs.particles, sizing
// cs.grad alike.
func (cs *clientSession) receive(st pb.Federation_SessionClient, w *pb.Work) error {
	n := int(w.K) * int(w.Dim)
	if err := checkHeader(w.Payload, n, cs.cfg.MaxPayload); err != nil {
		return localError{fmt.Errorf("work of round %d: %w", w.Round+1, err)}
	}
	if cap(cs.particles) < n {
		cs.particles, cs.grad = make([]float64, n), make([]float64, n)
	}
	cs.particles, cs.grad = cs.particles[:n], cs.grad[:n]
	cs.rd.start(w.Payload, cs.particles)
	for complete := n == 0; !complete; {
		var m rawMessage
		if err := st.RecvMsg(&m); err != nil {
			return err
		}
		var err error
		complete, err = cs.rd.addRaw(&m, serverChunkField)
		m.free()
		if err != nil {
			return localError{err}
		}
	}
	return nil
}

// roundWork answers a peer method's FIT or EVALUATE: the global vector
// arrives as the payload; a Fit's update goes back as the payload, an
// evaluation as Result.evaluation with an empty payload. A failure of the
// local client, a state that does not match the server's and a state that
// cannot be saved are sent as Error.
func (cs *clientSession) roundWork(st pb.Federation_SessionClient, w *pb.Work) error {
	cfg := cs.cfg
	if cs.round == nil {
		return localError{fmt.Errorf("the server asks for a peer method's %v; this client trains PAC-PFL", w.Task)}
	}
	badDim := w.Dim != uint64(cfg.Dim) && !(cfg.VariableDim && w.Dim >= 1 && w.Dim <= uint64(cfg.Dim))
	if badDim || w.K != 1 || (w.Task != pb.Task_FIT && w.Task != pb.Task_EVALUATE) {
		return localError{fmt.Errorf("%v work with k = %d vectors of length %d; the local model has %d", w.Task, w.K,
			w.Dim, cfg.Dim)}
	}
	if err := cs.receive(st, w); err != nil {
		return err
	}
	fail := func(err error) error {
		cfg.logf("client %d: %v of round %d failed: %v", cfg.ID, w.Task, w.Round+1, err)
		return st.Send(
			&pb.ClientMessage{Msg: &pb.ClientMessage_Error{Error: &pb.Error{Seq: w.Seq, Message: err.Error()}}})
	}
	if cs.state != nil {
		if err := cs.state.at(int(w.StateRound)); err != nil {
			return fail(err)
		}
	}
	start := time.Now()
	res := &pb.Result{Seq: w.Seq, Round: w.Round}
	var payload []byte
	if w.Task == pb.Task_EVALUATE {
		ev, err := cs.round.Evaluate(fl.EvalTask{Round: int(w.Round), Model: int(w.Model)}, cs.particles)
		if err != nil {
			return fail(err)
		}
		res.Evaluation = &pb.Evaluation{Accuracy: ev.Accuracy, Ce: ev.CE, Tests: uint64(ev.Tests), Extra: ev.Extra}
		res.Payload = &pb.Payload{}
	} else {
		loss, err := cs.round.Fit(fl.RoundTask{Round: int(w.Round), Seed: w.Seed, Stream: w.Stream}, cs.particles,
			cs.grad)
		if err == nil && cs.state != nil {
			err = cs.state.fitted(int(w.Round))
		}
		if err != nil {
			if cs.state != nil {
				if rerr := cs.state.failed(); rerr != nil {
					return localError{fmt.Errorf("%v; restoring the state: %w", err, rerr)}
				}
			}
			return fail(err)
		}
		var keep []byte
		var crc uint32
		payload, keep, crc = payloadOf(cs.enc, cs.grad)
		cs.enc = keep
		res.Loss, res.Payload = loss, &pb.Payload{Size: uint64(len(payload)), Crc32C: crc}
	}
	res.ComputeNanos = time.Since(start).Nanoseconds()
	if err := st.Send(&pb.ClientMessage{Msg: &pb.ClientMessage_Result{Result: res}}); err != nil {
		return err
	}
	return chunks(payload, func(b []byte) error {
		return st.Send(&pb.ClientMessage{Msg: &pb.ClientMessage_Chunk{Chunk: &pb.Chunk{Data: b}}})
	})
}

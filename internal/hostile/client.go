package hostile

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/pacpfl/pacpfl/rpc/pb"
)

// The protocol's constants, as package rpc has them.
const (
	ProtocolVersion   = 2                  // Register.protocol
	ChunkSize         = 1 << 20            // largest payload chunk
	DefaultMaxPayload = 256 << 20          // the server's default payload limit
	maxMessage        = ChunkSize + 64<<10 // gRPC message limit of both sides
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// RegisterMAC is HMAC-SHA256(token, "pacpfl-register" || nonce || id as 8
// little-endian bytes), the registration's proof of the token.
func RegisterMAC(token, nonce []byte, id uint32) []byte {
	m := hmac.New(sha256.New, token)
	m.Write([]byte("pacpfl-register"))
	m.Write(nonce)
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(id))
	m.Write(b[:])
	return m.Sum(nil)
}

// EncodeFloats returns xs as the protocol's payload (little-endian
// float64s) and its CRC-32C (Castagnoli).
func EncodeFloats(xs []float64) ([]byte, uint32) {
	b := make([]byte, 8*len(xs))
	for i, x := range xs {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
	return b, crc32.Checksum(b, castagnoli)
}

// DecodeFloats is EncodeFloats' inverse (len(b) a multiple of 8).
func DecodeFloats(b []byte) []float64 {
	xs := make([]float64, len(b)/8)
	for i := range xs {
		xs[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return xs
}

// Mode is how a misbehaving client answers a Work.
type Mode int

const (
	Honest     Mode = iota // the Compute function's gradient and ln Z, as pacpfl client
	WrongSeq               // a Result for the next sequence number (payload right)
	WrongShape             // a payload one float64 short (one long when k×dim = 1), size and CRC consistent
	OverLimit              // a Result announcing 8 bytes above the Welcome's payload limit; nothing follows
	BadCRC                 // the right payload under a wrong CRC-32C
	Trickle                // the right answer in chunks of TrickleBytes every TrickleDelay
	Silent                 // reads the Work and never answers
	GradScale              // the gradient × Scale (1e150: huge but finite)
	GradHuge               // every gradient entry 1e300
	GradNaN                // every gradient entry NaN
	LMLNaN                 // mean ln Z NaN (gradient honest)
	LMLInf                 // mean ln Z +Inf
	LMLHuge                // mean ln Z 1e300
	LogForge               // an Error message of ForgeBytes with newlines, ANSI escapes and forged log lines
)

// Modes are all the modes but Honest.
var Modes = []Mode{WrongSeq, WrongShape, OverLimit, BadCRC, Trickle, Silent, GradScale, GradHuge, GradNaN, LMLNaN,
	LMLInf, LMLHuge, LogForge}

var modeNames = []string{"honest", "wrong-seq", "wrong-shape", "over-limit", "bad-crc", "trickle", "silent",
	"grad-scale", "grad-huge", "grad-nan", "lml-nan", "lml-inf", "lml-huge", "log-forge"}

func (m Mode) String() string {
	if m >= 0 && int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("mode(%d)", int(m))
}

// ParseMode is String's inverse.
func ParseMode(s string) (Mode, error) {
	for i, n := range modeNames {
		if n == s {
			return Mode(i), nil
		}
	}
	return 0, fmt.Errorf("hostile: unknown mode %q (want one of %s)", s, strings.Join(modeNames, ", "))
}

// ComputeFunc is a client's honest update: the gradient of the k×dim
// particles into grad and the mean ln Z, for a batch and the client's
// random stream (the PCG seed pair of the Work; fl.ClientStream(seed,
// stream) rebuilds it). An error is answered with an Error message.
type ComputeFunc func(particles []float64, k, dim, batch int, seed, stream uint64,
	grad []float64) (lml float64, err error)

// ClientConfig configures a misbehaving client.
type ClientConfig struct {
	ID        int
	Token     []byte // nil: no MAC (a server without tokens)
	ModelKind string // "gp"
	Dim       int    // dφ registered and expected in the Works
	DataSize  int
	DataHash  []byte // the SHA-256 the server expects, if it checks
	Protocol  uint32 // 0: ProtocolVersion
	// Compute is the honest update (nil: a zero gradient and ln Z 0).
	Compute ComputeFunc
	// HonestRounds Works are answered honestly first (counted across
	// sessions); then MisbehaveRounds Works (0: all the rest) are
	// answered per Mode, and the rest honestly again.
	HonestRounds    int
	Mode            Mode
	MisbehaveRounds int
	// Reconnects is how many new sessions the client opens after one
	// ends other than by Done (a refusal, a broken stream), after
	// ReconnectDelay (0: 100 ms).
	Reconnects     int
	ReconnectDelay time.Duration
	// MaxWorks: after answering this many Works the client waits for the
	// server's next move (to record it), ends its session and returns
	// (0: no limit).
	MaxWorks int
	// Scale is GradScale's factor (0: 1e150).
	Scale float64
	// Trickle's chunk (rounded down to a multiple of 8; 0: 8 bytes) and
	// delay between chunks (0: 50 ms).
	TrickleBytes int
	TrickleDelay time.Duration
	// LogForge's message: ForgeBytes long (0: 1 MiB), its forged lines
	// starting with ForgePrefix (0: "pacpfl server: ") and carrying
	// ForgeMarker (0: "FORGED").
	ForgeBytes  int
	ForgePrefix string
	ForgeMarker string
	// Log, if set, receives one line per event.
	Log func(format string, a ...any)
}

func (cfg *ClientConfig) logf(format string, a ...any) {
	if cfg.Log != nil {
		cfg.Log(format, a...)
	}
}

// Next is the server's next move after an answer.
type Next int

const (
	NextNone   Next = iota // nothing: the client stopped first
	NextWork               // another Work: the session went on
	NextDone               // Done
	NextStatus             // the session ended with a status (Code, Message)
)

func (n Next) String() string {
	return [...]string{"none", "work", "done", "status"}[n]
}

// RoundLog is one Work and what followed.
type RoundLog struct {
	Session int // index in ClientReport.Sessions
	Seq     uint64
	Round   uint32 // 0-based, as the Work says
	K, Dim  int
	// ParticlesOK: the particles arrived whole with their announced CRC.
	ParticlesOK bool
	Mode        Mode   // how the Work was answered
	Answer      string // "result", "error" or "none"
	ComputeErr  string // the honest update's error, if any
	SendErr     string // a failure while answering ("": sent whole)
	// The server's next move, how long after our answer, and for
	// NextStatus the status that ended the session.
	Next    Next
	After   time.Duration
	Code    codes.Code
	Message string
}

// SessionLog is one session.
type SessionLog struct {
	Start      time.Time
	Duration   time.Duration
	Registered bool   // Welcome received
	Beta       string // the Welcome's
	MaxPayload uint64 // the Welcome's payload limit
	Works      int    // Works received
	// AfterRefusal: an earlier session of this client ended with an
	// error status.
	AfterRefusal bool
	// How it ended: "done", "status" (Code, Message), "stopped" (by the
	// client: context, MaxWorks) or "error" (a local failure, Message).
	End     string
	Code    codes.Code
	Message string
}

// ClientReport is what a misbehaving client saw.
type ClientReport struct {
	Sessions []SessionLog
	Rounds   []RoundLog
	// Ended says why RunClient returned: "done", "refused" (a session
	// ended and no reconnection was left), "context" or "max-works".
	Ended string
}

// WorkAfterRefusal counts the Works received in sessions opened after a
// session had ended with an error status: does the server give a client
// it refused work again?
func (r *ClientReport) WorkAfterRefusal() int {
	n := 0
	for _, s := range r.Sessions {
		if s.AfterRefusal {
			n += s.Works
		}
	}
	return n
}

// Last returns the last round (ok false: none).
func (r *ClientReport) Last() (RoundLog, bool) {
	if len(r.Rounds) == 0 {
		return RoundLog{}, false
	}
	return r.Rounds[len(r.Rounds)-1], true
}

// DialGRPC is a gRPC connection to addr over TLS (tlsConf) or plaintext
// (nil) with the protocol's message limits.
func DialGRPC(addr string, tlsConf *tls.Config) (*grpc.ClientConn, error) {
	creds := insecure.NewCredentials()
	if tlsConf != nil {
		creds = credentials.NewTLS(tlsConf)
	}
	return grpc.NewClient(addr, grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessage), grpc.MaxCallSendMsgSize(4*maxMessage)))
}

// RunClient runs the misbehaving client on conn until the server says
// Done, ctx ends, MaxWorks is reached, or a session ends with no
// reconnection left. Everything the server did is in the report; the
// error is only for a bad configuration.
func RunClient(ctx context.Context, conn grpc.ClientConnInterface, cfg ClientConfig) (*ClientReport, error) {
	if cfg.ID < 0 || cfg.Dim < 0 {
		return nil, fmt.Errorf("hostile: bad client configuration (id %d, dφ %d)", cfg.ID, cfg.Dim)
	}
	if cfg.Protocol == 0 {
		cfg.Protocol = ProtocolVersion
	}
	if cfg.ReconnectDelay <= 0 {
		cfg.ReconnectDelay = 100 * time.Millisecond
	}
	if cfg.Scale == 0 {
		cfg.Scale = 1e150
	}
	cfg.TrickleBytes = max(cfg.TrickleBytes/8*8, 8)
	if cfg.TrickleDelay <= 0 {
		cfg.TrickleDelay = 50 * time.Millisecond
	}
	if cfg.ForgeBytes <= 0 {
		cfg.ForgeBytes = 1 << 20
	}
	if cfg.ForgePrefix == "" {
		cfg.ForgePrefix = "pacpfl server: "
	}
	if cfg.ForgeMarker == "" {
		cfg.ForgeMarker = "FORGED"
	}
	c := &client{cfg: &cfg, rep: &ClientReport{}}
	refused := false
	for i := 0; ; i++ {
		s := c.session(ctx, pb.NewFederationClient(conn), refused)
		switch {
		case s.End == "done":
			c.rep.Ended = "done"
			return c.rep, nil
		case ctx.Err() != nil:
			c.rep.Ended = "context"
			return c.rep, nil
		case c.maxed():
			c.rep.Ended = "max-works"
			return c.rep, nil
		case i >= cfg.Reconnects:
			c.rep.Ended = "refused"
			return c.rep, nil
		}
		if s.End == "status" && s.Code != codes.OK {
			refused = true
		}
		select {
		case <-time.After(cfg.ReconnectDelay):
		case <-ctx.Done():
			c.rep.Ended = "context"
			return c.rep, nil
		}
	}
}

type client struct {
	cfg      *ClientConfig
	rep      *ClientReport
	answered int // Works answered, across sessions
}

func (c *client) maxed() bool { return c.cfg.MaxWorks > 0 && c.answered >= c.cfg.MaxWorks }

// mode is how the next Work is answered.
func (c *client) mode() Mode {
	cfg := c.cfg
	if c.answered < cfg.HonestRounds ||
		(cfg.MisbehaveRounds > 0 && c.answered >= cfg.HonestRounds+cfg.MisbehaveRounds) {
		return Honest
	}
	return cfg.Mode
}

// session runs one session and returns its log (also appended to the
// report).
func (c *client) session(ctx context.Context, fc pb.FederationClient, afterRefusal bool) SessionLog {
	cfg := c.cfg
	idx := len(c.rep.Sessions)
	c.rep.Sessions = append(c.rep.Sessions, SessionLog{Start: time.Now(), AfterRefusal: afterRefusal})
	sl := &c.rep.Sessions[idx]
	defer func() { sl.Duration = time.Since(sl.Start) }()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// pending is the round whose outcome the next server move records.
	pending := -1
	var answeredAt time.Time
	ended := func(err error) SessionLog {
		switch {
		case ctx.Err() != nil:
			sl.End = "stopped"
		case status.Code(err) == codes.Unknown && !isStatus(err):
			sl.End, sl.Message = "error", err.Error()
		default:
			st := status.Convert(err)
			sl.End, sl.Code, sl.Message = "status", st.Code(), st.Message()
		}
		if pending >= 0 && sl.End == "status" {
			r := &c.rep.Rounds[pending]
			r.Next, r.After, r.Code, r.Message = NextStatus, time.Since(answeredAt), sl.Code, sl.Message
		}
		cfg.logf("client %d: session %d ended: %s %v %s", cfg.ID, idx, sl.End, sl.Code, sl.Message)
		return *sl
	}
	st, err := fc.Session(ctx)
	if err != nil {
		return ended(err)
	}
	m, err := st.Recv()
	if err != nil {
		return ended(err)
	}
	ch := m.GetChallenge()
	if ch == nil {
		return ended(fmt.Errorf("expected a Challenge, got %T", m.Msg))
	}
	reg := &pb.Register{ClientId: uint32(cfg.ID), DataSize: uint64(cfg.DataSize), ModelKind: cfg.ModelKind,
		Dimension: uint64(cfg.Dim), Protocol: cfg.Protocol, DataSha256: cfg.DataHash}
	if cfg.Token != nil {
		reg.Mac = RegisterMAC(cfg.Token, ch.Nonce, uint32(cfg.ID))
	}
	if err := st.Send(&pb.ClientMessage{Msg: &pb.ClientMessage_Register{Register: reg}}); err != nil {
		return ended(err)
	}
	if m, err = st.Recv(); err != nil {
		return ended(err)
	}
	if m.GetDone() != nil {
		sl.End = "done"
		return *sl
	}
	wel := m.GetWelcome()
	if wel == nil {
		return ended(fmt.Errorf("expected a Welcome, got %T", m.Msg))
	}
	sl.Registered, sl.Beta, sl.MaxPayload = true, wel.Beta, wel.MaxPayload
	cfg.logf("client %d: registered (session %d)", cfg.ID, idx)
	for {
		m, err := st.Recv()
		if err != nil {
			return ended(err)
		}
		if pending >= 0 {
			r := &c.rep.Rounds[pending]
			r.After = time.Since(answeredAt)
			switch m.Msg.(type) {
			case *pb.ServerMessage_Work:
				r.Next = NextWork
			case *pb.ServerMessage_Done:
				r.Next = NextDone
			}
			pending = -1
			if c.maxed() {
				sl.End = "stopped"
				return *sl
			}
		}
		switch x := m.Msg.(type) {
		case *pb.ServerMessage_Done:
			sl.End, sl.Message = "done", x.Done.Reason
			return *sl
		case *pb.ServerMessage_Work:
			sl.Works++
			r, err := c.work(st, x.Work, idx, wel.MaxPayload)
			c.rep.Rounds = append(c.rep.Rounds, r)
			if err != nil {
				return ended(err)
			}
			pending, answeredAt = len(c.rep.Rounds)-1, time.Now()
			c.answered++
		default:
			return ended(fmt.Errorf("unexpected %T from the server", m.Msg))
		}
	}
}

func isStatus(err error) bool {
	_, ok := status.FromError(err)
	return ok
}

// work receives a Work's particles and answers it; an error means the
// session broke while receiving them.
func (c *client) work(st pb.Federation_SessionClient, w *pb.Work, session int, maxPayload uint64) (RoundLog, error) {
	cfg := c.cfg
	r := RoundLog{Session: session, Seq: w.Seq, Round: w.Round, K: int(w.K), Dim: int(w.Dim), Mode: c.mode()}
	var size uint64
	var crc uint32
	if w.Payload != nil {
		size, crc = w.Payload.Size, w.Payload.Crc32C
	}
	buf := make([]byte, 0, min(size, 1<<30))
	for uint64(len(buf)) < size {
		m, err := st.Recv()
		if err != nil {
			return r, err
		}
		ch := m.GetChunk()
		if ch == nil {
			return r, fmt.Errorf("expected a Chunk of the particles, got %T", m.Msg)
		}
		buf = append(buf, ch.Data...)
	}
	n := int(w.K) * int(w.Dim)
	r.ParticlesOK = uint64(len(buf)) == size && size == 8*uint64(n) && crc32.Checksum(buf, castagnoli) == crc
	particles := make([]float64, n)
	if r.ParticlesOK {
		particles = DecodeFloats(buf)
	}
	grad := make([]float64, n)
	var lml float64
	var cerr error
	if cfg.Compute != nil {
		lml, cerr = cfg.Compute(particles, int(w.K), int(w.Dim), int(w.Batch), w.Seed, w.Stream, grad)
	}
	if cerr != nil {
		r.ComputeErr = cerr.Error()
	}
	sendErr := func(msg string) error {
		r.Answer = "error"
		return st.Send(&pb.ClientMessage{Msg: &pb.ClientMessage_Error{Error: &pb.Error{Seq: w.Seq, Message: msg}}})
	}
	seq := w.Seq
	var err error
	switch mode := r.Mode; {
	case mode == Silent:
		r.Answer = "none"
	case mode == LogForge:
		err = sendErr(ForgedMessage(cfg.ForgeBytes, cfg.ForgePrefix, cfg.ForgeMarker, time.Now()))
	case cerr != nil && mode == Honest:
		err = sendErr(cerr.Error())
	default:
		switch mode {
		case WrongSeq:
			seq++
		case WrongShape:
			if n > 1 {
				grad = grad[:n-1]
			} else {
				grad = append(grad, 0)
			}
		case GradScale:
			for i := range grad {
				grad[i] *= cfg.Scale
			}
		case GradHuge:
			for i := range grad {
				grad[i] = 1e300
			}
		case GradNaN:
			for i := range grad {
				grad[i] = math.NaN()
			}
		case LMLNaN:
			lml = math.NaN()
		case LMLInf:
			lml = math.Inf(1)
		case LMLHuge:
			lml = 1e300
		}
		payload, sum := EncodeFloats(grad)
		hdr := &pb.Payload{Size: uint64(len(payload)), Crc32C: sum}
		switch mode {
		case BadCRC:
			hdr.Crc32C = ^sum
		case OverLimit:
			if maxPayload == 0 {
				maxPayload = DefaultMaxPayload
			}
			hdr = &pb.Payload{Size: maxPayload/8*8 + 8, Crc32C: sum}
			payload = nil
		}
		r.Answer = "result"
		err = st.Send(
			&pb.ClientMessage{Msg: &pb.ClientMessage_Result{Result: &pb.Result{Seq: seq, Round: w.Round, MeanLml: lml,
				ComputeNanos: 1, Payload: hdr}}})
		step, delay := ChunkSize, time.Duration(0)
		if mode == Trickle {
			step, delay = cfg.TrickleBytes, cfg.TrickleDelay
		}
		for err == nil && len(payload) > 0 {
			k := min(len(payload), step)
			err = st.Send(&pb.ClientMessage{Msg: &pb.ClientMessage_Chunk{Chunk: &pb.Chunk{Data: payload[:k]}}})
			payload = payload[k:]
			if delay > 0 && len(payload) > 0 {
				time.Sleep(delay)
			}
		}
	}
	if err != nil {
		// The server may have ended the stream already: its status comes
		// with the next Recv.
		r.SendErr = err.Error()
	}
	cfg.logf("client %d: round %d (seq %d) answered %s (%s)", cfg.ID, w.Round+1, w.Seq, r.Mode, r.Answer)
	return r, nil
}

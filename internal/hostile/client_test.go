package hostile

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/pacpfl/pacpfl/rpc/pb"
)

// fakeCoord is a federation server of the test's own, written from
// federation.proto: it checks the registration's MAC, sends rounds Works
// per session with particles in chunks of at most 1 MiB, and checks each
// answer as package rpc does, ending the session with rpc's status codes
// on a bad one. It records what it received.
type fakeCoord struct {
	pb.UnimplementedFederationServer
	token      []byte
	id         uint32
	k, dim     int
	rounds     int           // Works per session, then Done
	maxPayload uint64        // sent in the Welcome and enforced
	answerWait time.Duration // how long to wait for an answer
	ban        bool          // refuse the registration of a client refused before

	mu       sync.Mutex
	sessions int
	refused  bool
	answers  []answer
}

type answer struct {
	seq, wantSeq uint64
	isError      bool
	message      string
	lml          float64
	size         uint64
	grad         []float64
	chunks       []int
	took         time.Duration
	particles    []float64
}

func (f *fakeCoord) particles(round int) []float64 {
	p := make([]float64, f.k*f.dim)
	for i := range p {
		p[i] = float64(round) + float64(i)/8
	}
	return p
}

func (f *fakeCoord) Session(st pb.Federation_SessionServer) error {
	err := f.session(st)
	if status.Code(err) != codes.OK {
		f.mu.Lock()
		f.refused = true
		f.mu.Unlock()
	}
	return err
}

func (f *fakeCoord) session(st pb.Federation_SessionServer) error {
	f.mu.Lock()
	f.sessions++
	banned := f.ban && f.refused
	f.mu.Unlock()
	nonce := make([]byte, 32)
	rand.Read(nonce)
	if err := st.Send(
		&pb.ServerMessage{Msg: &pb.ServerMessage_Challenge{Challenge: &pb.Challenge{Nonce: nonce}}}); err != nil {
		return err
	}
	m, err := st.Recv()
	if err != nil {
		return err
	}
	reg := m.GetRegister()
	if reg == nil || reg.Protocol != ProtocolVersion || reg.ClientId != f.id || reg.ModelKind != "gp" ||
		reg.Dimension != uint64(f.dim) {
		return status.Errorf(codes.FailedPrecondition, "bad registration %v", m)
	}
	mac := hmac.New(sha256.New, f.token)
	mac.Write([]byte("pacpfl-register"))
	mac.Write(nonce)
	var idb [8]byte
	binary.LittleEndian.PutUint64(idb[:], uint64(reg.ClientId))
	mac.Write(idb[:])
	if !hmac.Equal(mac.Sum(nil), reg.Mac) {
		return status.Error(codes.Unauthenticated, "wrong token")
	}
	if banned {
		return status.Error(codes.PermissionDenied, "banned after a bad update")
	}
	if err := st.Send(&pb.ServerMessage{Msg: &pb.ServerMessage_Welcome{
		Welcome: &pb.Welcome{Beta: "m", MaxPayload: f.maxPayload, Clients: 1}}}); err != nil {
		return err
	}
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	for round := range f.rounds {
		seq := uint64(round + 1)
		p := f.particles(round)
		b := make([]byte, 8*len(p))
		for i, x := range p {
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
		}
		if err := st.Send(&pb.ServerMessage{Msg: &pb.ServerMessage_Work{
			Work: &pb.Work{Seq: seq, Round: uint32(round), K: uint32(f.k), Dim: uint64(f.dim),
				Batch: 5, Seed: 100 + uint64(round), Stream: 7,
				Payload: &pb.Payload{Size: uint64(len(b)), Crc32C: crc32.Checksum(b, castagnoli)}}}}); err != nil {
			return err
		}
		for len(b) > 0 {
			n := min(len(b), 1<<20)
			if err := st.Send(
				&pb.ServerMessage{Msg: &pb.ServerMessage_Chunk{Chunk: &pb.Chunk{Data: b[:n]}}}); err != nil {
				return err
			}
			b = b[n:]
		}
		start := time.Now()
		a := answer{wantSeq: seq, particles: p}
		rc := make(chan *pb.ClientMessage, 1)
		ec := make(chan error, 1)
		go func() {
			m, err := st.Recv()
			if err != nil {
				ec <- err
				return
			}
			rc <- m
		}()
		select {
		case m = <-rc:
		case err := <-ec:
			return err
		case <-time.After(f.answerWait):
			f.record(a)
			return status.Error(codes.DeadlineExceeded, "no answer")
		}
		if e := m.GetError(); e != nil {
			a.seq, a.isError, a.message = e.Seq, true, e.Message
			f.record(a)
			continue
		}
		res := m.GetResult()
		if res == nil {
			return status.Errorf(codes.InvalidArgument, "expected Result or Error, got %T", m.Msg)
		}
		a.seq, a.lml, a.size = res.Seq, res.MeanLml, res.Payload.GetSize()
		if res.Seq != seq {
			f.record(a)
			return status.Errorf(codes.InvalidArgument, "result for work %d, expected %d", res.Seq, seq)
		}
		if a.size > f.maxPayload {
			f.record(a)
			return status.Errorf(codes.ResourceExhausted, "payload of %d bytes above the limit", a.size)
		}
		if a.size != 8*uint64(len(p)) {
			f.record(a)
			return status.Errorf(codes.InvalidArgument, "payload of %d bytes, want %d", a.size, 8*len(p))
		}
		var got []byte
		for uint64(len(got)) < a.size {
			m, err := st.Recv()
			if err != nil {
				return err
			}
			c := m.GetChunk()
			if c == nil || len(c.Data) == 0 || len(c.Data) > 1<<20 || len(c.Data)%8 != 0 {
				return status.Errorf(codes.InvalidArgument, "bad chunk %v", m)
			}
			a.chunks = append(a.chunks, len(c.Data))
			got = append(got, c.Data...)
		}
		a.took = time.Since(start)
		a.grad = make([]float64, len(p))
		for i := range a.grad {
			a.grad[i] = math.Float64frombits(binary.LittleEndian.Uint64(got[8*i:]))
		}
		f.record(a)
		if crc32.Checksum(got, castagnoli) != res.Payload.Crc32C {
			return status.Error(codes.DataLoss, "payload checksum mismatch")
		}
	}
	return st.Send(&pb.ServerMessage{Msg: &pb.ServerMessage_Done{Done: &pb.Done{Reason: "training is over"}}})
}

func (f *fakeCoord) record(a answer) {
	f.mu.Lock()
	f.answers = append(f.answers, a)
	f.mu.Unlock()
}

// honest is the tests' client update: G = 2φ + seed, ln Z = stream + 0.5;
// it checks what it is given.
func honest(t *testing.T, f *fakeCoord) ComputeFunc {
	return func(particles []float64, k, dim, batch int, seed, stream uint64, grad []float64) (float64, error) {
		round := int(seed - 100)
		if k != f.k || dim != f.dim || batch != 5 || stream != 7 || len(grad) != k*dim {
			t.Errorf("update of round %d with k %d, dim %d, batch %d, stream %d, %d gradients", round, k, dim, batch,
				stream, len(grad))
		}
		want := f.particles(round)
		for i := range particles {
			if particles[i] != want[i] {
				t.Errorf("round %d: particle %d is %v, want %v", round, i, particles[i], want[i])
				break
			}
		}
		for i := range grad {
			grad[i] = 2*particles[i] + float64(seed)
		}
		return float64(stream) + 0.5, nil
	}
}

func honestGrad(f *fakeCoord, round int) []float64 {
	g := f.particles(round)
	for i := range g {
		g[i] = 2*g[i] + float64(100+round)
	}
	return g
}

func newFake(k, dim, rounds int) *fakeCoord {
	return &fakeCoord{token: bytes.Repeat([]byte{0x5a}, 32), id: 3, k: k, dim: dim, rounds: rounds,
		maxPayload: 1 << 20, answerWait: 2 * time.Second}
}

func runAgainst(t *testing.T, f *fakeCoord, cfg ClientConfig) *ClientReport {
	t.Helper()
	addr, _ := startService(t, f, nil)
	conn, err := DialGRPC(addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cfg.ID, cfg.ModelKind, cfg.Dim = int(f.id), "gp", f.dim
	if cfg.Token == nil {
		cfg.Token = f.token
	}
	cfg.Compute = honest(t, f)
	rep, err := RunClient(ctx, conn, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// An honest client speaks the protocol exactly: MAC, payloads of more than
// one chunk, CRC-32C, sequence numbers; the report says what happened.
func TestClientHonest(t *testing.T) {
	f := newFake(2, 70_000, 3) // 1.12 MB: two chunks each way
	f.maxPayload = 4 << 20
	rep := runAgainst(t, f, ClientConfig{})
	if rep.Ended != "done" || len(rep.Sessions) != 1 || !rep.Sessions[0].Registered ||
		rep.Sessions[0].MaxPayload != 4<<20 ||
		rep.Sessions[0].Works != 3 || rep.Sessions[0].End != "done" || len(rep.Rounds) != 3 {
		t.Fatalf("report %+v", rep)
	}
	for i, r := range rep.Rounds {
		wantNext := NextWork
		if i == 2 {
			wantNext = NextDone
		}
		if r.Seq != uint64(i+1) || r.Round != uint32(i) || !r.ParticlesOK || r.Mode != Honest || r.Answer != "result" ||
			r.SendErr != "" || r.Next != wantNext {
			t.Errorf("round %d: %+v", i, r)
		}
	}
	if len(f.answers) != 3 {
		t.Fatalf("%d answers", len(f.answers))
	}
	for i, a := range f.answers {
		want := honestGrad(f, i)
		if a.seq != a.wantSeq || a.lml != 7.5 || len(a.chunks) != 2 || a.chunks[0] != 1<<20 ||
			a.chunks[0]+a.chunks[1] != 8*len(want) {
			t.Errorf("answer %d: seq %d/%d, lml %v, chunks %v", i, a.seq, a.wantSeq, a.lml, a.chunks)
		}
		for j := range want {
			if a.grad[j] != want[j] {
				t.Errorf("answer %d: gradient %d is %v, want %v", i, j, a.grad[j], want[j])
				break
			}
		}
	}
}

// Each mode misbehaves as announced from the second round on, and the
// report has the server's answer.
func TestClientModes(t *testing.T) {
	for _, mode := range Modes {
		t.Run(mode.String(), func(t *testing.T) {
			f := newFake(2, 3, 3)
			// Long enough for a megabyte of log-forging text on a slow
			// (emulated) machine; short for the silent client it ends.
			f.answerWait = 10 * time.Second
			if mode == Silent {
				f.answerWait = 500 * time.Millisecond
			}
			rep := runAgainst(t, f,
				ClientConfig{HonestRounds: 1, Mode: mode, MisbehaveRounds: 1, TrickleDelay: 20 * time.Millisecond})
			if len(rep.Rounds) < 2 || len(f.answers) < 2 {
				t.Fatalf("report %+v, %d answers", rep, len(f.answers))
			}
			if r := rep.Rounds[0]; r.Mode != Honest || r.Next != NextWork {
				t.Fatalf("first round %+v", r)
			}
			r, a := rep.Rounds[1], f.answers[1]
			if r.Mode != mode {
				t.Fatalf("second round answered %v", r.Mode)
			}
			t.Logf("round 2: %s → %v %v %q after %v", r.Answer, r.Next, r.Code, r.Message,
				r.After.Round(time.Millisecond))
			honestG := honestGrad(f, 1)
			wantCode := codes.OK // the session goes on
			switch mode {
			case WrongSeq:
				wantCode = codes.InvalidArgument
				if a.seq != 3 || a.wantSeq != 2 {
					t.Errorf("seq %d for work %d", a.seq, a.wantSeq)
				}
			case WrongShape:
				wantCode = codes.InvalidArgument
				if a.size != 8*5 {
					t.Errorf("size %d", a.size)
				}
			case OverLimit:
				wantCode = codes.ResourceExhausted
				if a.size != f.maxPayload+8 {
					t.Errorf("size %d", a.size)
				}
			case BadCRC:
				wantCode = codes.DataLoss
			case Silent:
				wantCode = codes.DeadlineExceeded
				if r.Answer != "none" || a.grad != nil || a.isError {
					t.Errorf("answered: %+v", a)
				}
			case Trickle:
				if len(a.chunks) != 6 || a.chunks[0] != 8 || a.took < 100*time.Millisecond {
					t.Errorf("chunks %v in %v", a.chunks, a.took)
				}
			case LogForge:
				if !a.isError || len(a.message) != 1<<20 || !strings.Contains(a.message, "\n") ||
					!strings.Contains(a.message, "\x1b[") {
					t.Errorf("error message of %d bytes", len(a.message))
				}
				if s := AnalyzeLog([]byte(a.message), "pacpfl server: ", "FORGED"); s.Forged < 5000 {
					t.Errorf("forged lines: %+v", s)
				}
			}
			var wantG []float64
			wantL := 7.5
			switch mode {
			case Trickle, LMLNaN, LMLInf, LMLHuge, BadCRC:
				wantG = honestG
			case GradScale:
				wantG = make([]float64, len(honestG))
				for i := range wantG {
					wantG[i] = honestG[i] * 1e150
				}
			case GradHuge, GradNaN:
				x := 1e300
				if mode == GradNaN {
					x = math.NaN()
				}
				wantG = make([]float64, len(honestG))
				for i := range wantG {
					wantG[i] = x
				}
			}
			switch mode {
			case LMLNaN:
				wantL = math.NaN()
			case LMLInf:
				wantL = math.Inf(1)
			case LMLHuge:
				wantL = 1e300
			}
			if wantG != nil {
				if len(a.grad) != len(wantG) || fmt.Sprint(a.grad) != fmt.Sprint(wantG) ||
					fmt.Sprint(a.lml) != fmt.Sprint(wantL) {
					t.Errorf("gradient %v, ln Z %v; want %v, %v", a.grad, a.lml, wantG, wantL)
				}
			}
			if wantCode == codes.OK {
				if r.Next != NextWork || rep.Ended != "done" || len(rep.Rounds) != 3 || rep.Rounds[2].Mode != Honest {
					t.Errorf("round %+v, report %+v", r, rep)
				}
			} else if r.Next != NextStatus || r.Code != wantCode || r.Message == "" || rep.Ended != "refused" ||
				rep.Sessions[0].Code != wantCode {
				t.Errorf("round %+v, report %+v; want status %v", r, rep, wantCode)
			}
		})
	}
}

// After a refusal the client reconnects: a server that forgives gives it
// work again, one that bans it does not.
func TestClientReconnectAfterRefusal(t *testing.T) {
	for _, ban := range []bool{false, true} {
		f := newFake(1, 2, 2)
		f.ban = ban
		rep := runAgainst(t, f, ClientConfig{HonestRounds: 1, Mode: WrongSeq, MisbehaveRounds: 1, Reconnects: 2,
			ReconnectDelay: time.Millisecond})
		if len(rep.Sessions) < 2 || rep.Sessions[0].Code != codes.InvalidArgument || !rep.Sessions[1].AfterRefusal {
			t.Fatalf("ban %v: report %+v", ban, rep)
		}
		if ban {
			if rep.WorkAfterRefusal() != 0 || rep.Ended != "refused" || len(rep.Sessions) != 3 ||
				rep.Sessions[1].Code != codes.PermissionDenied {
				t.Errorf("banned: %d works after the refusal, %+v", rep.WorkAfterRefusal(), rep)
			}
		} else if rep.WorkAfterRefusal() != 2 || rep.Ended != "done" || len(rep.Sessions) != 2 ||
			rep.Rounds[2].Mode != Honest {
			t.Errorf("forgiven: %d works after the refusal, %+v", rep.WorkAfterRefusal(), rep)
		}
	}
}

// A wrong token is refused, and the report says so.
func TestClientWrongToken(t *testing.T) {
	f := newFake(1, 2, 1)
	rep := runAgainst(t, f, ClientConfig{Token: bytes.Repeat([]byte{1}, 32)})
	if rep.Ended != "refused" || len(rep.Sessions) != 1 || rep.Sessions[0].Registered ||
		rep.Sessions[0].Code != codes.Unauthenticated {
		t.Fatalf("report %+v", rep)
	}
}

// MaxWorks ends the client after its last answer and the server's next
// move.
func TestClientMaxWorks(t *testing.T) {
	f := newFake(1, 2, 5)
	rep := runAgainst(t, f, ClientConfig{MaxWorks: 2})
	if rep.Ended != "max-works" || len(rep.Rounds) != 2 || rep.Rounds[1].Next != NextWork ||
		rep.Sessions[0].End != "stopped" {
		t.Fatalf("report %+v", rep)
	}
}

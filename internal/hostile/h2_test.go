package hostile

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/peer"
	"google.golang.org/protobuf/proto"

	"github.com/pacpfl/pacpfl/rpc/pb"
)

func marshal(t *testing.T, m *pb.ClientMessage) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func register(id uint32, macLen int) *pb.ClientMessage {
	mac := make([]byte, macLen)
	for i := range mac {
		mac[i] = byte(i * 7)
	}
	return &pb.ClientMessage{
		Msg: &pb.ClientMessage_Register{Register: &pb.Register{ClientId: id, ModelKind: "gp", Mac: mac}}}
}

// A whole message sent on a raw stream arrives as announced, the server's
// Challenge and trailers arrive on the stream, over TLS and plaintext.
func TestMessagesArriveAsAnnounced(t *testing.T) {
	stls, ctls := testCerts(t)
	for _, tc := range []struct {
		name   string
		server *tls.Config
		client *tls.Config
	}{{"plaintext", nil, nil}, {"tls", stls, ctls}} {
		t.Run(tc.name, func(t *testing.T) {
			nonce := bytes.Repeat([]byte{0xab}, 32)
			got := make(chan *pb.ClientMessage, 4)
			addr, _ := startServer(t, func(st pb.Federation_SessionServer) error {
				if err := st.Send(&pb.ServerMessage{
					Msg: &pb.ServerMessage_Challenge{Challenge: &pb.Challenge{Nonce: nonce}}}); err != nil {
					return err
				}
				for {
					m, err := st.Recv()
					if err == io.EOF {
						return nil
					}
					if err != nil {
						return err
					}
					got <- m
				}
			}, tc.server)
			c, err := Dial(addr, tc.client, "")
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if (c.TLS() != nil) != (tc.client != nil) || (c.TLS() != nil && c.TLS().NegotiatedProtocol != "h2") {
				t.Fatalf("TLS state %+v", c.TLS())
			}
			id, err := c.OpenStream()
			if err != nil {
				t.Fatal(err)
			}
			msg := marshal(t, register(7, 40_000)) // several DATA frames
			n, err := c.SendProto(id, msg, false)
			if err != nil || n != 5+len(msg) {
				t.Fatalf("SendProto: %d bytes, %v; want %d", n, err, 5+len(msg))
			}
			select {
			case m := <-got:
				r := m.GetRegister()
				if r == nil || r.ClientId != 7 || len(r.Mac) != 40_000 || r.Mac[40_000-1] != byte(((40_000-1)*7)%256) {
					t.Fatalf("the server received %v", m)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the message did not arrive")
			}
			if err := c.EndStream(id); err != nil {
				t.Fatal(err)
			}
			waitFor(t, func() bool { s, _ := c.Stream(id); return s.Ended })
			s, _ := c.Stream(id)
			msgs := Messages(s.Data)
			if !s.Answered || s.Status != "0" || len(msgs) != 1 {
				t.Fatalf("stream state %+v, %d messages", s, len(msgs))
			}
			var ch pb.ServerMessage
			if err := proto.Unmarshal(msgs[0], &ch); err != nil || !bytes.Equal(ch.GetChallenge().GetNonce(), nonce) {
				t.Fatalf("challenge %v, %v", &ch, err)
			}
			if st := c.Stats(); st.Settings < 1 || st.SettingsAcks < 1 || st.Headers != 2 ||
				st.DataBytes != int64(5+len(msgs[0])) {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not met within 5 s")
}

// A message whose last byte is withheld stays incomplete on the server;
// the byte completes it.
func TestWithheldByteKeepsMessageIncomplete(t *testing.T) {
	got := make(chan *pb.ClientMessage, 1)
	addr, _ := startServer(t, func(st pb.Federation_SessionServer) error {
		m, err := st.Recv()
		if err != nil {
			return err
		}
		got <- m
		<-st.Context().Done()
		return nil
	}, nil)
	c, err := Dial(addr, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	id, err := c.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	msg := marshal(t, register(3, 100_000))
	if n, err := c.SendRaw(id, append(MessagePrefix(uint32(len(msg))), msg[:len(msg)-1]...), false); err != nil ||
		n != 5+len(msg)-1 {
		t.Fatalf("sent %d, %v", n, err)
	}
	select {
	case m := <-got:
		t.Fatalf("an incomplete message was delivered: %v", m)
	case <-time.After(300 * time.Millisecond):
	}
	if s, _ := c.Stream(id); s.Sent != int64(5+len(msg)-1) || s.Reset {
		t.Fatalf("stream %+v", s)
	}
	if _, err := c.SendRaw(id, msg[len(msg)-1:], false); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-got:
		if r := m.GetRegister(); r == nil || r.ClientId != 3 || len(r.Mac) != 100_000 {
			t.Fatalf("received %v", m)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the completed message did not arrive")
	}
}

// PartialMessages: the server's stream limit refuses the streams beyond
// it, and the accepted ones carry all but the last byte.
func TestPartialMessagesRefused(t *testing.T) {
	var handlers atomic.Int32
	addr, _ := startServer(t, func(st pb.Federation_SessionServer) error {
		handlers.Add(1)
		_, err := st.Recv() // never completes
		return err
	}, nil, grpc.MaxConcurrentStreams(2))
	c, err := (&Dialer{Settle: 500 * time.Millisecond}).Dial(addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const announced = 100_000
	r := PartialMessages(c, 5, announced)
	if r.Err != nil || r.Streams != 5 || r.Refused != 3 || r.Reset != 0 || r.Accepted != 2*(5+announced-1) || r.Closed {
		t.Fatalf("report %+v", r)
	}
	if st := c.Stats(); st.PeerMaxStreams != 2 || st.RSTByCode[http2.ErrCodeRefusedStream] != 3 {
		t.Fatalf("stats %+v", st)
	}
	if h := handlers.Load(); h != 2 {
		t.Fatalf("%d handlers, want 2", h)
	}
}

// HeaderFlood: every header-only stream starts a handler, which answers.
func TestHeaderFlood(t *testing.T) {
	var handlers atomic.Int32
	addr, _ := startServer(t, func(st pb.Federation_SessionServer) error {
		handlers.Add(1)
		if err := st.Send(&pb.ServerMessage{
			Msg: &pb.ServerMessage_Challenge{Challenge: &pb.Challenge{Nonce: []byte{1}}}}); err != nil {
			return err
		}
		<-st.Context().Done()
		return nil
	}, nil)
	c, err := (&Dialer{Settle: time.Second}).Dial(addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := HeaderFlood(c, 50)
	if r.Err != nil || r.Streams != 50 || r.Refused != 0 || r.Answered != 50 || r.Sent != 0 {
		t.Fatalf("report %+v", r)
	}
	if h := handlers.Load(); h != 50 {
		t.Fatalf("%d handlers, want 50", h)
	}
}

// Without window from the server, a partial message stalls at the
// stream's window, and not a byte beyond it is sent.
func TestFlowControlStall(t *testing.T) {
	addr, _ := startServer(t, func(st pb.Federation_SessionServer) error {
		<-st.Context().Done() // never reads: no stream window comes back
		return nil
	}, nil, grpc.InitialWindowSize(65536), grpc.InitialConnWindowSize(1<<20))
	c, err := (&Dialer{Timeout: 300 * time.Millisecond}).Dial(addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := PartialMessages(c, 1, 1<<20)
	if r.Stalled != 1 || r.Complete != 0 || r.Sent != 65536 || r.Closed {
		t.Fatalf("report %+v", r)
	}
	if c.Stats().PeerInitialWindow != 65536 {
		t.Fatalf("stats %+v", c.Stats())
	}
}

// A slow reader leaves the server's sends blocked; a reading connection
// lets them through.
func TestSlowReader(t *testing.T) {
	sent := make(chan struct{}, 1)
	addr, _ := startServer(t, func(st pb.Federation_SessionServer) error {
		for range 2 {
			if err := st.Send(&pb.ServerMessage{
				Msg: &pb.ServerMessage_Chunk{Chunk: &pb.Chunk{Data: make([]byte, 300<<10)}}}); err != nil {
				return err
			}
		}
		sent <- struct{}{}
		<-st.Context().Done()
		return nil
	}, nil)
	for _, slow := range []bool{false, true} {
		c, err := (&Dialer{SlowReader: slow}).Dial(addr, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.OpenStream(); err != nil {
			t.Fatal(err)
		}
		wait := 5 * time.Second
		if slow {
			wait = 500 * time.Millisecond
		}
		select {
		case <-sent:
			if slow {
				t.Fatal("the server's sends completed to a connection that never reads")
			}
			waitFor(t, func() bool { return c.Stats().DataBytes >= 600<<10 })
		case <-time.After(wait):
			if !slow {
				t.Fatal("the server's sends did not complete to a reading connection")
			}
			if st := c.Stats(); st.Frames != 0 {
				t.Fatalf("a slow reader read %d frames", st.Frames)
			}
		}
		c.Close()
	}
}

// IdleTCP sees the server close a connection that never sends its
// preface, when (and only when) the server has a handshake timeout.
func TestIdleTCP(t *testing.T) {
	h := func(st pb.Federation_SessionServer) error { return nil }
	short, _ := startServer(t, h, nil, grpc.ConnectionTimeout(300*time.Millisecond))
	long, _ := startServer(t, h, nil)
	i, err := IdleTCP(short)
	if err != nil {
		t.Fatal(err)
	}
	defer i.Close()
	if !i.ClosedWithin(5 * time.Second) {
		t.Fatal("the server did not close an idle connection after its handshake timeout")
	}
	if after, ok := i.ClosedAfter(); !ok || after < 250*time.Millisecond || !PeerClosed(i.Err()) {
		t.Fatalf("closed after %v (%v), error %v", after, ok, i.Err())
	}
	j, err := IdleTCP(long)
	if err != nil {
		t.Fatal(err)
	}
	if j.ClosedWithin(500 * time.Millisecond) {
		t.Fatalf("closed without a timeout: %v", j.Err())
	}
	j.Close()
	if j.ClosedWithin(100 * time.Millisecond) {
		t.Fatal("our own Close counted as the server's")
	}
}

// IdleTLS sees the server close an idle HTTP/2 connection with GOAWAY
// when it has an idle limit, and stay open otherwise.
func TestIdleTLS(t *testing.T) {
	stls, ctls := testCerts(t)
	h := func(st pb.Federation_SessionServer) error { return nil }
	idle, _ := startServer(t, h, stls,
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: 300 * time.Millisecond}))
	forever, _ := startServer(t, h, stls)
	c, err := IdleTLS(idle, ctls)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if !c.ClosedWithin(5*time.Second) || c.Stats().GoAways < 1 {
		t.Fatalf("idle connection not closed with GOAWAY: %+v, %v", c.Stats(), c.Err())
	}
	d, err := IdleTLS(forever, ctls)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.ClosedWithin(500 * time.Millisecond) {
		t.Fatalf("closed: %v", d.Err())
	}
}

// A connection sees the server stop; the source address is the one asked
// for.
func TestServerStopAndLocalIP(t *testing.T) {
	from := make(chan string, 1)
	addr, srv := startServer(t, func(st pb.Federation_SessionServer) error {
		if p, ok := peer.FromContext(st.Context()); ok {
			from <- p.Addr.(*net.TCPAddr).IP.String()
		}
		<-st.Context().Done()
		return nil
	}, nil)
	c, err := Dial(addr, nil, "127.0.0.3")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.OpenStream(); err != nil {
		t.Fatal(err)
	}
	select {
	case ip := <-from:
		if ip != "127.0.0.3" {
			t.Fatalf("connection from %s, want 127.0.0.3", ip)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no handler")
	}
	if c.ClosedWithin(200 * time.Millisecond) {
		t.Fatal("closed early")
	}
	srv.Stop()
	if !c.ClosedWithin(5 * time.Second) {
		t.Fatal("the server stopped and the connection did not see it")
	}
	if _, err := c.OpenStream(); !errors.Is(err, ErrEnded) {
		t.Fatalf("OpenStream on an ended connection: %v", err)
	}
}

// A swarm runs every attack from its source addresses and stops
// promptly.
func TestSwarm(t *testing.T) {
	seen := make(chan string, 1000)
	addr, _ := startServer(t, func(st pb.Federation_SessionServer) error {
		if p, ok := peer.FromContext(st.Context()); ok {
			select {
			case seen <- p.Addr.(*net.TCPAddr).IP.String():
			default:
			}
		}
		_, err := st.Recv()
		return err
	}, nil, grpc.ConnectionTimeout(200*time.Millisecond))
	s := StartSwarm(SwarmConfig{Addr: addr, Conns: 10, LocalIPs: LoopbackIPs(2, 3), Hold: 300 * time.Millisecond,
		PartialStreams: 2, Announced: 10_000, FloodStreams: 5, Timeout: time.Second})
	time.Sleep(1500 * time.Millisecond)
	start := time.Now()
	r := s.Stop()
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("Stop took %v", d)
	}
	t.Log(r)
	for _, a := range Attacks {
		if r.Runs[a] == 0 {
			t.Errorf("no %v attack in %v", a, r.Runs)
		}
	}
	if r.DialErrors != 0 || r.Streams == 0 || r.Sent == 0 || r.ServerClosed[AttackIdleTCP] == 0 {
		t.Errorf("report %v", r)
	}
	ips := map[string]bool{}
	for len(seen) > 0 {
		ips[<-seen] = true
	}
	if len(ips) != 2 || !ips["127.0.0.2"] || !ips["127.0.0.3"] {
		t.Errorf("connections from %v", ips)
	}
}

// Package hostile is a toolkit of hostile clients for attacking a pacpfl
// federation server (package rpc, pacpfl server) and measuring what
// happens (issue #33): a raw HTTP/2 attacker that speaks just enough of
// HTTP/2 and gRPC to hold server resources (partial messages, header-only
// streams, idle connections, a socket never read), a misbehaving but
// authenticated federation client on top of the real gRPC client, and
// measurement helpers (a process's resident memory, a captured log's
// control characters and forged lines).
//
// The package does not import package rpc (whose tests import this one):
// it speaks the protocol of rpc/pb/federation.proto on its own.
//
// Everything here is meant for loopback addresses (127.0.0.0/8).
package hostile

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/pacpfl/pacpfl/rpc/pb"
)

// SessionPath is the HTTP/2 :path of the Federation Session method.
const SessionPath = pb.Federation_Session_FullMethodName

// Defaults of a Dialer.
const (
	DefaultTimeout  = 10 * time.Second
	DefaultSettle   = 200 * time.Millisecond
	DefaultKeepData = 64 << 10
)

// initialWindow is the HTTP/2 default flow-control window (RFC 9113 §6.9.2).
const initialWindow = 65535

// Dialer configures raw HTTP/2 connections. The zero value is usable.
type Dialer struct {
	// LocalIP, if set, is the source address of the connections
	// (e.g. "127.0.0.2": any 127.0.0.0/8 address works on Linux).
	LocalIP string
	// Timeout bounds the dial, the TLS handshake, the wait for the
	// server's SETTINGS, each socket write and each wait for
	// flow-control window (0: DefaultTimeout).
	Timeout time.Duration
	// SlowReader: never read from the socket, not even the server's
	// SETTINGS (nothing is acknowledged, no frame is counted, and the
	// server's windows are assumed to be the protocol's 65,535 bytes).
	// Closed then fires only when a write fails.
	SlowReader bool
	// NoPingAck: do not answer the server's PINGs.
	NoPingAck bool
	// NoWindowUpdates: never give the server flow-control window back
	// for the DATA it sent (its sends stall after 65,535 bytes).
	NoWindowUpdates bool
	// Settle is how long PartialMessages and HeaderFlood wait after
	// their last write for the server's reaction (0: DefaultSettle).
	Settle time.Duration
	// KeepData is how many DATA bytes per stream are kept for
	// StreamState.Data (0: DefaultKeepData; negative: none).
	KeepData int
}

func (d *Dialer) timeout() time.Duration {
	if d == nil || d.Timeout <= 0 {
		return DefaultTimeout
	}
	return d.Timeout
}

func (d *Dialer) settle() time.Duration {
	if d == nil || d.Settle <= 0 {
		return DefaultSettle
	}
	return d.Settle
}

// dialTCP dials addr from d.LocalIP.
func (d *Dialer) dialTCP(addr string) (net.Conn, error) {
	nd := net.Dialer{Timeout: d.timeout()}
	if d.LocalIP != "" {
		ip := net.ParseIP(d.LocalIP)
		if ip == nil {
			return nil, fmt.Errorf("hostile: local address %q is not an IP address", d.LocalIP)
		}
		nd.LocalAddr = &net.TCPAddr{IP: ip}
	}
	return nd.Dial("tcp", addr)
}

// Stats counts what the server sent on a connection.
type Stats struct {
	Frames        int   // frames read
	Settings      int   // SETTINGS frames (not acknowledgements)
	SettingsAcks  int   // SETTINGS acknowledgements (of ours)
	Pings         int   // PINGs (not acknowledgements)
	WindowUpdates int   // WINDOW_UPDATE frames, connection and streams
	ConnUpdates   int   // of which on the connection (stream 0)
	WindowGranted int64 // sum of their increments
	RSTStreams    int   // RST_STREAM frames
	// RSTByCode counts the RST_STREAM frames by error code.
	RSTByCode map[http2.ErrCode]int
	GoAways   int // GOAWAY frames
	// The last GOAWAY's error code, last stream id and debug data.
	GoAwayCode       http2.ErrCode
	GoAwayLastStream uint32
	GoAwayDebug      string
	Headers          int   // HEADERS blocks (responses and trailers)
	DataFrames       int   // DATA frames
	DataBytes        int64 // their payload bytes
	// The server's settings as last announced (0: not announced).
	PeerMaxStreams    uint32
	PeerInitialWindow uint32
	PeerMaxFrameSize  uint32
}

// StreamState is what one stream saw.
type StreamState struct {
	ID        uint32
	Sent      int64 // DATA payload bytes written by us
	Answered  bool  // the server sent response HEADERS
	Ended     bool  // the server ended the stream (END_STREAM)
	Reset     bool  // the server reset the stream (RST_STREAM)
	ResetCode http2.ErrCode
	// Status and Message are the trailers' grpc-status and grpc-message
	// ("" if none arrived).
	Status, Message string
	DataBytes       int64  // DATA payload bytes received
	Data            []byte // the first Dialer.KeepData of them
}

type stream struct {
	StreamState
	window int64 // our send window
}

// Conn is a raw HTTP/2 client connection to a gRPC server: it has sent the
// client preface and its SETTINGS; a background reader (unless
// Dialer.SlowReader) acknowledges the server's SETTINGS and PINGs,
// replenishes the server's windows, applies its WINDOW_UPDATEs to our send
// windows, counts what arrives and records when the connection ends. Its
// methods are safe for concurrent use.
type Conn struct {
	d      Dialer
	nc     net.Conn
	fr     *http2.Framer
	scheme string
	host   string
	start  time.Time

	wmu  sync.Mutex // serialises writes (the framer's and the encoder's state)
	henc *hpack.Encoder
	hbuf bytes.Buffer

	mu         sync.Mutex
	changed    chan struct{} // closed and replaced when a window grows or a stream ends
	settings   chan struct{} // closed when the server's first SETTINGS arrived
	gotSetting bool
	connWindow int64
	initWindow int64
	maxFrame   int
	nextID     uint32
	streams    map[uint32]*stream
	stats      Stats

	endOnce  sync.Once
	ended    chan struct{} // the connection ended (server, error or Close)
	closed   chan struct{} // ... other than by Close
	endedAt  time.Time
	endErr   error
	byUs     bool
	tlsState *tls.ConnectionState
}

// Dial connects to addr with d's settings; see Dialer.Dial.
func Dial(addr string, tlsConf *tls.Config, localIP string) (*Conn, error) {
	return (&Dialer{LocalIP: localIP}).Dial(addr, tlsConf)
}

// Dial connects to addr over TLS (tlsConf; its NextProtos default to
// "h2", which gRPC servers require) or in plaintext (tlsConf nil), sends
// the client preface and SETTINGS and, unless SlowReader, starts the
// reader and waits for the server's SETTINGS.
func (d *Dialer) Dial(addr string, tlsConf *tls.Config) (*Conn, error) {
	nc, err := d.dialTCP(addr)
	if err != nil {
		return nil, err
	}
	c := &Conn{d: *d, nc: nc, scheme: "http", host: addr, start: time.Now(),
		changed: make(chan struct{}), settings: make(chan struct{}), ended: make(chan struct{}),
		closed:     make(chan struct{}),
		connWindow: initialWindow, initWindow: initialWindow, maxFrame: 16384, nextID: 1, streams: map[uint32]*stream{},
		stats: Stats{RSTByCode: map[http2.ErrCode]int{}}}
	if c.d.KeepData == 0 {
		c.d.KeepData = DefaultKeepData
	}
	if tlsConf != nil {
		cfg := tlsConf.Clone()
		if len(cfg.NextProtos) == 0 {
			cfg.NextProtos = []string{"h2"}
		}
		if cfg.ServerName == "" && !cfg.InsecureSkipVerify {
			if h, _, err := net.SplitHostPort(addr); err == nil {
				cfg.ServerName = h
			}
		}
		tc := tls.Client(nc, cfg)
		tc.SetDeadline(time.Now().Add(d.timeout()))
		if err := tc.Handshake(); err != nil {
			nc.Close()
			return nil, fmt.Errorf("hostile: TLS handshake with %s: %w", addr, err)
		}
		tc.SetDeadline(time.Time{})
		st := tc.ConnectionState()
		c.tlsState = &st
		c.nc, c.scheme = tc, "https"
	}
	var r io.Reader = c.nc
	if !d.SlowReader {
		r = bufio.NewReaderSize(c.nc, 64<<10)
	}
	c.fr = http2.NewFramer(c.nc, r)
	c.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	c.fr.MaxHeaderListSize = 1 << 20
	c.henc = hpack.NewEncoder(&c.hbuf)
	err = c.write(func() error {
		if _, err := io.WriteString(c.nc, http2.ClientPreface); err != nil {
			return err
		}
		return c.fr.WriteSettings(http2.Setting{ID: http2.SettingEnablePush, Val: 0},
			http2.Setting{ID: http2.SettingInitialWindowSize, Val: initialWindow})
	})
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("hostile: HTTP/2 preface to %s: %w", addr, err)
	}
	if d.SlowReader {
		return c, nil
	}
	go c.readLoop()
	select {
	case <-c.settings:
	case <-c.ended:
		return nil, fmt.Errorf("hostile: %s closed the connection before its SETTINGS: %w", addr, c.Err())
	case <-time.After(d.timeout()):
		c.Close()
		return nil, fmt.Errorf("hostile: no SETTINGS from %s within %v", addr, d.timeout())
	}
	return c, nil
}

// TLS returns the connection's TLS state (nil in plaintext).
func (c *Conn) TLS() *tls.ConnectionState { return c.tlsState }

// LocalAddr is the connection's source address.
func (c *Conn) LocalAddr() net.Addr { return c.nc.LocalAddr() }

// write runs f with the write lock and a write deadline; a failure ends
// the connection.
func (c *Conn) write(f func() error) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	select {
	case <-c.ended:
		return c.errEnded()
	default:
	}
	c.nc.SetWriteDeadline(time.Now().Add(c.d.timeout()))
	err := f()
	if err != nil {
		c.end(fmt.Errorf("write: %w", err), false)
	}
	return err
}

// ErrEnded is returned by writes on a connection that has ended.
var ErrEnded = errors.New("hostile: connection ended")

func (c *Conn) errEnded() error {
	if err := c.Err(); err != nil {
		return fmt.Errorf("%w: %v", ErrEnded, err)
	}
	return ErrEnded
}

// end records the end of the connection (once) and closes the socket.
func (c *Conn) end(err error, byUs bool) {
	c.endOnce.Do(func() {
		c.mu.Lock()
		c.endedAt, c.endErr, c.byUs = time.Now(), err, byUs
		c.mu.Unlock()
		// closed before ended: closedWithin, woken by ended, must find
		// closed already closed when the server ended the connection.
		if !byUs {
			close(c.closed)
		}
		close(c.ended)
		c.nc.Close()
		c.mu.Lock()
		c.notify()
		c.mu.Unlock()
	})
}

// notify wakes the writers waiting for window (c.mu held).
func (c *Conn) notify() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// Close closes the connection from our side (not counted as a server
// close).
func (c *Conn) Close() error {
	c.end(nil, true)
	return nil
}

// Closed is closed when the connection ended other than by Close: the
// server closed it (EOF, reset), the reader failed or a write failed.
func (c *Conn) Closed() <-chan struct{} { return c.closed }

// ClosedWithin waits up to d for the connection to end other than by
// Close, and reports whether it did.
func (c *Conn) ClosedWithin(d time.Duration) bool { return closedWithin(c.closed, c.ended, d) }

// ClosedAfter is how long after Dial the connection ended other than by
// Close (ok false: it has not).
func (c *Conn) ClosedAfter() (time.Duration, bool) {
	select {
	case <-c.closed:
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.endedAt.Sub(c.start), true
	default:
		return 0, false
	}
}

// Err is why the connection ended (nil: open, or ended by Close).
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.endErr
}

func closedWithin(closed, ended <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-closed:
		return true
	case <-ended: // by us
		select {
		case <-closed:
			return true
		default:
			return false
		}
	case <-t.C:
		return false
	}
}

// Stats returns a copy of the connection's counters.
func (c *Conn) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.RSTByCode = make(map[http2.ErrCode]int, len(c.stats.RSTByCode))
	for k, v := range c.stats.RSTByCode {
		s.RSTByCode[k] = v
	}
	return s
}

// Stream returns the state of stream id (ok false: no such stream).
func (c *Conn) Stream(id uint32) (StreamState, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.streams[id]
	if !ok {
		return StreamState{}, false
	}
	st := s.StreamState
	st.Data = append([]byte(nil), s.Data...)
	return st, true
}

// readLoop reads the server's frames until the connection ends.
func (c *Conn) readLoop() {
	for {
		f, err := c.fr.ReadFrame()
		if err != nil {
			c.end(fmt.Errorf("read: %w", err), false)
			return
		}
		if err := c.handle(f); err != nil {
			c.end(err, false)
			return
		}
	}
}

func (c *Conn) handle(f http2.Frame) error {
	c.mu.Lock()
	c.stats.Frames++
	var replies []func() error
	switch f := f.(type) {
	case *http2.SettingsFrame:
		if f.IsAck() {
			c.stats.SettingsAcks++
			break
		}
		c.stats.Settings++
		f.ForeachSetting(func(s http2.Setting) error {
			switch s.ID {
			case http2.SettingInitialWindowSize:
				delta := int64(s.Val) - c.initWindow
				c.initWindow = int64(s.Val)
				for _, st := range c.streams {
					st.window += delta
				}
				c.stats.PeerInitialWindow = s.Val
			case http2.SettingMaxFrameSize:
				c.maxFrame = int(s.Val)
				c.stats.PeerMaxFrameSize = s.Val
			case http2.SettingMaxConcurrentStreams:
				c.stats.PeerMaxStreams = s.Val
			}
			return nil
		})
		if !c.gotSetting {
			c.gotSetting = true
			close(c.settings)
		}
		c.notify()
		replies = append(replies, c.fr.WriteSettingsAck)
	case *http2.PingFrame:
		if f.IsAck() {
			break
		}
		c.stats.Pings++
		if !c.d.NoPingAck {
			data := f.Data
			replies = append(replies, func() error { return c.fr.WritePing(true, data) })
		}
	case *http2.WindowUpdateFrame:
		c.stats.WindowUpdates++
		c.stats.WindowGranted += int64(f.Increment)
		if f.StreamID == 0 {
			c.stats.ConnUpdates++
			c.connWindow += int64(f.Increment)
		} else if st := c.streams[f.StreamID]; st != nil {
			st.window += int64(f.Increment)
		}
		c.notify()
	case *http2.RSTStreamFrame:
		c.stats.RSTStreams++
		c.stats.RSTByCode[f.ErrCode]++
		if st := c.streams[f.StreamID]; st != nil {
			st.Reset, st.ResetCode = true, f.ErrCode
		}
		c.notify()
	case *http2.GoAwayFrame:
		c.stats.GoAways++
		c.stats.GoAwayCode, c.stats.GoAwayLastStream = f.ErrCode, f.LastStreamID
		c.stats.GoAwayDebug = string(f.DebugData())
	case *http2.MetaHeadersFrame:
		c.stats.Headers++
		if st := c.streams[f.StreamID]; st != nil {
			st.Answered = true
			if v := f.PseudoValue("status"); v == "" || f.StreamEnded() {
				for _, hf := range f.RegularFields() {
					switch hf.Name {
					case "grpc-status":
						st.Status = hf.Value
					case "grpc-message":
						st.Message = hf.Value
					}
				}
			}
			if f.StreamEnded() {
				st.Ended = true
				c.notify()
			}
		}
	case *http2.DataFrame:
		n := len(f.Data())
		c.stats.DataFrames++
		c.stats.DataBytes += int64(n)
		st := c.streams[f.StreamID]
		if st != nil {
			st.DataBytes += int64(n)
			if keep := c.d.KeepData - len(st.Data); keep > 0 {
				st.Data = append(st.Data, f.Data()[:min(keep, n)]...)
			}
			if f.StreamEnded() {
				st.Ended = true
				c.notify()
			}
		}
		// Flow control counts the padding too.
		if fl := f.Header().Length; fl > 0 && !c.d.NoWindowUpdates {
			id := f.StreamID
			streamOpen := st != nil && !st.Ended && !st.Reset
			replies = append(replies, func() error {
				if err := c.fr.WriteWindowUpdate(0, fl); err != nil {
					return err
				}
				if streamOpen {
					return c.fr.WriteWindowUpdate(id, fl)
				}
				return nil
			})
		}
	}
	c.mu.Unlock()
	for _, r := range replies {
		if err := c.write(r); err != nil {
			return err
		}
	}
	return nil
}

// OpenStream opens a stream on the Federation Session method (HEADERS
// with END_HEADERS, without END_STREAM) and returns its id.
func (c *Conn) OpenStream() (uint32, error) { return c.OpenStreamPath(SessionPath, false) }

// OpenStreamPath opens a gRPC stream on path; endStream half-closes it at
// once (a request without a body).
func (c *Conn) OpenStreamPath(path string, endStream bool) (uint32, error) {
	var id uint32
	err := c.write(func() error {
		c.mu.Lock()
		id = c.nextID
		if id > 1<<31-1 {
			c.mu.Unlock()
			return errors.New("stream ids exhausted")
		}
		c.nextID += 2
		c.streams[id] = &stream{StreamState: StreamState{ID: id}, window: c.initWindow}
		c.mu.Unlock()
		c.hbuf.Reset()
		for _, f := range [][2]string{{":method", "POST"}, {":scheme", c.scheme}, {":path", path},
			{":authority", c.host},
			{"content-type", "application/grpc"}, {"te", "trailers"}, {"user-agent", "pacpfl-hostile"}} {
			if err := c.henc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]}); err != nil {
				return err
			}
		}
		return c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: c.hbuf.Bytes(),
			EndStream: endStream, EndHeaders: true})
	})
	if err != nil {
		return 0, err
	}
	return id, nil
}

// MessagePrefix is gRPC's 5-byte message prefix: not compressed, and the
// length announced, big-endian.
func MessagePrefix(announced uint32) []byte {
	var p [5]byte
	binary.BigEndian.PutUint32(p[1:], announced)
	return p[:]
}

// ErrStalled is returned when the server granted no flow-control window
// within the Dialer's Timeout.
var ErrStalled = errors.New("hostile: no flow-control window from the server")

// ErrStreamReset is returned when writing on a stream the server reset.
var ErrStreamReset = errors.New("hostile: stream reset by the server")

// SendRaw writes b as DATA on stream id within the server's flow-control
// windows (waiting up to the Dialer's Timeout for each grant), in frames
// of at most the server's maximum frame size; endStream half-closes the
// stream with the last frame. It returns how many bytes were written.
func (c *Conn) SendRaw(id uint32, b []byte, endStream bool) (int, error) {
	sent := 0
	for {
		if len(b) == 0 && !endStream {
			return sent, nil
		}
		n, err := c.reserve(id, len(b))
		if err != nil {
			return sent, err
		}
		last := endStream && n == len(b)
		err = c.write(func() error { return c.fr.WriteData(id, last, b[:n]) })
		if err != nil {
			return sent, err
		}
		c.mu.Lock()
		if st := c.streams[id]; st != nil {
			st.Sent += int64(n)
		}
		c.mu.Unlock()
		sent += n
		b = b[n:]
		if last {
			return sent, nil
		}
	}
}

// reserve takes up to want bytes (at least 1 if want > 0) of the
// connection's and stream's send windows, waiting for them.
func (c *Conn) reserve(id uint32, want int) (int, error) {
	var deadline <-chan time.Time
	for {
		c.mu.Lock()
		st := c.streams[id]
		switch {
		case st == nil:
			c.mu.Unlock()
			return 0, fmt.Errorf("hostile: no stream %d", id)
		case st.Reset:
			c.mu.Unlock()
			return 0, fmt.Errorf("%w (%v)", ErrStreamReset, st.ResetCode)
		}
		if want == 0 {
			c.mu.Unlock()
			return 0, nil
		}
		n := int64(min(want, c.maxFrame))
		n = min(n, c.connWindow, st.window)
		if n > 0 {
			c.connWindow -= n
			st.window -= n
			c.mu.Unlock()
			return int(n), nil
		}
		changed := c.changed
		c.mu.Unlock()
		if deadline == nil {
			t := time.NewTimer(c.d.timeout())
			defer t.Stop()
			deadline = t.C
		}
		select {
		case <-changed:
		case <-c.ended:
			return 0, c.errEnded()
		case <-deadline:
			return 0, ErrStalled
		}
	}
}

// zeros is the body of the messages the attacks send.
var zeros = make([]byte, 1<<20)

// SendMessage writes the gRPC prefix of a message announcing announced
// bytes, then send bytes of it (zeros): send < announced leaves the
// message incomplete on the server. It returns the DATA bytes written,
// prefix included.
func (c *Conn) SendMessage(id uint32, announced uint32, send int) (int, error) {
	n, err := c.SendRaw(id, MessagePrefix(announced), false)
	if err != nil {
		return n, err
	}
	for send > 0 {
		k, err := c.SendRaw(id, zeros[:min(send, len(zeros))], false)
		n += k
		if err != nil {
			return n, err
		}
		send -= k
	}
	return n, nil
}

// SendProto writes msg as one whole gRPC message (prefix and bytes).
func (c *Conn) SendProto(id uint32, msg []byte, endStream bool) (int, error) {
	return c.SendRaw(id, append(MessagePrefix(uint32(len(msg))), msg...), endStream)
}

// EndStream half-closes stream id (an empty DATA frame with END_STREAM).
func (c *Conn) EndStream(id uint32) error {
	_, err := c.SendRaw(id, nil, true)
	return err
}

// ResetStream cancels stream id (RST_STREAM with code).
func (c *Conn) ResetStream(id uint32, code http2.ErrCode) error {
	return c.write(func() error { return c.fr.WriteRSTStream(id, code) })
}

// Ping sends a PING (the server must answer it).
func (c *Conn) Ping() error {
	return c.write(func() error { return c.fr.WritePing(false, [8]byte{'h', 'o', 's', 't', 'i', 'l', 'e'}) })
}

// Messages splits gRPC messages (prefix and bytes) out of a stream's
// received data; an incomplete last message is left out.
func Messages(data []byte) [][]byte {
	var out [][]byte
	for len(data) >= 5 {
		n := binary.BigEndian.Uint32(data[1:5])
		if uint64(len(data)-5) < uint64(n) {
			break
		}
		out = append(out, data[5:5+n])
		data = data[5+n:]
	}
	return out
}

// PeerClosed reports whether err (Conn.Err, Idle.Err) looks like the
// server closing or resetting the connection, rather than a local
// failure.
func PeerClosed(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	s := err.Error()
	return strings.Contains(s, "connection reset") || strings.Contains(s, "broken pipe")
}

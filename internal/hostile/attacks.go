package hostile

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"golang.org/x/net/http2"
)

// Report is what an attack on one connection observed. The counts of
// refused, reset, answered and ended streams are taken a settling time
// (Dialer.Settle) after the attack's last write.
type Report struct {
	Streams  int   // streams opened (HEADERS written)
	Refused  int   // of which the server reset with REFUSED_STREAM
	Reset    int   // ... reset with another error code
	Answered int   // ... answered with response HEADERS
	Ended    int   // ... ended by the server (END_STREAM)
	Complete int   // streams whose bytes were all written
	Stalled  int   // streams left short: no flow-control window within the Dialer's Timeout
	Sent     int64 // DATA bytes written (prefixes included), all within the server's windows
	Accepted int64 // of which on streams the server did not reset
	GoAway   bool  // the server sent GOAWAY
	Closed   bool  // the connection ended other than by Close
	// Err is what stopped the attack early (nil: it ran to the end).
	Err     error
	Elapsed time.Duration
	IDs     []uint32 // the streams, for Conn.Stream
}

// PartialMessages opens streams streams on the Session method, each
// announcing a message of announced bytes and sending all of it but the
// last byte (zeros): every stream holds an incomplete message on the
// server. It stops early when the connection ends; a stream the server
// grants no window is left short (Stalled) and the next one opened.
func PartialMessages(c *Conn, streams, announced int) Report {
	start := time.Now()
	var r Report
	for range streams {
		id, err := c.OpenStream()
		if err != nil {
			r.Err = err
			break
		}
		r.IDs = append(r.IDs, id)
		n, err := c.SendMessage(id, uint32(announced), max(announced-1, 0))
		r.Sent += int64(n)
		switch {
		case err == nil:
			r.Complete++
		case errors.Is(err, ErrStalled):
			r.Stalled++
		case errors.Is(err, ErrStreamReset):
		default:
			r.Err = err
		}
		if r.Err != nil {
			break
		}
	}
	c.tally(&r, start)
	return r
}

// HeaderFlood opens n header-only streams on the Session method (HEADERS
// without END_STREAM, no DATA): every stream starts a server handler that
// waits for a registration which never comes.
func HeaderFlood(c *Conn, n int) Report {
	start := time.Now()
	var r Report
	for range n {
		id, err := c.OpenStream()
		if err != nil {
			r.Err = err
			break
		}
		r.IDs = append(r.IDs, id)
	}
	c.tally(&r, start)
	return r
}

// tally waits for the server's reaction and counts it.
func (c *Conn) tally(r *Report, start time.Time) {
	r.Streams = len(r.IDs)
	if !c.d.SlowReader {
		closedWithin(c.closed, c.ended, c.d.settle())
	}
	c.mu.Lock()
	for _, id := range r.IDs {
		st := c.streams[id]
		switch {
		case st.Reset && st.ResetCode == http2.ErrCodeRefusedStream:
			r.Refused++
		case st.Reset:
			r.Reset++
		default:
			r.Accepted += st.Sent
		}
		if st.Answered {
			r.Answered++
		}
		if st.Ended {
			r.Ended++
		}
	}
	r.GoAway = c.stats.GoAways > 0
	c.mu.Unlock()
	select {
	case <-c.closed:
		r.Closed = true
	default:
	}
	r.Elapsed = time.Since(start)
}

// Idle is a bare TCP connection that sends nothing; it reads (and counts)
// whatever the server sends, to see when the server closes it.
type Idle struct {
	nc     net.Conn
	start  time.Time
	closed chan struct{} // ended other than by Close
	ended  chan struct{}
	once   sync.Once

	mu      sync.Mutex
	endedAt time.Time
	err     error
	read    int64
}

// IdleTCP opens a TCP connection to addr that sends nothing (no TLS
// handshake, no HTTP/2 preface).
func IdleTCP(addr string) (*Idle, error) { return (&Dialer{}).IdleTCP(addr) }

// IdleTCP opens an idle TCP connection from d.LocalIP.
func (d *Dialer) IdleTCP(addr string) (*Idle, error) {
	nc, err := d.dialTCP(addr)
	if err != nil {
		return nil, err
	}
	i := &Idle{nc: nc, start: time.Now(), closed: make(chan struct{}), ended: make(chan struct{})}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := nc.Read(buf)
			i.mu.Lock()
			i.read += int64(n)
			i.mu.Unlock()
			if err != nil {
				i.end(err, false)
				return
			}
		}
	}()
	return i, nil
}

func (i *Idle) end(err error, byUs bool) {
	i.once.Do(func() {
		i.mu.Lock()
		i.endedAt = time.Now()
		if !byUs {
			i.err = err
		}
		i.mu.Unlock()
		// closed before ended: closedWithin, woken by ended, must find
		// closed already closed when the server ended the connection.
		if !byUs {
			close(i.closed)
		}
		close(i.ended)
		i.nc.Close()
	})
}

// Close closes the connection from our side.
func (i *Idle) Close() error {
	i.end(nil, true)
	return nil
}

// Closed is closed when the server closed the connection (or reading
// failed).
func (i *Idle) Closed() <-chan struct{} { return i.closed }

// ClosedWithin waits up to d for the server to close the connection.
func (i *Idle) ClosedWithin(d time.Duration) bool { return closedWithin(i.closed, i.ended, d) }

// ClosedAfter is how long after the dial the server closed the
// connection (ok false: it has not).
func (i *Idle) ClosedAfter() (time.Duration, bool) {
	select {
	case <-i.closed:
		i.mu.Lock()
		defer i.mu.Unlock()
		return i.endedAt.Sub(i.start), true
	default:
		return 0, false
	}
}

// Err is the read error that ended the connection (io.EOF: the server
// closed it).
func (i *Idle) Err() error {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.err
}

// BytesRead is how many bytes the server sent.
func (i *Idle) BytesRead() int64 {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.read
}

// IdleTLS completes the TLS handshake (tlsConf; nil: plaintext) and the
// HTTP/2 preface with addr and opens no stream.
func IdleTLS(addr string, tlsConf *tls.Config) (*Conn, error) {
	return (&Dialer{}).IdleTLS(addr, tlsConf)
}

// IdleTLS is the package's IdleTLS from d.LocalIP.
func (d *Dialer) IdleTLS(addr string, tlsConf *tls.Config) (*Conn, error) {
	return d.Dial(addr, tlsConf)
}

// Attack is one of the raw attacks a Swarm cycles through.
type Attack int

const (
	AttackPartial   Attack = iota // PartialMessages
	AttackFlood                   // HeaderFlood
	AttackSlowFlood               // HeaderFlood on a connection never read (Dialer.SlowReader)
	AttackIdleTCP                 // IdleTCP
	AttackIdleTLS                 // IdleTLS
)

// Attacks are all the raw attacks.
var Attacks = []Attack{AttackPartial, AttackFlood, AttackSlowFlood, AttackIdleTCP, AttackIdleTLS}

func (a Attack) String() string {
	switch a {
	case AttackPartial:
		return "partial-messages"
	case AttackFlood:
		return "header-flood"
	case AttackSlowFlood:
		return "header-flood-slow-reader"
	case AttackIdleTCP:
		return "idle-tcp"
	case AttackIdleTLS:
		return "idle-tls"
	}
	return fmt.Sprintf("attack(%d)", int(a))
}

// LoopbackIPs returns the addresses 127.0.0.from … 127.0.0.to.
func LoopbackIPs(from, to int) []string {
	var ips []string
	for i := from; i <= to; i++ {
		ips = append(ips, fmt.Sprintf("127.0.0.%d", i))
	}
	return ips
}

// SwarmConfig configures a Swarm.
type SwarmConfig struct {
	Addr string
	TLS  *tls.Config // nil: plaintext
	// Conns is the number of hostile connections held at once (0: 200).
	Conns int
	// LocalIPs are the source addresses, assigned round-robin (nil: the
	// kernel's choice).
	LocalIPs []string
	// Attacks are cycled through by every connection, each starting at
	// its own offset (nil: Attacks).
	Attacks []Attack
	// Hold is how long a connection is kept after its attack unless the
	// server closes it first (0: 15 s, beyond the server's 10 s
	// registration timeout).
	Hold time.Duration
	// PartialStreams streams of Announced bytes per partial-messages
	// connection (0: 4 and 1 MiB); FloodStreams streams per header flood
	// (0: 100).
	PartialStreams, Announced, FloodStreams int
	// Timeout is the Dialer's (0: 5 s).
	Timeout time.Duration
	// Pause between a connection's attacks (0: 10 ms), doubled after
	// each failed dial up to 1 s.
	Pause time.Duration
}

// SwarmReport sums up a Swarm's attacks.
type SwarmReport struct {
	Runs          map[Attack]int // attacks started (connections made), by kind
	DialErrors    int
	LastDialError string
	Streams       int   // streams opened
	Refused       int   // ... refused by the server (REFUSED_STREAM)
	Reset         int   // ... reset with another code
	Answered      int   // ... answered with HEADERS
	Stalled       int   // partial messages left short for lack of window
	Sent          int64 // DATA bytes written
	GoAways       int   // connections that received GOAWAY
	// ServerClosed counts the connections the server closed while they
	// were held, by kind, and CloseAfter the longest time from dial to
	// such a close.
	ServerClosed map[Attack]int
	CloseAfter   time.Duration
}

// String is a one-line summary.
func (r SwarmReport) String() string {
	s := fmt.Sprintf("runs %v; %d dial errors; streams %d (refused %d, reset %d, answered %d, stalled %d); %.1f MB "+
		"sent; GOAWAY on %d; server closed %v (longest %v)",
		r.Runs, r.DialErrors, r.Streams, r.Refused, r.Reset, r.Answered, r.Stalled, float64(r.Sent)/1e6, r.GoAways,
		r.ServerClosed, r.CloseAfter.Round(time.Millisecond))
	if r.LastDialError != "" {
		s += "; last dial error: " + r.LastDialError
	}
	return s
}

// Swarm holds many hostile connections at once, each cycling through the
// raw attacks until Stop.
type Swarm struct {
	cfg  SwarmConfig
	stop chan struct{}
	wg   sync.WaitGroup

	mu   sync.Mutex
	live map[io.Closer]struct{}
	rep  SwarmReport
}

// StartSwarm starts cfg.Conns attacking connections.
func StartSwarm(cfg SwarmConfig) *Swarm {
	if cfg.Conns <= 0 {
		cfg.Conns = 200
	}
	if len(cfg.Attacks) == 0 {
		cfg.Attacks = Attacks
	}
	if cfg.Hold <= 0 {
		cfg.Hold = 15 * time.Second
	}
	if cfg.PartialStreams <= 0 {
		cfg.PartialStreams = 4
	}
	if cfg.Announced <= 0 {
		cfg.Announced = 1 << 20
	}
	if cfg.FloodStreams <= 0 {
		cfg.FloodStreams = 100
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.Pause <= 0 {
		cfg.Pause = 10 * time.Millisecond
	}
	s := &Swarm{cfg: cfg, stop: make(chan struct{}), live: map[io.Closer]struct{}{},
		rep: SwarmReport{Runs: map[Attack]int{}, ServerClosed: map[Attack]int{}}}
	for i := range cfg.Conns {
		s.wg.Add(1)
		go s.worker(i)
	}
	return s
}

// Stop ends the attacks, closes every connection and returns the report.
func (s *Swarm) Stop() SwarmReport {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	s.mu.Lock()
	for c := range s.live {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return s.Report()
}

// Report is the report so far.
func (s *Swarm) Report() SwarmReport {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.rep
	r.Runs, r.ServerClosed = map[Attack]int{}, map[Attack]int{}
	for k, v := range s.rep.Runs {
		r.Runs[k] = v
	}
	for k, v := range s.rep.ServerClosed {
		r.ServerClosed[k] = v
	}
	return r
}

func (s *Swarm) stopped() bool {
	select {
	case <-s.stop:
		return true
	default:
		return false
	}
}

// track registers a live connection (false: the swarm is stopping).
func (s *Swarm) track(c io.Closer) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped() {
		c.Close()
		return false
	}
	s.live[c] = struct{}{}
	return true
}

func (s *Swarm) untrack(c io.Closer) {
	s.mu.Lock()
	delete(s.live, c)
	s.mu.Unlock()
	c.Close()
}

// closer is what both kinds of connection offer.
type closer interface {
	io.Closer
	Closed() <-chan struct{}
	ClosedAfter() (time.Duration, bool)
}

func (s *Swarm) worker(i int) {
	defer s.wg.Done()
	d := &Dialer{Timeout: s.cfg.Timeout, KeepData: -1}
	if len(s.cfg.LocalIPs) > 0 {
		d.LocalIP = s.cfg.LocalIPs[i%len(s.cfg.LocalIPs)]
	}
	fails := 0
	for k := i; !s.stopped(); k++ {
		a := s.cfg.Attacks[k%len(s.cfg.Attacks)]
		pause := s.cfg.Pause
		if s.run(d, a) {
			fails = 0
		} else {
			// The server is not up (or refuses): back off to 1 s.
			fails++
			pause = min(pause<<min(fails, 10), time.Second)
		}
		select {
		case <-s.stop:
			return
		case <-time.After(pause):
		}
	}
}

// run makes one attack and holds its connection; false: the dial failed.
func (s *Swarm) run(d *Dialer, a Attack) bool {
	var c closer
	var err error
	var conn *Conn
	switch a {
	case AttackIdleTCP:
		c, err = d.IdleTCP(s.cfg.Addr)
	case AttackSlowFlood:
		slow := *d
		slow.SlowReader = true
		conn, err = slow.Dial(s.cfg.Addr, s.cfg.TLS)
	default:
		conn, err = d.Dial(s.cfg.Addr, s.cfg.TLS)
	}
	if conn != nil {
		c = conn
	}
	if err != nil {
		s.mu.Lock()
		s.rep.DialErrors++
		s.rep.LastDialError = err.Error()
		s.mu.Unlock()
		return false
	}
	if !s.track(c) {
		return true
	}
	defer s.untrack(c)
	s.mu.Lock()
	s.rep.Runs[a]++
	s.mu.Unlock()
	var r Report
	switch a {
	case AttackPartial:
		r = PartialMessages(conn, s.cfg.PartialStreams, s.cfg.Announced)
	case AttackFlood, AttackSlowFlood:
		r = HeaderFlood(conn, s.cfg.FloodStreams)
	}
	s.mu.Lock()
	s.rep.Streams += r.Streams
	s.rep.Refused += r.Refused
	s.rep.Reset += r.Reset
	s.rep.Answered += r.Answered
	s.rep.Stalled += r.Stalled
	s.rep.Sent += r.Sent
	s.mu.Unlock()
	t := time.NewTimer(s.cfg.Hold)
	defer t.Stop()
	select {
	case <-s.stop:
	case <-c.Closed():
	case <-t.C:
	}
	if conn != nil && conn.Stats().GoAways > 0 {
		s.mu.Lock()
		s.rep.GoAways++
		s.mu.Unlock()
	}
	if after, ok := c.ClosedAfter(); ok && !s.stopped() {
		s.mu.Lock()
		s.rep.ServerClosed[a]++
		s.rep.CloseAfter = max(s.rep.CloseAfter, after)
		s.mu.Unlock()
	}
	return true
}

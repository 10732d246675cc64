package rpc

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Limits bound what peers can take from the server before they have
// proved who they are, and what an idle connection may keep. Zero fields
// take the defaults below. A connection is "registered" from the moment a
// session on it passed authentication (token MAC, client certificate) and
// the server's checks of the client's model and data.
//
// Memory: a connection that has not registered may send the server at
// most PreAuthBytes bytes (TLS handshake, HTTP/2 preface and settings, the
// stream headers and the Register message together; a Register is under
// 1 KiB), is closed when it exceeds them or has not registered
// RegisterTimeout after it was accepted, and may open at most
// MaxStreamsPerConn streams, of which one may be unregistered at a time.
// At most MaxUnauth such connections exist at once (MaxUnauthPerHost from
// one IP address); further ones are closed as soon as they are accepted,
// before any byte is read. So the memory held for peers that have not
// authenticated is at most MaxUnauth × (PreAuthBytes × a small factor +
// the per-connection buffers of gRPC and TLS), about 40 MiB with the
// defaults (README, "Limits"), whatever the number of peers.
type Limits struct {
	// MaxConns bounds all connections, registered or not (0: 2n +
	// MaxUnauth for n clients).
	MaxConns int
	// MaxUnauth bounds connections that have not registered (0: 32), and
	// MaxUnauthPerHost those of them from one IP address (0: 8).
	MaxUnauth, MaxUnauthPerHost int
	// PreAuthBytes is what an unregistered connection may send (0: 64 KiB).
	PreAuthBytes int64
	// HandshakeTimeout bounds the TLS and HTTP/2 handshakes (0: 5 s).
	HandshakeTimeout time.Duration
	// IdleTimeout closes a registered connection that has had no session
	// for this long (0: 60 s); its client reconnects when it has work.
	IdleTimeout time.Duration
	// MaxStreamsPerConn is HTTP/2's SETTINGS_MAX_CONCURRENT_STREAMS (0: 2:
	// a client's session and the one replacing it).
	MaxStreamsPerConn int
}

// Default limits.
const (
	DefaultMaxUnauth         = 32
	DefaultMaxUnauthPerHost  = 8
	DefaultPreAuthBytes      = 64 << 10
	DefaultHandshakeTimeout  = 5 * time.Second
	DefaultIdleTimeout       = 60 * time.Second
	DefaultMaxStreamsPerConn = 2
)

func (l *Limits) withDefaults(clients int) (Limits, error) {
	o := *l
	if o.MaxUnauth < 0 || o.MaxUnauthPerHost < 0 || o.MaxConns < 0 || o.PreAuthBytes < 0 || o.HandshakeTimeout < 0 ||
		o.IdleTimeout < 0 || o.MaxStreamsPerConn < 0 {
		return o, errors.New("rpc: negative connection limit")
	}
	if o.MaxUnauth == 0 {
		o.MaxUnauth = DefaultMaxUnauth
	}
	if o.MaxUnauthPerHost == 0 {
		o.MaxUnauthPerHost = DefaultMaxUnauthPerHost
	}
	o.MaxUnauthPerHost = min(o.MaxUnauthPerHost, o.MaxUnauth)
	if o.MaxConns == 0 {
		o.MaxConns = 2*clients + o.MaxUnauth
	}
	if o.PreAuthBytes == 0 {
		o.PreAuthBytes = DefaultPreAuthBytes
	}
	if o.HandshakeTimeout == 0 {
		o.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.MaxStreamsPerConn == 0 {
		o.MaxStreamsPerConn = DefaultMaxStreamsPerConn
	}
	return o, nil
}

// guard enforces Limits on the connections of a listener wrapped by
// Coordinator.Listener. The sessions find their connection by the peer
// address gRPC reports, which is the connection's remote address.
type guard struct {
	lim        Limits
	regTimeout time.Duration
	refusals   *rateLog

	mu       sync.Mutex
	conns    map[string]*guardConn // by remote address
	unauth   int
	byHost   map[string][]*guardConn // unregistered connections per IP, oldest first
	byClient map[int]*guardConn
	seq      int
}

// namedAddr renames an address (see admit).
type namedAddr struct {
	net.Addr
	name string
}

func (a namedAddr) String() string { return a.name }

func newGuard(lim Limits, regTimeout time.Duration, refusals *rateLog) *guard {
	return &guard{lim: lim, regTimeout: regTimeout, refusals: refusals,
		conns: map[string]*guardConn{}, byHost: map[string][]*guardConn{}, byClient: map[int]*guardConn{}}
}

// guardConn is an accepted connection under the guard.
type guardConn struct {
	net.Conn
	g     *guard
	addr  net.Addr
	key   string // remote address, as gRPC reports the peer
	host  string
	since time.Time // accepted

	budget atomic.Int64 // bytes an unregistered connection may still send
	authed atomic.Bool

	// under g.mu:
	client   int // registered as this client (-1: not registered)
	sessions int // live registered sessions
	pending  int // sessions that have not registered yet
	timer    *time.Timer
	closed   bool
}

// guardListener wraps a net.Listener with the guard.
type guardListener struct {
	net.Listener
	g *guard
}

// Accept returns the next connection within the limits; connections over
// a limit are closed at once and counted.
func (l *guardListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if gc := l.g.admit(c); gc != nil {
			return gc, nil
		}
	}
}

func hostOf(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}

// admit registers c or closes it if a limit is reached. When the
// unregistered connections are at their cap, a connection from an address
// that holds fewer of them than the address holding the most takes the
// place of that address's oldest one: strangers that reconnect as fast as
// they are closed cannot keep a client from another address out, each
// address keeps a fair share of the places (MaxUnauth over the number of
// addresses), and one address holding as many as any other is refused.
func (g *guard) admit(c net.Conn) *guardConn {
	addr := c.RemoteAddr()
	key := addr.String()
	host := hostOf(key)
	g.mu.Lock()
	if g.conns[key] != nil { // an in-memory listener's connections share one address
		g.seq++
		key = fmt.Sprintf("%s#%d", key, g.seq)
		addr = namedAddr{addr, key}
	}
	var why string
	var evict *guardConn
	switch {
	case len(g.conns) >= g.lim.MaxConns:
		why = fmt.Sprintf("%d connections open (the limit)", len(g.conns))
	case len(g.byHost[host]) >= g.lim.MaxUnauthPerHost:
		why = fmt.Sprintf("%d connections from %s not registered (the limit per address)", len(g.byHost[host]), host)
	case g.unauth >= g.lim.MaxUnauth:
		if evict = g.victim(host); evict == nil {
			why = fmt.Sprintf("%d connections not registered (the limit), %d of them from %s", g.unauth,
				len(g.byHost[host]), host)
		}
	}
	if why != "" {
		g.mu.Unlock()
		c.Close()
		g.refusals.add("connection limit", "closed a new connection from %s: %s", key, why)
		return nil
	}
	held := 0
	if evict != nil {
		held = len(g.byHost[evict.host])
		g.dropLocked(evict)
	}
	gc := &guardConn{Conn: c, g: g, addr: addr, key: key, host: host, since: time.Now(), client: -1}
	gc.budget.Store(g.lim.PreAuthBytes)
	g.conns[key] = gc
	g.unauth++
	g.byHost[host] = append(g.byHost[host], gc)
	gc.timer = time.AfterFunc(g.regTimeout, func() { g.expire(gc, "no registration") })
	g.mu.Unlock()
	if evict != nil {
		evict.Conn.Close()
		g.refusals.add("connection limit",
			"closed the connection from %s: its place went to %s (%d of the %d unregistered connections were from %s)",
			evict.key, key, held, g.lim.MaxUnauth, evict.host)
	}
	return gc
}

// victim returns the oldest unregistered connection of the address holding
// the most, if it holds more than host would with one more (g.mu held).
func (g *guard) victim(host string) *guardConn {
	var most []*guardConn
	for _, cs := range g.byHost {
		if len(cs) > len(most) || (len(cs) == len(most) && len(cs) > 0 && cs[0].since.Before(most[0].since)) {
			most = cs
		}
	}
	if len(most) <= len(g.byHost[host])+1 {
		return nil
	}
	return most[0]
}

// dropLocked removes gc from the guard's books (g.mu held); the caller
// closes the connection.
func (g *guard) dropLocked(gc *guardConn) {
	if gc.closed {
		return
	}
	gc.closed = true
	gc.timer.Stop()
	delete(g.conns, gc.key)
	if gc.client < 0 {
		g.unauth--
		g.unlistLocked(gc)
	} else if g.byClient[gc.client] == gc {
		delete(g.byClient, gc.client)
	}
}

// unlistLocked removes an unregistered connection from its address's list.
func (g *guard) unlistLocked(gc *guardConn) {
	cs := g.byHost[gc.host]
	for i, x := range cs {
		if x == gc {
			cs = append(cs[:i], cs[i+1:]...)
			break
		}
	}
	if len(cs) == 0 {
		delete(g.byHost, gc.host)
	} else {
		g.byHost[gc.host] = cs
	}
}

// expire closes gc unless it has registered (or, for a registered
// connection, unless a session came back).
func (g *guard) expire(gc *guardConn, why string) {
	g.mu.Lock()
	if gc.closed || (gc.client >= 0 && gc.sessions > 0) {
		g.mu.Unlock()
		return
	}
	registered := gc.client >= 0
	g.mu.Unlock()
	if !registered {
		g.refusals.add("no registration", "closed the connection from %s: %s within %v", gc.key, why, g.regTimeout)
	}
	gc.Close()
}

// Read counts what an unregistered connection sends against its budget.
func (c *guardConn) Read(b []byte) (int, error) {
	if c.authed.Load() {
		return c.Conn.Read(b)
	}
	left := c.budget.Load()
	if left <= 0 {
		c.g.refusals.add("pre-authentication bytes",
			"closed the connection from %s: more than %d bytes before registering", c.key, c.g.lim.PreAuthBytes)
		c.Close()
		return 0, errors.New("rpc: pre-authentication byte budget exhausted")
	}
	n, err := c.Conn.Read(b[:min(int64(len(b)), left)])
	if !c.authed.Load() {
		c.budget.Add(-int64(n))
	}
	return n, err
}

// RemoteAddr is the peer's address (made unique, see admit).
func (c *guardConn) RemoteAddr() net.Addr { return c.addr }

// Close removes c from the guard and closes the connection.
func (c *guardConn) Close() error {
	c.g.mu.Lock()
	c.g.dropLocked(c)
	c.g.mu.Unlock()
	return c.Conn.Close()
}

// The session side. A nil guard (a listener not wrapped) enforces nothing.

// beginSession is called when a session starts on the connection of peer
// address key; false: the connection already has a session that has not
// registered (at most one at a time).
func (g *guard) beginSession(key string) bool {
	if g == nil {
		return true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	gc := g.conns[key]
	if gc == nil {
		return true
	}
	if gc.pending > 0 {
		return false
	}
	gc.pending++
	return true
}

// registered marks the connection of key as registered as client id; the
// id's previous connection, if another and without a live session, is
// closed (one connection per client).
func (g *guard) registered(key string, id int) {
	if g == nil {
		return
	}
	var old *guardConn
	g.mu.Lock()
	gc := g.conns[key]
	if gc == nil {
		g.mu.Unlock()
		return
	}
	gc.pending--
	gc.sessions++
	if gc.client < 0 {
		g.unauth--
		g.unlistLocked(gc)
		gc.authed.Store(true)
	}
	gc.client = id
	gc.timer.Stop()
	if prev := g.byClient[id]; prev != nil && prev != gc && prev.sessions == 0 {
		old = prev
	}
	g.byClient[id] = gc
	g.mu.Unlock()
	if old != nil {
		old.Close()
	}
}

// endSession is called when a session on key's connection ends;
// registered says whether it had registered.
func (g *guard) endSession(key string, registered bool) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	gc := g.conns[key]
	if gc == nil {
		return
	}
	if !registered {
		gc.pending--
		return
	}
	if gc.sessions--; gc.sessions == 0 && !gc.closed {
		gc.timer.Reset(g.lim.IdleTimeout)
	}
}

// closeUnregistered closes every connection that has not registered
// (training is over: they could only hold the server's shutdown up).
func (g *guard) closeUnregistered() {
	if g == nil {
		return
	}
	g.mu.Lock()
	var cs []*guardConn
	for _, hc := range g.byHost {
		cs = append(cs, hc...)
	}
	for _, c := range cs {
		g.dropLocked(c)
	}
	g.mu.Unlock()
	for _, c := range cs {
		c.Conn.Close()
	}
}

// conn returns the connection of key (nil if unknown or no guard).
func (g *guard) conn(key string) *guardConn {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.conns[key]
}

// counts reports the open and the unregistered connections (tests).
func (g *guard) counts() (open, unauth int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.conns), g.unauth
}

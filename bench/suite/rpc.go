package suite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/fedavg"
	"github.com/pacpfl/pacpfl/fl/pfedbayes"
	"github.com/pacpfl/pacpfl/lml"
	"github.com/pacpfl/pacpfl/rpc"
)

// RPCConfig configures RPC. Zero fields take the defaults given.
type RPCConfig struct {
	// Reps is the repetitions per figure after one warm-up (DefaultReps).
	Reps int
	// Updates is the client updates per overhead measurement (200).
	Updates int
	// K is the particles of the overhead and concurrency tests (4).
	K int
	// Clients is the clients of the concurrency test, at most MaxRPCClients
	// (100).
	Clients int
	// Rounds is the rounds of the concurrency test (10).
	Rounds int
	// Transfers is the 25 MB round trips per transfer measurement (3).
	Transfers int
	// Method is whose rounds the transport carries: RPCMethodPACPFL ("":
	// it), or a peer method of RPCPeerMethods, whose remote clients
	// (rpc.Coordinator.RoundClients) get its global vector to Fit and to
	// Evaluate.
	Method string
}

// Defaults and limits of RPCConfig.
const (
	DefaultRPCUpdates   = 200
	DefaultRPCK         = 4
	DefaultRPCClients   = 100
	DefaultRPCRounds    = 10
	DefaultRPCTransfers = 3
	MaxRPCClients       = 10000
)

// RPCMethodPACPFL is RPCConfig.Method for PAC-PFL's particle updates.
const RPCMethodPACPFL = "pacpfl"

// RPCPeerMethods are the peer methods RPC measures (RPCConfig.Method).
var RPCPeerMethods = []string{fedavg.MethodFedAvg, pfedbayes.MethodPFedBayes}

// rpcPeer is a peer method as RPC measures it: the length of its global
// vector and whether its clients keep state between rounds.
type rpcPeer struct {
	dim      int
	stateful bool
	about    string
}

// peerOf returns method's rpcPeer; ok is false for an unknown method.
func peerOf(method string) (p rpcPeer, ok bool) {
	switch method {
	case fedavg.MethodFedAvg:
		a := fedavg.DefaultOptions().Arch.WithDefaults()
		return rpcPeer{dim: a.NumWeights(), about: fmt.Sprintf("the weights of its MLP %s", archShape(a))}, true
	case pfedbayes.MethodPFedBayes:
		a := pfedbayes.DefaultOptions().Arch.WithDefaults()
		return rpcPeer{dim: 2 * a.NumWeights(), stateful: true,
			about: fmt.Sprintf("the means and ρ of its MLP %s's weights", archShape(a))}, true
	}
	return rpcPeer{}, false
}

// archShape is a network's layer widths, e.g. 784-100-10.
func archShape(a lml.BNN) string {
	return fmt.Sprintf("%d-%d-%d", a.InC*a.InH*a.InW, a.Hidden, a.Classes)
}

// rpcStateLen is the length of a stateful benchmark client's state.
const rpcStateLen = 16

func (c RPCConfig) withDefaults() RPCConfig {
	c.Reps = orDefault(c.Reps, DefaultReps)
	c.Updates = orDefault(c.Updates, DefaultRPCUpdates)
	c.K = orDefault(c.K, DefaultRPCK)
	c.Clients = orDefault(c.Clients, DefaultRPCClients)
	c.Rounds = orDefault(c.Rounds, DefaultRPCRounds)
	c.Transfers = orDefault(c.Transfers, DefaultRPCTransfers)
	return c
}

// RPCRow is one test's figure over one transport; its JSON form is a line of
// `bench rpc --json`.
type RPCRow struct {
	Kernel string `json:"kernel"`
	// Method is the peer method whose rounds were measured ("": PAC-PFL).
	Method    string  `json:"method,omitempty"`
	Test      string  `json:"test"`
	Transport string  `json:"transport"`
	Clients   int     `json:"clients"`
	K         int     `json:"k"`
	Dim       int     `json:"dim"`
	Bytes     int     `json:"payload_bytes"`
	PerUpdate float64 `json:"overhead_ms,omitempty"`   // overhead
	MBps      float64 `json:"mb_per_s,omitempty"`      // transfer
	RoundMS   float64 `json:"round_ms,omitempty"`      // concurrent
	PerClient float64 `json:"per_client_ms,omitempty"` // concurrent: round / clients
	Errors    int     `json:"errors"`
	// StateFile: every update of the measured clients also saved their
	// state to a file (a stateful peer method), within the figure.
	StateFile bool `json:"state_file,omitempty"`
}

// WriteText writes r as a line of RPC's table.
func (r RPCRow) WriteText(w io.Writer) {
	var fig string
	switch r.Test {
	case "overhead":
		fig = fmt.Sprintf("%.3f ms per update beyond the client's compute", r.PerUpdate)
	case "fit", "evaluate":
		fig = fmt.Sprintf("%.3f ms per %s beyond the client's compute", r.PerUpdate, rpcCall[r.Test])
	case "transfer":
		fig = fmt.Sprintf("%.0f MB/s (both directions)", r.MBps)
	case "concurrent":
		fig = fmt.Sprintf("%.2f ms per round (%.3f ms per client)", r.RoundMS, r.PerClient)
	}
	if r.StateFile {
		fig += ", state file saved per update"
	}
	if r.Errors > 0 {
		fig += fmt.Sprintf(", %d ERRORS", r.Errors)
	} else {
		fig += ", no errors"
	}
	fmt.Fprintf(w, "%-11s %-9s %7d %3d %8d %8.2f MB  %s\n",
		r.Test, r.Transport, r.Clients, r.K, r.Dim, float64(r.Bytes)/1e6, fig)
}

// rpcCall names a peer method's test's call in RPCRow.WriteText.
var rpcCall = map[string]string{"fit": "Fit", "evaluate": "Evaluate"}

// RPC measures the federation's transport on loopback (TCP on 127.0.0.1,
// client and server in one process), plaintext and TLS 1.3 alternated, one
// row per test and transport. For PAC-PFL (RPCConfig.Method):
//   - overhead: one client update's round trip minus the client's compute,
//     with k particles of the GP model's dφ (a client that echoes them);
//   - transfer: 3 particles of dφ = 2²⁰ (25.2 MB) to the client and the
//     same back: bytes moved both ways per second of transport;
//   - concurrent: Clients clients updating at once, rounds of all of them:
//     the time per round and the number of errors.
//
// For a peer method, the server calls its remote clients as its rounds do
// (fl.RoundClient), with a global vector of the method's length and
// clients that compute next to nothing (Fit writes global + 1):
//   - fit, evaluate: one Fit's (one Evaluate's) round trip minus the
//     client's compute; a stateful method's clients save their state to a
//     file after every Fit, which the fit, transfer and concurrent figures
//     include;
//   - transfer: a global vector of 3·2²⁰ values (25.2 MB) to the client
//     and its update back, as PAC-PFL's;
//   - concurrent: Clients clients' Fit at once, rounds of all of them.
//
// Failed updates are counted in the rows (and RPC returns ErrRowFailed); an
// error closing a rig is returned instead (joined) after the remaining
// tests ran.
func RPC(ctx context.Context, cfg RPCConfig, out Output) ([]RPCRow, error) {
	cfg = cfg.withDefaults()
	for _, v := range []int{cfg.Reps, cfg.Updates, cfg.K, cfg.Clients, cfg.Rounds, cfg.Transfers} {
		if v < 1 {
			return nil, invalidf("reps, updates, k, rounds, transfers must be ≥ 1 and clients 1 to %d", MaxRPCClients)
		}
	}
	if cfg.Clients > MaxRPCClients {
		return nil, invalidf("clients %d: want 1 to %d", cfg.Clients, MaxRPCClients)
	}
	var peer *rpcPeer
	if cfg.Method != "" && cfg.Method != RPCMethodPACPFL {
		p, ok := peerOf(cfg.Method)
		if !ok {
			return nil, invalidf("method %q: want %s or %s", cfg.Method, RPCMethodPACPFL,
				strings.Join(RPCPeerMethods, ", "))
		}
		peer = &p
	}
	var tests []rpcTest
	if peer == nil {
		gpDim := fl.NewGPModel(1).Dim()
		tests = []rpcTest{
			{"overhead", 1, cfg.K, gpDim, cfg.Updates},
			{"transfer", 1, 3, 1 << 20, cfg.Transfers},
			{"concurrent", cfg.Clients, cfg.K, gpDim, cfg.Rounds},
		}
	} else {
		tests = []rpcTest{
			{"fit", 1, 1, peer.dim, cfg.Updates},
			{"evaluate", 1, 1, peer.dim, cfg.Updates},
			{"transfer", 1, 1, 3 << 20, cfg.Transfers},
			{"concurrent", cfg.Clients, 1, peer.dim, cfg.Rounds},
		}
	}
	out.printf("loopback 127.0.0.1, client and server in one process; minimum of %d runs, "+
		"plaintext and TLS 1.3 alternated\n", cfg.Reps)
	dimName := "dφ"
	if peer != nil {
		out.printf("%s: global vector of %d values (%s)\n", cfg.Method, peer.dim, peer.about)
		out.printf("clients computing next to nothing: Fit writes global + 1, Evaluate returns a constant\n")
		if peer.stateful {
			out.printf("stateful clients: each saves its state (%d values) to a file in a temporary directory "+
				"after every Fit\n", rpcStateLen)
		}
		dimName = "dim"
	}
	out.printf("%-11s %-9s %7s %3s %8s %11s  %s\n", "test", "transport", "clients", "k", dimName, "payload", "figure")
	var rows []RPCRow
	var closeErrs []error
	for _, tc := range tests {
		if err := ctx.Err(); err != nil {
			return rows, err
		}
		rigs := make([]*rpcRig, 2)
		names := []string{"plaintext", "tls"}
		for i := range rigs {
			var err error
			if rigs[i], err = newRPCRig(tc, peer, i == 1); err != nil {
				for _, r := range rigs[:i] {
					r.close()
				}
				return rows, err
			}
		}
		best := []time.Duration{-1, -1}
		errCount := []int{0, 0}
		for rep := 0; rep <= cfg.Reps; rep++ { // rep 0: warm-up
			for i, r := range rigs {
				el, ne := r.rounds(tc.iterations)
				errCount[i] += ne
				if rep > 0 && (best[i] < 0 || el < best[i]) {
					best[i] = el
				}
			}
		}
		for i, r := range rigs {
			if err := r.close(); err != nil {
				closeErrs = append(closeErrs, fmt.Errorf("%s %s: %w", tc.name, names[i], err))
			}
			payload := 8 * tc.k * tc.dim
			row := RPCRow{Kernel: "rpc", Test: tc.name, Transport: names[i], Clients: tc.n, K: tc.k, Dim: tc.dim,
				Bytes: payload, Errors: errCount[i]}
			if peer != nil {
				row.Method = cfg.Method
				row.StateFile = peer.stateful && tc.name != "evaluate"
			}
			sec := best[i].Seconds()
			switch tc.name {
			case "overhead", "fit", "evaluate":
				row.PerUpdate = 1e3 * sec / float64(tc.iterations)
			case "transfer":
				row.MBps = 2 * float64(payload) * float64(tc.iterations) / sec / 1e6
			case "concurrent":
				row.RoundMS = 1e3 * sec / float64(tc.iterations)
				row.PerClient = row.RoundMS / float64(tc.n)
			}
			out.row(row, row.WriteText)
			rows = append(rows, row)
		}
	}
	if len(closeErrs) > 0 {
		return rows, errors.Join(closeErrs...)
	}
	return rows, rowsErr(rows, func(r RPCRow) bool { return r.Errors > 0 })
}

// rpcTest is one test of RPC: n clients, k vectors of dim values, and the
// updates (or rounds) per measurement.
type rpcTest struct {
	name       string
	n, k, dim  int
	iterations int
}

// echoClient returns its particles as the gradient and counts its compute.
type echoClient struct{ compute *atomic.Int64 }

func (e echoClient) Update(p []float64, k, d, b int, rng *rand.Rand, g []float64) (float64, error) {
	t := time.Now()
	copy(g, p)
	e.compute.Add(int64(time.Since(t)))
	return 0, nil
}

// echoRoundClient is a peer method's client that computes next to nothing:
// its update is the global vector plus one, counted as its compute.
type echoRoundClient struct{ compute *atomic.Int64 }

func (e echoRoundClient) Fit(_ fl.RoundTask, global, out []float64) (float64, error) {
	t := time.Now()
	for j, v := range global {
		out[j] = v + 1
	}
	e.compute.Add(int64(time.Since(t)))
	return 0, nil
}

func (e echoRoundClient) Evaluate(fl.EvalTask, []float64) (fl.ClientEval, error) {
	return fl.ClientEval{Accuracy: 50, CE: 0.1, Tests: 1}, nil
}

// statefulEcho is an echoRoundClient with a small state that every Fit
// changes, which its client process saves after every Fit.
type statefulEcho struct {
	echoRoundClient
	state []float64
}

func (s *statefulEcho) Fit(t fl.RoundTask, global, out []float64) (float64, error) {
	s.state[t.Round%len(s.state)]++
	return s.echoRoundClient.Fit(t, global, out)
}

func (s *statefulEcho) AppendState(dst []float64) []float64 { return append(dst, s.state...) }

func (s *statefulEcho) SetState(st []float64) error {
	if len(st) != len(s.state) {
		return fmt.Errorf("state of %d values, want %d", len(st), len(s.state))
	}
	copy(s.state, st)
	return nil
}

// rpcRig is a loopback server with n echo clients: PAC-PFL's, or a peer
// method's (peers).
type rpcRig struct {
	lb      *rpc.Loopback
	compute atomic.Int64
	k, dim  int
	parts   []float64
	grads   [][]float64
	peers   []fl.RoundClient // a peer method's remote clients
	eval    bool             // peers: measure Evaluate, not Fit
	round   int              // peers: the next Fit's round (a stateful client's state follows it)
	dir     string           // the clients' state files ("": none)
}

// newRPCRig starts the loopback of test tc: PAC-PFL's clients for a nil
// peer, else the peer method's (stateful ones with state files in a
// temporary directory the rig removes when it closes).
func newRPCRig(tc rpcTest, peer *rpcPeer, useTLS bool) (*rpcRig, error) {
	n, k, dim := tc.n, tc.k, tc.dim
	r := &rpcRig{k: k, dim: dim, parts: make([]float64, k*dim), eval: tc.name == "evaluate"}
	for i := range r.parts {
		r.parts[i] = float64(i%1000) * 1e-3
	}
	if peer != nil && peer.stateful {
		var err error
		if r.dir, err = os.MkdirTemp("", "pacpfl-bench-rpc-"); err != nil {
			return nil, err
		}
	}
	cfgs := make([]rpc.ClientConfig, n)
	for i := range cfgs {
		cfgs[i] = rpc.ClientConfig{ID: i, ModelKind: "echo", Dim: dim, DataSize: 1, GiveUp: 30 * time.Second,
			New: func(string) (fl.Client, error) { return echoClient{&r.compute}, nil }}
		if peer != nil {
			cfgs[i].New = nil
			cfgs[i].NewRound = func() (fl.RoundClient, error) {
				if peer.stateful {
					return &statefulEcho{echoRoundClient{&r.compute}, make([]float64, rpcStateLen)}, nil
				}
				return echoRoundClient{&r.compute}, nil
			}
			if r.dir != "" {
				cfgs[i].StateFile = filepath.Join(r.dir, fmt.Sprintf("client-%d.state", i))
			}
		}
		r.grads = append(r.grads, make([]float64, k*dim))
	}
	// All n clients join at once from 127.0.0.1: let them, the limits
	// before registration are not what this measures.
	lim := rpc.Limits{MaxUnauth: n + 8, MaxUnauthPerHost: n + 8}
	scfg := rpc.ServerConfig{Clients: n, ModelKind: "echo", Dim: dim, RoundTimeout: time.Minute, Limits: lim}
	lb, err := rpc.NewLoopback(scfg, cfgs, useTLS)
	if err != nil {
		if r.dir != "" {
			os.RemoveAll(r.dir)
		}
		return nil, err
	}
	r.lb = lb
	if peer != nil {
		r.peers = lb.Co.RoundClients()
	}
	return r, nil
}

// rounds runs rounds of updates of every client at once and returns the
// wall time minus the clients' compute, and the number of failed updates.
func (r *rpcRig) rounds(n int) (time.Duration, int) {
	if r.peers != nil {
		return r.peerRounds(n)
	}
	clients := r.lb.Co.Clients()
	r.compute.Store(0)
	var errs atomic.Int64
	start := time.Now()
	for t := 0; t < n; t++ {
		var wg sync.WaitGroup
		for i, c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				w := fl.Work{Round: t, Client: i, Particles: r.parts, K: r.k, Dim: r.dim, Seed: 1, Stream: uint64(i)}
				if _, err := c.(fl.SeededClient).UpdateSeeded(w, r.grads[i]); err != nil {
					errs.Add(1)
				}
			}()
		}
		wg.Wait()
	}
	el := time.Since(start)
	if len(clients) == 1 { // one client: its compute is on the critical path
		el -= time.Duration(r.compute.Load())
	}
	return el, int(errs.Load())
}

// peerRounds is rounds of a peer method's clients: every client's Fit (or
// Evaluate) at once, n times; an update that is not global + 1 is a
// failure.
func (r *rpcRig) peerRounds(n int) (time.Duration, int) {
	r.compute.Store(0)
	var errs atomic.Int64
	start := time.Now()
	for range n {
		var wg sync.WaitGroup
		for i, c := range r.peers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if r.eval {
					if _, err := c.Evaluate(fl.EvalTask{Round: r.round}, r.parts); err != nil {
						errs.Add(1)
					}
					return
				}
				t := fl.RoundTask{Round: r.round, Seed: 1, Stream: uint64(i)}
				g := r.grads[i]
				_, err := c.Fit(t, r.parts, g)
				if err != nil || g[0] != r.parts[0]+1 || g[len(g)-1] != r.parts[len(g)-1]+1 {
					errs.Add(1)
				}
			}()
		}
		wg.Wait()
		if !r.eval {
			r.round++
		}
	}
	el := time.Since(start)
	if len(r.peers) == 1 { // one client: its compute is on the critical path
		el -= time.Duration(r.compute.Load())
	}
	return el, int(errs.Load())
}

func (r *rpcRig) close() error {
	errs := r.lb.Close()
	if r.dir != "" {
		errs = append(errs, os.RemoveAll(r.dir))
	}
	return errors.Join(errs...)
}

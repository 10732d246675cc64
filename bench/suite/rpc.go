package suite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pacpfl/pacpfl/fl"
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
	Kernel    string  `json:"kernel"`
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
}

// WriteText writes r as a line of RPC's table.
func (r RPCRow) WriteText(w io.Writer) {
	var fig string
	switch r.Test {
	case "overhead":
		fig = fmt.Sprintf("%.3f ms per update beyond the client's compute", r.PerUpdate)
	case "transfer":
		fig = fmt.Sprintf("%.0f MB/s (both directions)", r.MBps)
	case "concurrent":
		fig = fmt.Sprintf("%.2f ms per round (%.3f ms per client)", r.RoundMS, r.PerClient)
	}
	if r.Errors > 0 {
		fig += fmt.Sprintf(", %d ERRORS", r.Errors)
	} else {
		fig += ", no errors"
	}
	fmt.Fprintf(w, "%-11s %-9s %7d %3d %8d %8.2f MB  %s\n",
		r.Test, r.Transport, r.Clients, r.K, r.Dim, float64(r.Bytes)/1e6, fig)
}

// RPC measures the federation's transport on loopback (TCP on 127.0.0.1,
// client and server in one process), plaintext and TLS 1.3 alternated, one
// row per test and transport:
//   - overhead: one client update's round trip minus the client's compute,
//     with k particles of the GP model's dφ (a client that echoes them);
//   - transfer: 3 particles of dφ = 2²⁰ (25.2 MB) to the client and the
//     same back: bytes moved both ways per second of transport;
//   - concurrent: Clients clients updating at once, rounds of all of them:
//     the time per round and the number of errors.
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
	gpDim := fl.NewGPModel(1).Dim()
	tests := []struct {
		name       string
		n, k, dim  int
		iterations int
	}{
		{"overhead", 1, cfg.K, gpDim, cfg.Updates},
		{"transfer", 1, 3, 1 << 20, cfg.Transfers},
		{"concurrent", cfg.Clients, cfg.K, gpDim, cfg.Rounds},
	}
	out.printf("loopback 127.0.0.1, client and server in one process; minimum of %d runs, "+
		"plaintext and TLS 1.3 alternated\n", cfg.Reps)
	out.printf("%-11s %-9s %7s %3s %8s %11s  %s\n", "test", "transport", "clients", "k", "dφ", "payload", "figure")
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
			if rigs[i], err = newRPCRig(tc.n, tc.k, tc.dim, i == 1); err != nil {
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
			sec := best[i].Seconds()
			switch tc.name {
			case "overhead":
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

// echoClient returns its particles as the gradient and counts its compute.
type echoClient struct{ compute *atomic.Int64 }

func (e echoClient) Update(p []float64, k, d, b int, rng *rand.Rand, g []float64) (float64, error) {
	t := time.Now()
	copy(g, p)
	e.compute.Add(int64(time.Since(t)))
	return 0, nil
}

// rpcRig is a loopback server with n echo clients.
type rpcRig struct {
	lb      *rpc.Loopback
	compute atomic.Int64
	k, dim  int
	parts   []float64
	grads   [][]float64
}

func newRPCRig(n, k, dim int, useTLS bool) (*rpcRig, error) {
	r := &rpcRig{k: k, dim: dim, parts: make([]float64, k*dim)}
	for i := range r.parts {
		r.parts[i] = float64(i%1000) * 1e-3
	}
	cfgs := make([]rpc.ClientConfig, n)
	for i := range cfgs {
		cfgs[i] = rpc.ClientConfig{ID: i, ModelKind: "echo", Dim: dim, DataSize: 1, GiveUp: 30 * time.Second,
			New: func(string) (fl.Client, error) { return echoClient{&r.compute}, nil }}
		r.grads = append(r.grads, make([]float64, k*dim))
	}
	// All n clients join at once from 127.0.0.1: let them, the limits
	// before registration are not what this measures.
	lim := rpc.Limits{MaxUnauth: n + 8, MaxUnauthPerHost: n + 8}
	scfg := rpc.ServerConfig{Clients: n, ModelKind: "echo", Dim: dim, RoundTimeout: time.Minute, Limits: lim}
	lb, err := rpc.NewLoopback(scfg, cfgs, useTLS)
	if err != nil {
		return nil, err
	}
	r.lb = lb
	return r, nil
}

// rounds runs rounds of updates of every client at once and returns the
// wall time minus the clients' compute, and the number of failed updates.
func (r *rpcRig) rounds(n int) (time.Duration, int) {
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

func (r *rpcRig) close() error {
	return errors.Join(r.lb.Close()...)
}

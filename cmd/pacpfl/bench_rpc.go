package main

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pacpfl/pacpfl/bench"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/rpc"
)

// `pacpfl bench rpc`: the cost of the federation's transport on loopback
// (TCP on 127.0.0.1, in one process), plaintext and TLS alternated:
//   - overhead: one client update's round trip minus the client's compute,
//     with k particles of the GP model's dφ (a client that echoes them);
//   - transfer: k = 3 particles of dφ = 2²⁰ (25.2 MB) to the client and the
//     same back: bytes moved both ways per second of transport;
//   - concurrent: --clients clients (default 100) updating at once, rounds
//     of all of them: the time per round and the number of errors.
func init() {
	registerBench(&benchKernel{
		name:    "rpc",
		summary: "gRPC transport on loopback: round overhead per client, 25 MB payload rate, 100 concurrent clients",
		run:     runBenchRPC,
	})
}

// echoClient returns its particles as the gradient and counts its compute.
type echoClient struct{ compute *atomic.Int64 }

func (e echoClient) Update(p []float64, k, d, b int, rng *rand.Rand, g []float64) (float64, error) {
	t := time.Now()
	copy(g, p)
	e.compute.Add(int64(time.Since(t)))
	return 0, nil
}

type rpcBenchResult struct {
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
	lb, err := rpc.NewLoopback(rpc.ServerConfig{Clients: n, ModelKind: "echo", Dim: dim, RoundTimeout: time.Minute, Limits: lim}, cfgs, useTLS)
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

func runBenchRPC(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("bench rpc", stderr)
	reps := fs.Int("reps", 5, "repetitions per figure (the minimum is reported), after one warm-up")
	asJSON := fs.Bool("json", false, "one JSON object per line instead of a table")
	updates := fs.Int("updates", 200, "client updates per overhead measurement")
	k := fs.Int("k", 4, "particles of the overhead and concurrency tests")
	clients := fs.Int("clients", 100, "clients of the concurrency test")
	rounds := fs.Int("rounds", 10, "rounds of the concurrency test")
	transfers := fs.Int("transfers", 3, "25 MB round trips per transfer measurement")
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	if *reps < 1 || *updates < 1 || *k < 1 || *clients < 1 || *clients > 10000 || *rounds < 1 || *transfers < 1 {
		return fail(stderr, "bench rpc", usagef("--reps, --updates, --k, --rounds, --transfers must be ≥ 1 and --clients 1 to 10000"))
	}
	gpDim := fl.NewGPModel(1).Dim()
	type test struct {
		name       string
		n, k, dim  int
		iterations int
	}
	tests := []test{
		{"overhead", 1, *k, gpDim, *updates},
		{"transfer", 1, 3, 1 << 20, *transfers},
		{"concurrent", *clients, *k, gpDim, *rounds},
	}
	if !*asJSON {
		fmt.Fprintf(stdout, "loopback 127.0.0.1, client and server in one process; minimum of %d runs, plaintext and TLS 1.3 alternated\n", *reps)
		fmt.Fprintf(stdout, "%-11s %-9s %7s %3s %8s %11s  %s\n", "test", "transport", "clients", "k", "dφ", "payload", "figure")
	}
	status := exitOK
	for _, tc := range tests {
		rigs := make([]*rpcRig, 2)
		names := []string{"plaintext", "tls"}
		for i := range rigs {
			var err error
			if rigs[i], err = newRPCRig(tc.n, tc.k, tc.dim, i == 1); err != nil {
				return fail(stderr, "bench rpc", err)
			}
		}
		best := []time.Duration{-1, -1}
		errCount := []int{0, 0}
		for rep := 0; rep <= *reps; rep++ { // rep 0: warm-up
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
				fmt.Fprintf(stderr, "pacpfl bench rpc: %s %s: %v\n", tc.name, names[i], err)
				status = exitError
			}
			payload := 8 * tc.k * tc.dim
			res := rpcBenchResult{Kernel: "rpc", Test: tc.name, Transport: names[i], Clients: tc.n, K: tc.k, Dim: tc.dim, Bytes: payload, Errors: errCount[i]}
			sec := best[i].Seconds()
			var fig string
			switch tc.name {
			case "overhead":
				res.PerUpdate = 1e3 * sec / float64(tc.iterations)
				fig = fmt.Sprintf("%.3f ms per update beyond the client's compute", res.PerUpdate)
			case "transfer":
				res.MBps = 2 * float64(payload) * float64(tc.iterations) / sec / 1e6
				fig = fmt.Sprintf("%.0f MB/s (both directions)", res.MBps)
			case "concurrent":
				res.RoundMS = 1e3 * sec / float64(tc.iterations)
				res.PerClient = res.RoundMS / float64(tc.n)
				fig = fmt.Sprintf("%.2f ms per round (%.3f ms per client)", res.RoundMS, res.PerClient)
			}
			if errCount[i] > 0 {
				fig += fmt.Sprintf(", %d ERRORS", errCount[i])
				status = exitError
			} else {
				fig += ", no errors"
			}
			if *asJSON {
				bench.JSONLine(stdout, res)
			} else {
				fmt.Fprintf(stdout, "%-11s %-9s %7d %3d %8d %8.2f MB  %s\n", tc.name, names[i], tc.n, tc.k, tc.dim, float64(payload)/1e6, fig)
			}
		}
	}
	return status
}

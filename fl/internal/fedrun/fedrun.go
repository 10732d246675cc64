// Package fedrun is the round driver of every round-based method. Loop
// runs the rounds: each round the server selects clients (Uniform, Prefix,
// or the method's own choice), they run their local update concurrently,
// and the server takes its step from what they returned; it starts at any
// round (a resumed run) and stops between rounds when its context is done.
// PAC-PFL's SVGD server (fl.Server) is one server step on it; federated
// averaging (Run, RunHooks) is the other, for the peer methods — the
// frequentist baselines, MTL, MAML, FedVI and its FedAvg, pFedBayes, and
// GenFL's posterior and learnt-prior rounds: the server replaces the global
// weights by the data-size-weighted mean of what the clients return (or,
// with Hooks.Server, takes its own step from that mean; with
// Hooks.Aggregate, averages a random subset of them). ForEach and Pool run
// the methods' other per-client work (evaluation) over the cores.
//
// Goroutines: Loop.Run's workers (ended before it returns), ForEach's.
package fedrun

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/internal/workq"
)

// Local is one client's update in one round: start from global, write the
// client's new weights into out, draw randomness only from rng.
type Local func(client, round int, global, out []float64, rng *rand.Rand) error

// Run performs rounds of federated averaging over n clients with the given
// weights (data sizes), c clients per round (c ≤ 0 or > n: all), updating
// global in place. Client i's stream in round t is (seed, tag, t, i), so the
// result depends on neither the number of workers nor GOMAXPROCS.
func Run(n, c, rounds int, weights, global []float64, seed, tag uint64, local Local) error {
	return RunHooks(n, c, rounds, weights, global, seed, tag, local, Hooks{})
}

// Hooks change what the server does with the clients' results.
type Hooks struct {
	// Server, if set, updates global in place from mean, the weighted
	// mean of the clients' outputs this round (θ + the weighted mean of
	// their updates Δ_k = out_k − θ, since the weights sum to 1): a server
	// optimiser. Nil: global ← mean (federated averaging).
	Server func(round int, global, mean []float64)
	// AfterRound, if set, runs after round t's server step (t from 0);
	// an error stops the run.
	AfterRound func(round int) error
	// Chosen, if set, hears round t's clients in slot order (the order
	// the server sums them) after their local updates, before the server
	// step: a method reporting a per-round mean over them.
	Chosen func(round int, clients []int)
	// Aggregate, if in [1, c), is the number S of the round's c clients
	// whose outputs the server averages, drawn uniformly from the stream
	// (seed, tag, "agg", t): every sampled client trains, the server hears
	// S of them (pFedMe's and pFedBayes's protocol). 0: all c.
	Aggregate int
	// Select, if set, names round t's clients (distinct, in [0, n)) in the
	// order the server sums their outputs, in place of c drawn from the
	// stream (seed, tag, "sel", t): a method whose paper draws them its
	// own way (GenFL: round(C·K) users in increasing order).
	Select func(round int) []int
	// Workers bounds the concurrent local updates (0: GOMAXPROCS). The
	// result does not depend on it.
	Workers int
	// Start is the first round to run (a resumed run's rounds done).
	Start int
	// Quorum > 0 lets a round complete with the clients whose updates
	// arrived and were accepted, if at least Quorum of them did: a failed
	// or rejected update is told to OnDrop and left out, and the mean is
	// the weighted mean over the clients that remain, their weights
	// renormalised. 0: every client must answer (an error ends the run).
	Quorum int
	// MaxNormFactor > 0 (with Quorum) rejects an update whose L2 norm
	// ‖out − global‖ exceeds MaxNormFactor times the median norm of the
	// round's other accepted updates (at least 2 others; fewer: not
	// judged).
	MaxNormFactor float64
	// OnDrop, if set, hears every update left out of a round (round
	// 1-based).
	OnDrop func(round, client int, err error)
}

// RunHooks is Run with the server step and a per-round callback of h.
func RunHooks(n, c, rounds int, weights, global []float64, seed, tag uint64, local Local, h Hooks) error {
	if len(weights) != n || n < 1 {
		return fmt.Errorf("fedrun: %d weights for %d clients", len(weights), n)
	}
	if c <= 0 || c > n || h.Select != nil {
		c = n // the most clients a round can have
	}
	switch {
	case h.Workers < 0:
		return fmt.Errorf("fedrun: %d workers", h.Workers)
	case h.Quorum < 0 || h.Quorum > c:
		return fmt.Errorf("fedrun: quorum %d for %d clients per round", h.Quorum, c)
	case h.MaxNormFactor < 0 || h.MaxNormFactor > 0 && h.Quorum == 0:
		return fmt.Errorf("fedrun: norm factor %v (needs a quorum)", h.MaxNormFactor)
	}
	d := len(global)
	outs := make([][]float64, c)
	for i := range outs {
		outs[i] = make([]float64, d)
	}
	var mean []float64
	if h.Server != nil {
		mean = make([]float64, d)
	}
	heard := make([]int, 0, c)
	l := Loop{Clients: n, Slots: c, Start: h.Start, Rounds: rounds, Seed: seed, Tag: tag, Workers: h.Workers,
		Select: NewUniform(n, c, seed, tag).Select,
		Local: func(slot, client, round int, rng *rand.Rand) error {
			return local(client, round, global, outs[slot], rng)
		},
	}
	if h.Select != nil {
		l.Select = checkedSelect(n, h.Select)
	}
	var norms, sorted []float64
	if h.MaxNormFactor > 0 {
		norms, sorted = make([]float64, c), make([]float64, 0, c)
	}
	l.Finish = func(t int, chosen []int, errs []error) error {
		c := len(chosen)
		if err := h.accept(t, chosen, errs, outs, global, norms, sorted); err != nil {
			return err
		}
		if h.Chosen != nil {
			h.Chosen(t, chosen)
		}
		heard = heard[:0]
		if h.Aggregate > 0 && h.Aggregate < c {
			agg := rand.New(rand.NewPCG(seed, data.StreamID(tag, 0x616767, uint64(t))))
			heard = append(heard, agg.Perm(c)[:h.Aggregate]...)
			slices.Sort(heard) // sum in client-slot order
		} else {
			for s := 0; s < c; s++ {
				heard = append(heard, s)
			}
		}
		heard = slices.DeleteFunc(heard, func(s int) bool { return errs[s] != nil })
		if len(heard) == 0 {
			return fmt.Errorf("round %d: none of the clients the server hears answered", t+1)
		}
		var total float64
		for _, s := range heard {
			total += weights[chosen[s]]
		}
		avg := global
		if h.Server != nil {
			avg = mean
		}
		clear(avg)
		for _, s := range heard {
			f := weights[chosen[s]] / total
			for j, v := range outs[s] {
				avg[j] += f * v
			}
		}
		if h.Server != nil {
			h.Server(t, global, mean)
		}
		if h.AfterRound != nil {
			if err := h.AfterRound(t); err != nil {
				return fmt.Errorf("round %d: %w", t+1, err)
			}
		}
		return nil
	}
	return l.Run()
}

// accept decides which of round t's updates enter the mean (errs[s] nil
// afterwards): without a quorum the first error ends the run; with one,
// norm outliers are rejected, every left-out update told to OnDrop, and
// fewer than Quorum accepted ones end the run.
func (h *Hooks) accept(t int, chosen []int, errs []error, outs [][]float64, global, norms, sorted []float64) error {
	if h.Quorum == 0 {
		for s, err := range errs {
			if err != nil {
				return fmt.Errorf("round %d, client %d: %w", t+1, chosen[s], err)
			}
		}
		return nil
	}
	if h.MaxNormFactor > 0 {
		sorted = sorted[:0]
		for s, err := range errs {
			if err == nil {
				norms[s] = distance(outs[s], global)
				sorted = append(sorted, norms[s])
			}
		}
		if u := len(sorted); u >= 3 {
			slices.Sort(sorted)
			for s, err := range errs {
				if err != nil {
					continue
				}
				if med := MedianWithout(sorted, norms[s]); norms[s] > h.MaxNormFactor*med {
					errs[s] = fmt.Errorf("update rejected: norm %.4g above %g × the median %.4g of the round's %d "+
						"other updates", norms[s], h.MaxNormFactor, med, u-1)
				}
			}
		}
	}
	used := 0
	for s, err := range errs {
		if err == nil {
			used++
		} else if h.OnDrop != nil {
			h.OnDrop(t+1, chosen[s], err)
		}
	}
	if used < h.Quorum {
		return fmt.Errorf("round %d: only %d of the %d selected clients contributed (quorum %d)", t+1, used, len(errs),
			h.Quorum)
	}
	return nil
}

// distance is ‖a − b‖₂.
func distance(a, b []float64) float64 {
	ss := 0.0
	for j, v := range a {
		d := v - b[j]
		ss += d * d
	}
	return math.Sqrt(ss)
}

// MedianWithout is the median of sorted (ascending) with one value equal
// to x (which it holds) left out.
func MedianWithout(sorted []float64, x float64) float64 {
	p, _ := slices.BinarySearch(sorted, x)
	at := func(j int) float64 { // j-th value of sorted without position p
		if j >= p {
			j++
		}
		return sorted[j]
	}
	n := len(sorted) - 1
	if n%2 == 1 {
		return at(n / 2)
	}
	return 0.5 * (at(n/2-1) + at(n/2))
}

// checkedSelect is a method's own selection, refused unless it names
// distinct clients in [0, n).
func checkedSelect(n int, sel func(round int) []int) func(int) ([]int, error) {
	seen := make([]bool, n)
	return func(t int) ([]int, error) {
		chosen := sel(t)
		if len(chosen) == 0 || len(chosen) > n {
			return nil, fmt.Errorf("fedrun: round %d: %d clients selected of %d", t+1, len(chosen), n)
		}
		clear(seen)
		for _, i := range chosen {
			if i < 0 || i >= n || seen[i] {
				return nil, fmt.Errorf("fedrun: round %d: client %d selected twice or out of range [0, %d)", t+1, i, n)
			}
			seen[i] = true
		}
		return chosen, nil
	}
}

// ForEach runs f(0), …, f(n−1) on min(GOMAXPROCS, n) goroutines and
// returns the error of the lowest i that failed (all run regardless).
func ForEach(n int, f func(i int) error) error {
	_, err := workq.First(workq.ForEach(n, f))
	return err
}

// Pool hands out per-goroutine values (a network and its buffers): Get
// returns a free one or makes one with New, Put hands it back (the pool
// keeps as many as NewPool was told). Safe for concurrent use.
type Pool[T any] struct {
	New  func() (T, error)
	free chan T
}

// NewPool returns a pool keeping up to keep free values.
func NewPool[T any](keep int, newT func() (T, error)) *Pool[T] {
	return &Pool[T]{New: newT, free: make(chan T, max(keep, 1))}
}

// Get returns a free value or a new one.
func (p *Pool[T]) Get() (T, error) {
	select {
	case v := <-p.free:
		return v, nil
	default:
		return p.New()
	}
}

// Put hands v back.
func (p *Pool[T]) Put(v T) {
	select {
	case p.free <- v:
	default:
	}
}

// Each is ForEach with a value of pool lent to every call.
func Each[T any](pool *Pool[T], n int, f func(v T, i int) error) error {
	return ForEach(n, func(i int) error {
		v, err := pool.Get()
		if err != nil {
			return err
		}
		defer pool.Put(v)
		return f(v, i)
	})
}

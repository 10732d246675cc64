// Package fedrun is the federated-averaging loop the frequentist baselines
// and FedVI share: each round the server samples clients, they run their
// local update concurrently from the global weights, and the server replaces
// the global weights by the data-size-weighted mean of what they return (or,
// with Hooks.Server, takes its own step from that mean).
package fedrun

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/pacpfl/pacpfl/data"
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
}

// RunHooks is Run with the server step and a per-round callback of h.
func RunHooks(n, c, rounds int, weights, global []float64, seed, tag uint64, local Local, h Hooks) error {
	if len(weights) != n || n < 1 {
		return fmt.Errorf("fedrun: %d weights for %d clients", len(weights), n)
	}
	if c <= 0 || c > n {
		c = n
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
	errs := make([]error, c)
	chosen := make([]int, c)
	workers := min(runtime.GOMAXPROCS(0), c)
	for t := 0; t < rounds; t++ {
		sel := rand.New(rand.NewPCG(seed, data.StreamID(tag, 0x73656c, uint64(t))))
		perm := sel.Perm(n)
		copy(chosen, perm[:c])
		var wg sync.WaitGroup
		next := make(chan int)
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for s := range next {
					i := chosen[s]
					rng := rand.New(rand.NewPCG(seed, data.StreamID(tag, uint64(t), uint64(i))))
					errs[s] = local(i, t, global, outs[s], rng)
				}
			}()
		}
		for s := 0; s < c; s++ {
			next <- s
		}
		close(next)
		wg.Wait()
		var total float64
		for s := 0; s < c; s++ {
			if errs[s] != nil {
				return fmt.Errorf("round %d, client %d: %w", t+1, chosen[s], errs[s])
			}
			total += weights[chosen[s]]
		}
		avg := global
		if h.Server != nil {
			avg = mean
		}
		clear(avg)
		for s := 0; s < c; s++ {
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
	}
	return nil
}

package fedrun

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/pacpfl/pacpfl/data"
)

// Loop is the round driver every round-based method runs on: each round
// Select names the clients, their Local updates run concurrently (one per
// slot, the slot being the client's position in the round), then Finish
// takes the server's step from what they left in the method's per-slot
// buffers. Federated averaging (RunHooks) and PAC-PFL's SVGD server
// (fl.Server) are two Finish steps of it.
//
// A round allocates nothing: the workers, the per-slot random streams and
// the error slots are made once per Run. Client i's stream in round t is
// (Seed, Stream(t, i)) whichever worker runs it, so a run depends on
// neither Workers nor GOMAXPROCS.
type Loop struct {
	// Clients is the number n of clients; Slots the most a round can have
	// (the length of the buffers Local and Finish index by slot).
	Clients, Slots int
	// Start is the first round to run (0-based; a resumed run's rounds
	// done), Rounds the round after the last.
	Start, Rounds int
	// Seed and Tag seed the clients' random streams.
	Seed, Tag uint64
	// Workers bounds the concurrent local updates (0: GOMAXPROCS).
	Workers int
	// Select returns round t's clients in slot order: at most Slots
	// distinct clients in [0, Clients) (Uniform and Prefix draw them).
	// Its error ends the run as it is.
	Select func(round int) ([]int, error)
	// Local is one client's update in a round, its random draws from rng
	// only. Updates of different slots run concurrently; its error is
	// handed to Finish in that slot.
	Local func(slot, client, round int, rng *rand.Rand) error
	// Finish is the server's step after round t's updates: errs[s] is
	// slot s's Local error. Its error ends the run as it is; a
	// checkpoint taken in it is at a round boundary.
	Finish func(round int, chosen []int, errs []error) error
	// Ctx, if set, is checked before every round: once it is done the run
	// ends with its error (the rounds so far are complete).
	Ctx context.Context
}

// Stream is the stream id of client i's update in round t.
func (l *Loop) Stream(round, client int) uint64 {
	return data.StreamID(l.Tag, uint64(round), uint64(client))
}

// Run runs rounds Start..Rounds−1.
func (l *Loop) Run() error {
	if l.Slots < 1 || l.Clients < l.Slots {
		return fmt.Errorf("fedrun: %d slots for %d clients", l.Slots, l.Clients)
	}
	if l.Workers < 0 {
		return fmt.Errorf("fedrun: %d workers", l.Workers)
	}
	workers := l.Workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, l.Slots)
	errs := make([]error, l.Slots)
	pcgs := make([]*rand.PCG, l.Slots)
	rngs := make([]*rand.Rand, l.Slots)
	for s := range pcgs {
		pcgs[s] = rand.NewPCG(0, 0)
		rngs[s] = rand.New(pcgs[s])
	}
	var (
		wg     sync.WaitGroup
		round  int
		chosen []int
	)
	jobs := make(chan int)
	defer close(jobs)
	for w := 0; w < workers; w++ {
		go func() {
			for s := range jobs {
				i := chosen[s]
				pcgs[s].Seed(l.Seed, l.Stream(round, i))
				errs[s] = l.Local(s, i, round, rngs[s])
				wg.Done()
			}
		}()
	}
	for t := l.Start; t < l.Rounds; t++ {
		if l.Ctx != nil {
			if err := l.Ctx.Err(); err != nil {
				return err
			}
		}
		sel, err := l.Select(t)
		if err != nil {
			return err
		}
		if len(sel) > l.Slots {
			return fmt.Errorf("fedrun: round %d: %d clients selected for %d slots", t+1, len(sel), l.Slots)
		}
		round, chosen = t, sel
		wg.Add(len(sel))
		for s := range sel {
			jobs <- s
		}
		wg.Wait()
		if err := l.Finish(t, sel, errs[:len(sel)]); err != nil {
			return err
		}
	}
	return nil
}

// Uniform draws c of n clients uniformly without replacement, round t's
// from the stream (seed, tag, "sel", t): the first c of a uniform
// permutation of the n (the draw of rand.Perm, in a buffer kept across
// rounds).
type Uniform struct {
	n, c      int
	seed, tag uint64
	pcg       *rand.PCG
	rng       *rand.Rand
	perm      []int
	swap      func(i, j int)
}

// NewUniform returns a Uniform for c of n clients (c ≤ 0 or > n: all).
func NewUniform(n, c int, seed, tag uint64) *Uniform {
	if c <= 0 || c > n {
		c = n
	}
	u := &Uniform{n: n, c: c, seed: seed, tag: tag, pcg: rand.NewPCG(0, 0), perm: make([]int, n)}
	u.rng = rand.New(u.pcg)
	u.swap = func(i, j int) { u.perm[i], u.perm[j] = u.perm[j], u.perm[i] }
	return u
}

// Select returns round t's clients (a view, valid until the next call).
func (u *Uniform) Select(t int) ([]int, error) {
	u.pcg.Seed(u.seed, data.StreamID(u.tag, 0x73656c, uint64(t)))
	for i := range u.perm {
		u.perm[i] = i
	}
	u.rng.Shuffle(u.n, u.swap)
	return u.perm[:u.c], nil
}

// Prefix draws c of n clients uniformly without replacement, round t's
// from the stream (seed, tag, t) by the first c steps of a forward
// Fisher–Yates shuffle: PAC-PFL's C_t (docs/math.md §2.1). Uniform and
// Prefix draw the same distribution from different bits of their streams;
// each keeps its methods' results as they were.
type Prefix struct {
	n, c      int
	seed, tag uint64
	pcg       *rand.PCG
	rng       *rand.Rand
	perm      []int
}

// NewPrefix returns a Prefix for c of n clients (c ≤ 0 or > n: all).
func NewPrefix(n, c int, seed, tag uint64) *Prefix {
	if c <= 0 || c > n {
		c = n
	}
	p := &Prefix{n: n, c: c, seed: seed, tag: tag, pcg: rand.NewPCG(0, 0), perm: make([]int, n)}
	p.rng = rand.New(p.pcg)
	return p
}

// Select returns round t's clients (a view, valid until the next call).
func (p *Prefix) Select(t int) ([]int, error) {
	p.pcg.Seed(p.seed, data.StreamID(p.tag, uint64(t)))
	for i := range p.perm {
		p.perm[i] = i
	}
	for i := 0; i < p.c; i++ {
		j := i + p.rng.IntN(p.n-i)
		p.perm[i], p.perm[j] = p.perm[j], p.perm[i]
	}
	return p.perm[:p.c], nil
}

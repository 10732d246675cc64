package fl

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"time"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl/internal/fedrun"
	"github.com/pacpfl/pacpfl/svgd"
)

// Client is one existing client as the server sees it (Algorithm 2). The loop
// never looks inside: a GP client and a BNN client both fit.
type Client interface {
	// Update writes into grad (k×dphi, row-major) the gradient
	// ∇_{φ_κ} ln Z^C_{m_i}(P_{φ_κ}, S_i^(b)) for every particle row of
	// particles (k×dphi), on a mini-batch of size batch drawn with rng
	// (batch ≤ 0 or ≥ m_i: all of S_i), and returns the mean over the k
	// particles of ln Z^C. Update is called by one goroutine at a time per
	// client, but different clients run concurrently.
	Update(particles []float64, k, dphi, batch int, rng *rand.Rand, grad []float64) (meanLML float64, err error)
}

// Work is one client's task of a round, as a client that runs elsewhere
// receives it: the random stream of the round is given by its PCG seed pair
// (Seed, Stream), from which ClientStream rebuilds, on the client's side,
// exactly the stream Update would have received in process.
type Work struct {
	Round, Client int       // 0-based
	Particles     []float64 // k×dφ (a view, do not modify)
	K, Dim, Batch int
	Seed, Stream  uint64
}

// SeededClient is a Client that runs elsewhere (a network proxy): the server
// calls UpdateSeeded instead of Update, with the seeds of the client's stream
// in place of the stream, and the remote side calls the same Client.Update as
// an in-process run with ClientStream(Seed, Stream).
type SeededClient interface {
	Client
	UpdateSeeded(w Work, grad []float64) (meanLML float64, err error)
}

// ClientStream is the random stream of Work w's client update.
func ClientStream(seed, stream uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, stream)) }

// HyperPrior is the data-free hyper-prior 𝒫 over prior parameters φ.
type HyperPrior interface {
	Dim() int
	Sample(dst []float64, rng *rand.Rand)
	// AddGrad adds ∇ ln 𝒫(φ) to dst.
	AddGrad(dst, phi []float64)
}

// Aggregation says how the c client gradients of a round become the data term
// of the score (40).
type Aggregation int

const (
	// AggregateSum is τ·(n/c)·Σ_{i∈C_t} G_i: unbiased for τ Σ_{i=1}^n ∇ ln Z^C_i
	// of (40), so τ keeps its meaning in the bounds; the default
	// (docs/math.md §2.1 and §11.3).
	AggregateSum Aggregation = iota
	// AggregateMean is Algorithm 1's literal line 5: τ·(1/c)·Σ_{i∈C_t} G_i.
	AggregateMean
)

// Config holds the parameters of Algorithm 1 (and 3).
type Config struct {
	K               int     // particles k
	Rounds          int     // T
	ClientsPerRound int     // c (0 → min(n, 24))
	Batch           int     // b (0 → all of S_i)
	LR              float64 // η
	Optimizer       string  // "adam" (default) or "sgd" (plain ascent, as the paper)
	Tau             float64 // server temperature τ
	Aggregation     Aggregation
	Seed            uint64
	Workers         int       // concurrent client updates (0 → GOMAXPROCS)
	DP              *DPConfig // nil: no differential privacy
	// Progress, if set, is called after each round with the round
	// (1-based), Rounds and the mean ln Z^C of that round's clients.
	Progress func(RoundEvent)

	// Quorum > 0 lets a round complete with the selected clients whose
	// updates arrived and were accepted, if there are at least Quorum of
	// them: a failed, late, non-finite or rejected update is reported to
	// OnDrop and left out, and the aggregate averages over the clients that
	// remain. 0: every selected client must answer (an error ends the run).
	//
	// Every update is validated, with or without a quorum: a gradient with
	// a non-finite entry or whose squared L2 norm overflows, a non-finite
	// mean ln Z^C, and (MaxUpdateNorm) an update above the absolute bound
	// are rejected. Without a quorum a rejection ends the run with an error
	// "round r: client i …" that names the value.
	Quorum int
	// MaxUpdateNorm > 0 rejects an update whose L2 norm (the whole k×dφ
	// gradient, as the client returned it) exceeds MaxUpdateNorm. The bound
	// does not depend on the other clients, so it holds with any number of
	// clients per round, one included. With DP both apply: the bound
	// rejects the raw update, the clip then bounds what was accepted.
	MaxUpdateNorm float64
	// MaxNormFactor > 0 (with Quorum) rejects an update whose L2 norm
	// exceeds MaxNormFactor times the median norm of the round's other
	// accepted updates (those that passed validation and MaxUpdateNorm; its
	// own norm excluded). An update with fewer than 2 other accepted
	// updates is not judged by it: with 2 clients per round it never
	// rejects, and MaxUpdateNorm is what bounds an update then.
	MaxNormFactor float64
	// Robust replaces the mean over the accepted updates by a robust rule
	// (coordinate-wise median or trimmed mean, Krum, multi-Krum; see
	// RobustRule). The zero value is the mean.
	Robust Robust
	// OnDrop, if set, is told of every update left out of a round (round
	// 1-based).
	OnDrop func(round, client int, err error)
	// AfterRound, if set, is called after each round (1-based) once the
	// server's state is consistent (State may be called); an error ends the
	// run with that error.
	AfterRound func(s *Server, round int) error
	// Resume, if set, continues a run from a state saved by State.
	Resume *State
}

// Validate reports the first unusable parameter for n clients.
func (c *Config) Validate(n int) error {
	switch {
	case n < 1:
		return errors.New("server: no clients")
	case c.K < 1:
		return fmt.Errorf("server: k = %d particles; need k ≥ 1", c.K)
	case c.Rounds < 0:
		return fmt.Errorf("server: negative number of rounds %d", c.Rounds)
	case c.ClientsPerRound < 0 || c.ClientsPerRound > n:
		return fmt.Errorf("server: %d clients per round but only %d clients", c.ClientsPerRound, n)
	case c.Batch < 0:
		return fmt.Errorf("server: negative batch size %d", c.Batch)
	case !(c.LR > 0) || math.IsInf(c.LR, 0):
		return fmt.Errorf("server: learning rate %v must be positive and finite", c.LR)
	case !(c.Tau > 0) || math.IsInf(c.Tau, 0):
		return fmt.Errorf("server: τ = %v must be positive and finite", c.Tau)
	case c.Optimizer != "" && c.Optimizer != "adam" && c.Optimizer != "sgd":
		return fmt.Errorf("server: unknown optimiser %q (want adam or sgd)", c.Optimizer)
	case c.Aggregation != AggregateSum && c.Aggregation != AggregateMean:
		return fmt.Errorf("server: unknown aggregation %d", c.Aggregation)
	case c.Workers < 0:
		return fmt.Errorf("server: negative worker count %d", c.Workers)
	case c.Quorum < 0:
		return fmt.Errorf("server: negative quorum %d", c.Quorum)
	case !(c.MaxNormFactor >= 0) || math.IsInf(c.MaxNormFactor, 0):
		return fmt.Errorf("server: norm factor %v must be ≥ 0 and finite", c.MaxNormFactor)
	case c.MaxNormFactor > 0 && c.Quorum == 0:
		return errors.New("server: rejecting updates by norm needs a quorum (a rejected update would end the run)")
	case !(c.MaxUpdateNorm >= 0) || math.IsInf(c.MaxUpdateNorm, 0):
		return fmt.Errorf("server: update norm bound %v must be ≥ 0 and finite", c.MaxUpdateNorm)
	}
	if c.DP != nil {
		if err := c.DP.Validate(); err != nil {
			return fmt.Errorf("server: %w", err)
		}
	}
	cpr := c.ClientsPerRound
	if cpr == 0 {
		cpr = min(n, DefaultClientsPerRound)
	}
	return c.Robust.validate(cpr, c.Quorum, c.DP != nil)
}

// DefaultClientsPerRound is c when Config.ClientsPerRound is 0 (docs/math.md §10).
const DefaultClientsPerRound = 24

// Result is the outcome of a training run.
type Result struct {
	Particles []float64 // k×dφ, the hyper-posterior approximation
	K, Dim    int
	// MeanLML[t] is the mean ln Z^C over the clients of round t+1.
	MeanLML []float64
	Elapsed time.Duration
	// Privacy is the DP guarantee of the released particles (Algorithm 3),
	// ε = +Inf without DP: deterministic SVGD loses the inherent privacy of
	// Lemma 4.5. MeanLML is not covered by it.
	Privacy Privacy
}

// Server runs Algorithm 1 (Algorithm 3 with Config.DP).
type Server struct {
	cfg     Config
	prior   HyperPrior
	clients []Client
	n, c, k int
	dim     int
	workers int

	particles []float64
	scores    []float64
	grads     [][]float64 // per round slot, k×dφ
	lmls      []float64
	errs      []error   // per slot, the round's (fedrun.Loop's)
	norms     []float64 // per slot: L2 norm of a validated update
	sorted    []float64
	robust    *robustWork // nil with the mean
	history   []float64   // mean ln Z^C of the rounds done
	res       *Result     // the result a Run is building
	noiseSrc  rand.Source
	chosen    []int // the round's clients, slot order
	round     int
	sv        *svgd.SVGD
	opt       svgd.Optimizer
	// The round driver: client selection (C_t on the round stream), the
	// clients' updates on per-slot streams reseeded for every (round,
	// client), so that a client's mini-batch never depends on which worker
	// ran it.
	loop fedrun.Loop
	// DP noise: a secret stream unless the caller supplied one.
	noise *rand.Rand
}

// Random-stream tags.
const (
	tagInit   = 0x696e6974
	tagRound  = 0x726f756e64
	tagClient = 0x636c69656e74
)

// NewServer draws the k initial particles from the hyper-prior (line 1).
func NewServer(cfg Config, prior HyperPrior, clients []Client) (*Server, error) {
	n := len(clients)
	if cfg.ClientsPerRound == 0 {
		cfg.ClientsPerRound = min(n, DefaultClientsPerRound)
	}
	if err := cfg.Validate(n); err != nil {
		return nil, err
	}
	if prior == nil || prior.Dim() < 1 {
		return nil, errors.New("server: hyper-prior missing or of dimension 0")
	}
	if cfg.Quorum > cfg.ClientsPerRound {
		return nil, fmt.Errorf("server: quorum %d above the %d clients per round", cfg.Quorum, cfg.ClientsPerRound)
	}
	s := &Server{cfg: cfg, prior: prior, clients: clients, n: n, c: cfg.ClientsPerRound, k: cfg.K, dim: prior.Dim()}
	s.workers = cfg.Workers
	if s.workers == 0 {
		s.workers = runtime.GOMAXPROCS(0)
	}
	s.workers = min(s.workers, s.c)
	kd := s.k * s.dim
	s.particles = make([]float64, kd)
	s.scores = make([]float64, kd)
	s.grads = make([][]float64, s.c)
	for i := range s.grads {
		s.grads[i] = make([]float64, kd)
	}
	s.lmls = make([]float64, s.c)
	s.norms = make([]float64, s.c)
	s.sorted = make([]float64, 0, s.c)
	if r := cfg.Robust.rule(); r != RobustMean {
		s.robust = newRobustWork(s.c, r == RobustKrum || r == RobustMultiKrum)
	}
	s.loop = fedrun.Loop{Clients: n, Slots: s.c, Rounds: cfg.Rounds, Seed: cfg.Seed, Tag: tagClient, Workers: s.workers,
		Select: fedrun.NewPrefix(n, s.c, cfg.Seed, tagRound).Select, Local: s.runClient, Finish: s.finish}
	init := rand.New(rand.NewPCG(cfg.Seed, data.StreamID(tagInit)))
	for r := 0; r < s.k; r++ {
		prior.Sample(s.particles[r*s.dim:(r+1)*s.dim], init)
	}
	var err error
	if s.sv, err = svgd.New(s.k, s.dim); err != nil {
		return nil, err
	}
	if cfg.DP != nil {
		src, err := cfg.DP.noiseSource()
		if err != nil {
			return nil, err
		}
		s.noise = rand.New(src)
		s.noiseSrc = src
	}
	if cfg.Optimizer == "sgd" {
		s.opt = &svgd.Ascent{LR: cfg.LR}
	} else {
		s.opt = svgd.NewAdam(cfg.LR)
	}
	if cfg.Resume != nil {
		if err := s.restore(cfg.Resume); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Particles returns the current particles (k×dφ; a view, do not modify).
func (s *Server) Particles() []float64 { return s.particles }

// Run performs the T rounds (those after Config.Resume's) and returns the
// result.
func (s *Server) Run() (*Result, error) { return s.RunContext(context.Background()) }

// RunContext is Run ending before the next round once ctx is done, with
// ctx's error; the server's state is then that of the last completed round.
func (s *Server) RunContext(ctx context.Context) (*Result, error) {
	start := time.Now()
	s.res = &Result{K: s.k, Dim: s.dim, MeanLML: make([]float64, 0, s.cfg.Rounds),
		Privacy: s.cfg.DP.privacy(s.cfg.Rounds, s.c, s.k, s.dim)}
	s.res.MeanLML = append(s.res.MeanLML, s.history...)
	s.loop.Start, s.loop.Ctx = len(s.history), ctx
	err := s.loop.Run()
	res := s.res
	s.res, s.loop.Ctx = nil, nil
	if err != nil {
		return nil, err
	}
	res.Particles = append([]float64(nil), s.particles...)
	res.Elapsed = time.Since(start)
	return res, nil
}

// finish is round t's server step (fedrun.Loop.Finish): aggregate, SVGD
// step, bookkeeping, then the caller's Progress and AfterRound.
func (s *Server) finish(t int, chosen []int, errs []error) error {
	s.round, s.chosen, s.errs = t, chosen, errs
	lml, err := s.finishRound()
	if err != nil {
		return fmt.Errorf("round %d: %w", t+1, err)
	}
	s.res.MeanLML = append(s.res.MeanLML, lml)
	s.history = append(s.history, lml)
	if s.cfg.Progress != nil {
		s.cfg.Progress(RoundEvent{Round: t + 1, Rounds: s.cfg.Rounds, Value: lml})
	}
	if s.cfg.AfterRound != nil {
		return s.cfg.AfterRound(s, t+1)
	}
	return nil
}

// runClient is client ci's update in slot (fedrun.Loop.Local): in process
// on rng, the stream (Seed, Stream(round, ci)), or by a SeededClient from
// that stream's seeds.
func (s *Server) runClient(slot, ci, round int, rng *rand.Rand) error {
	g := s.grads[slot]
	var lml float64
	var err error
	if sc, ok := s.clients[ci].(SeededClient); ok {
		lml, err = sc.UpdateSeeded(Work{Round: round, Client: ci, Particles: s.particles, K: s.k, Dim: s.dim,
			Batch: s.cfg.Batch, Seed: s.cfg.Seed, Stream: s.loop.Stream(round, ci)}, g)
	} else {
		lml, err = s.clients[ci].Update(s.particles, s.k, s.dim, s.cfg.Batch, rng, g)
	}
	if err != nil {
		err = fmt.Errorf("client %d: %w", ci, err)
	} else {
		err = s.validate(slot, ci, lml)
	}
	s.lmls[slot] = lml
	return err
}

// validate checks the update in slot (from client ci) and records its L2
// norm: every entry finite, the squared norm finite (an overflowing
// norm, entries beyond about 1.3e154, would make Adam's second moment
// +Inf), the mean ln Z^C finite, and the norm within MaxUpdateNorm.
func (s *Server) validate(slot, ci int, lml float64) error {
	g := s.grads[slot]
	// Σ v² is finite only if every v is (a NaN or ±Inf entry makes it NaN
	// or +Inf), so the entries are scanned only to name a bad one.
	ss := 0.0
	for _, v := range g {
		ss += v * v
	}
	if math.IsNaN(ss) || math.IsInf(ss, 0) {
		for j, v := range g {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("client %d returned a non-finite gradient (%v at particle %d, coordinate %d)", ci, v,
					j/s.dim, j%s.dim)
			}
		}
	}
	if math.IsInf(ss, 0) {
		big := 0
		for j, v := range g {
			if math.Abs(v) > math.Abs(g[big]) {
				big = j
			}
		}
		return fmt.Errorf("client %d returned a gradient whose squared L2 norm overflows (largest entry %.4g at "+
			"particle %d, coordinate %d)", ci, g[big], big/s.dim, big%s.dim)
	}
	if math.IsNaN(lml) || math.IsInf(lml, 0) {
		return fmt.Errorf("client %d returned a non-finite mean ln Z^C (%v)", ci, lml)
	}
	norm := math.Sqrt(ss)
	s.norms[slot] = norm
	if b := s.cfg.MaxUpdateNorm; b > 0 && norm > b {
		return fmt.Errorf("client %d: update rejected: gradient norm %.4g above the bound %g (MaxUpdateNorm)", ci, norm,
			b)
	}
	return nil
}

// finishRound aggregates the accepted client gradients in slot order
// (deterministic) by the mean or Config.Robust's rule, forms the score (40)
// and takes the SVGD step (39).
func (s *Server) finishRound() (float64, error) {
	used, err := s.acceptUpdates()
	if err != nil {
		return 0, err
	}
	var meanLML float64
	var agg []float64
	if s.robust == nil {
		for slot, v := range s.lmls {
			if s.errs[slot] == nil {
				meanLML += v
			}
		}
		meanLML /= float64(used)
		if math.IsInf(meanLML, 0) { // finite values whose sum overflows
			meanLML = 0
			for slot, v := range s.lmls {
				if s.errs[slot] == nil {
					meanLML += v / float64(used)
				}
			}
		}
		agg = s.clippedMean(used)
	} else {
		w := s.robust
		w.ups, w.lmls = w.ups[:0], w.lmls[:0]
		for slot, g := range s.grads {
			if s.errs[slot] == nil {
				w.ups = append(w.ups, g)
				w.lmls = append(w.lmls, s.lmls[slot])
			}
		}
		agg = s.scores
		if meanLML, err = w.aggregate(agg, s.cfg.Robust); err != nil {
			return 0, err
		}
	}
	// Under DP: noise calibrated to the sensitivity of this mean (dp.go).
	if s.cfg.DP != nil {
		scale := s.cfg.DP.NoiseScale(s.cfg.Rounds, used)
		for i := range agg {
			agg[i] += s.cfg.DP.noise(s.noise, scale)
		}
	}
	// Data term: τ·n·mean = τ(n/c)Σ (default) or τ·mean (literal). Scaling the
	// noisy mean is post-processing and keeps the DP guarantee.
	f := s.cfg.Tau
	if s.cfg.Aggregation == AggregateSum {
		f *= float64(s.n)
	}
	for i := range agg {
		agg[i] *= f
	}
	for r := 0; r < s.k; r++ {
		s.prior.AddGrad(agg[r*s.dim:(r+1)*s.dim], s.particles[r*s.dim:(r+1)*s.dim])
	}
	// The step's input must be finite and squarable (Adam's v adds its
	// squares): otherwise fail the round before any state changes.
	for i, v := range agg {
		if v*v <= math.MaxFloat64 {
			continue
		}
		what := "is not finite"
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			what = "has a square that overflows (Adam's second moment would be +Inf)"
		}
		return 0, fmt.Errorf("score of particle %d, coordinate %d = %.4g %s (aggregate of %d updates, rule %s); "+
			"particles and optimiser unchanged",
			i/s.dim, i%s.dim, v, what, used, s.cfg.Robust.rule())
	}
	if err := s.sv.Step(s.particles, agg, s.opt); err != nil {
		return 0, err
	}
	return meanLML, nil
}

// acceptUpdates decides which of the round's updates enter the aggregate
// (those with s.errs[slot] == nil afterwards) and returns their number.
// Without a quorum the first error ends the run.
func (s *Server) acceptUpdates() (int, error) {
	if s.cfg.Quorum == 0 {
		for _, err := range s.errs {
			if err != nil {
				return 0, err
			}
		}
		return s.c, nil
	}
	if f := s.cfg.MaxNormFactor; f > 0 {
		// Each update against the median of the others, all against the
		// same set (the order of the slots does not matter); with fewer
		// than 2 others there is no majority to judge by.
		s.sorted = s.sorted[:0]
		for slot := range s.grads {
			if s.errs[slot] == nil {
				s.sorted = append(s.sorted, s.norms[slot])
			}
		}
		if u := len(s.sorted); u >= 3 {
			slices.Sort(s.sorted)
			for slot := range s.grads {
				if s.errs[slot] != nil {
					continue
				}
				if med := medianWithout(s.sorted, s.norms[slot]); s.norms[slot] > f*med {
					s.errs[slot] = fmt.Errorf("client %d: update rejected: gradient norm %.4g above %g × the median "+
						"%.4g of the round's %d other updates", s.chosen[slot], s.norms[slot], f, med, u-1)
				}
			}
		}
	}
	used := 0
	for slot, err := range s.errs {
		if err == nil {
			used++
		} else if s.cfg.OnDrop != nil {
			s.cfg.OnDrop(s.round+1, s.chosen[slot], err)
		}
	}
	if used < s.cfg.Quorum {
		return 0, fmt.Errorf("only %d of the %d selected clients contributed (quorum %d)", used, s.c, s.cfg.Quorum)
	}
	return used, nil
}

// medianWithout is fedrun.MedianWithout.
func medianWithout(sorted []float64, x float64) float64 { return fedrun.MedianWithout(sorted, x) }

// clippedMean returns (1/used) Σ G_i over the accepted updates in
// s.scores, each G_i first clipped as the DP mechanism requires (no
// clipping without DP).
func (s *Server) clippedMean(used int) []float64 {
	agg := s.scores
	clear(agg)
	for slot := 0; slot < s.c; slot++ {
		if s.errs[slot] != nil {
			continue
		}
		g := s.grads[slot]
		if s.cfg.DP != nil {
			s.cfg.DP.clip(g, s.k, s.dim)
		}
		for i, v := range g {
			agg[i] += v
		}
	}
	invC := 1 / float64(used)
	for i := range agg {
		agg[i] *= invC
	}
	return agg
}

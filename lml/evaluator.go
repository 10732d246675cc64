package lml

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/pacpfl/pacpfl/linalg"
)

// Split says how an Evaluator shares the cores between the k particles of a
// client and the BLAS under each particle's Cholesky factorization.
type Split int

const (
	// SplitAuto runs particles concurrently, one core each, in rounds of
	// as many particles as there are cores; a final round with fewer
	// particles than cores (k = 1, say) gives each of them several BLAS
	// threads when m is at least the crossover. When the memory limit
	// (EvaluatorOptions.MemoryLimit) allows fewer particles at once than
	// cores, that many run at once and share the cores.
	SplitAuto Split = iota
	// SplitParticles runs min(k, cores) particles at a time, each on a
	// single-threaded BLAS: no synchronisation inside a factorization,
	// best while the matrices are small. The memory limit applies as for
	// SplitAuto.
	SplitParticles
	// SplitBLAS runs the particles one after another, each on a BLAS with
	// all the cores: one working set of m×m matrices instead of several,
	// best when they no longer fit in the caches.
	SplitBLAS
)

func (s Split) String() string {
	switch s {
	case SplitAuto:
		return "auto"
	case SplitParticles:
		return "particles"
	case SplitBLAS:
		return "blas"
	}
	return fmt.Sprintf("Split(%d)", int(s))
}

// ParseSplit parses "auto", "particles" or "blas".
func ParseSplit(s string) (Split, error) {
	for _, v := range []Split{SplitAuto, SplitParticles, SplitBLAS} {
		if v.String() == s {
			return v, nil
		}
	}
	return 0, fmt.Errorf("lml: unknown split %q (valid: auto, particles, blas)", s)
}

// DefaultCrossover is the number of data points from which SplitAuto gives
// a particle without a core-mate several BLAS threads. Below it one
// factorization does not run faster on two threads than on one (measured
// with pacpfl bench lml --k 1 --split particles,blas; docs/math.md).
const DefaultCrossover = 2048

// DefaultMemoryLimit is the default bound on the bytes the m²-sized
// buffers of the particles in flight hold together (see
// EvaluatorOptions.MemoryLimit): 4 GiB, five particles at m = 10,000.
const DefaultMemoryLimit = 4 << 30

// WorkspaceBytes is what one particle in flight holds in buffers that grow
// with m² when its factorization runs on blasThreads threads: the m×m
// matrix (8·m² bytes) and, from two threads on and m ≥ 256, the inverse's
// scratch for its concurrent halves (8·h² bytes, h = m/2 rounded up to a
// multiple of 16, about 2·m²); see Workspace. Fixed-size scratch (about
// 2.4 MB) and O(m) buffers are not counted.
func WorkspaceBytes(m, blasThreads int) int64 {
	sq := 8 * int64(m) * int64(m)
	if blasThreads > 1 && m >= 256 {
		h := int64((m/2 + 15) &^ 15)
		sq += 8 * h * h
	}
	return sq
}

// EvaluatorOptions configure an Evaluator. The zero value uses every core
// (GOMAXPROCS), SplitAuto, DefaultCrossover and DefaultMemoryLimit.
type EvaluatorOptions struct {
	Threads   int   // cores to use; ≤ 0 means GOMAXPROCS at construction
	Split     Split // how to share them
	Crossover int   // for SplitAuto; ≤ 0 means DefaultCrossover
	// MemoryLimit bounds the bytes that the m²-sized buffers of the
	// particles evaluated at once may hold together (WorkspaceBytes each);
	// ≤ 0 means DefaultMemoryLimit. When min(k, Threads) particles would
	// not fit, fewer run at once (at least one, whatever the limit), each
	// with a share of the cores for its BLAS (SplitAuto and
	// SplitParticles alike), and the idle workspaces drop their m×m
	// buffers.
	MemoryLimit int64
}

// Evaluator computes, for one client's data, the LMLs and gradients of k
// particles at once (Algorithm 2, line 2). It keeps one Workspace per core
// and a pool of worker goroutines, so after the first call with the largest
// m it allocates nothing. An Evaluator is not safe for concurrent use; the
// federated loop gives each concurrent client its own.
type Evaluator struct {
	*pool // separate, so worker goroutines never keep the Evaluator alive
}

type pool struct {
	model     Model
	threads   int
	split     Split
	crossover int
	memLimit  int64

	ws     []*Workspace
	blas   []*linalg.Native
	wake   []chan struct{}
	wg     sync.WaitGroup
	start  sync.Once
	stop   sync.Once
	closed bool

	// The call being served; read by the workers between wake and Done.
	nw          int // workers used by this call
	phis, x, y  []float64
	lmls, grads []float64
	scale       float64
	errs        []error
}

// NewEvaluator returns an evaluator for model.
func NewEvaluator(model Model, opt EvaluatorOptions) (*Evaluator, error) {
	if err := model.Validate(); err != nil {
		return nil, err
	}
	t := opt.Threads
	if t <= 0 {
		t = runtime.GOMAXPROCS(0)
	}
	c := opt.Crossover
	if c <= 0 {
		c = DefaultCrossover
	}
	switch opt.Split {
	case SplitAuto, SplitParticles, SplitBLAS:
	default:
		return nil, fmt.Errorf("lml: unknown split %d", int(opt.Split))
	}
	ml := opt.MemoryLimit
	if ml <= 0 {
		ml = DefaultMemoryLimit
	}
	p := &pool{model: model, threads: t, split: opt.Split, crossover: c, memLimit: ml}
	for i := 0; i < t; i++ {
		b := linalg.NewNative(1)
		ws, err := NewWorkspace(model, b)
		if err != nil {
			return nil, err
		}
		p.ws = append(p.ws, ws)
		p.blas = append(p.blas, b)
	}
	e := &Evaluator{pool: p}
	runtime.AddCleanup(e, func(p *pool) { p.close() }, p)
	return e, nil
}

// Close stops the worker goroutines now rather than when the Evaluator is
// garbage collected. Evaluate then returns an error.
func (e *Evaluator) Close() {
	e.closed = true
	e.close()
}

// Model returns the model.
func (e *Evaluator) Model() Model { return e.model }

// Threads returns the number of cores the evaluator uses.
func (e *Evaluator) Threads() int { return e.threads }

// SetJitterLadder sets the jitter ladder of every workspace (see
// Workspace.SetJitterLadder).
func (e *Evaluator) SetJitterLadder(eps []float64) {
	for _, ws := range e.ws {
		ws.SetJitterLadder(eps)
	}
}

// Evaluate computes, for each particle κ (row κ of the k×dφ matrix phis,
// k = len(lmls)), the LML (33) of the data (X m×D row-major, y of length m)
// into lmls[κ] and, if grads is not nil, its gradient into row κ of grads
// (k×dφ). An error names the first particle that failed.
func (e *Evaluator) Evaluate(lmls, grads, phis, X, y []float64) error {
	return e.run(lmls, grads, phis, X, y, 1)
}

// EvaluateTempered is Evaluate with the tempered objective of
// Workspace.TemperedLML (scale = m_i/b for a mini-batch, β/m for a client
// temperature β, or their product).
func (e *Evaluator) EvaluateTempered(lmls, grads, phis, X, y []float64, scale float64) error {
	if !(scale > 0) || math.IsInf(scale, 0) {
		return fmt.Errorf("lml: tempering scale = %v must be positive and finite", scale)
	}
	return e.run(lmls, grads, phis, X, y, scale)
}

func (p *pool) run(lmls, grads, phis, X, y []float64, scale float64) error {
	k, np := len(lmls), p.model.NumParams()
	if p.closed {
		return fmt.Errorf("lml: Evaluate on a closed Evaluator")
	}
	if k == 0 {
		return fmt.Errorf("lml: no particles (lmls is empty)")
	}
	if len(phis) != k*np {
		return fmt.Errorf("lml: particle matrix has %d values, want k×dφ = %d×%d = %d", len(phis), k, np, k*np)
	}
	if grads != nil && len(grads) != k*np {
		return fmt.Errorf("lml: gradient matrix has %d values, want k×dφ = %d×%d = %d", len(grads), k, np, k*np)
	}
	if err := p.model.CheckData(X, y); err != nil {
		return err
	}
	p.phis, p.x, p.y, p.lmls, p.grads, p.scale = phis, X, y, lmls, grads, scale
	defer func() { p.phis, p.x, p.y, p.lmls, p.grads = nil, nil, nil, nil, nil }()
	if cap(p.errs) < k {
		p.errs = make([]error, k)
	}
	p.errs = p.errs[:k]
	clear(p.errs)

	p.nw = p.inFlight(k, len(y))
	if p.nw < min(k, p.threads) {
		// Memory-bound: the idle workspaces let their m×m buffers go.
		for _, ws := range p.ws[p.nw:] {
			ws.release()
		}
	}
	if p.nw > 1 {
		p.start.Do(p.startWorkers)
		p.wg.Add(p.nw - 1)
		for i := 1; i < p.nw; i++ {
			p.wake[i] <- struct{}{}
		}
	}
	p.work(0)
	if p.nw > 1 {
		p.wg.Wait()
	}
	for κ, err := range p.errs {
		if err != nil {
			return fmt.Errorf("lml: particle %d: %w", κ, err)
		}
	}
	return nil
}

// inFlight returns how many of k particles on m points run at once: one for
// SplitBLAS, else min(k, threads), fewer if their buffers would exceed the
// memory limit (WorkspaceBytes each, at the BLAS threads each would then
// get), but at least one.
func (p *pool) inFlight(k, m int) int {
	if p.split == SplitBLAS {
		return 1
	}
	nw := min(k, p.threads)
	for nw > 1 && int64(nw)*WorkspaceBytes(m, p.threads/nw) > p.memLimit {
		nw--
	}
	return nw
}

// threadsFor returns the BLAS threads for particle κ of the current call.
func (p *pool) threadsFor(κ int) int {
	switch {
	case p.split == SplitBLAS:
		return p.threads
	case p.nw < min(len(p.lmls), p.threads):
		// The memory limit let fewer particles than cores run at once:
		// they share the cores.
		return max(1, p.threads/p.nw)
	case p.split == SplitParticles:
		return 1
	}
	// Auto: particles i, i+nw, … run on worker i, so rounds of nw run
	// together; the last, partial round of r particles shares the cores.
	k := len(p.lmls)
	full := (k / p.threads) * p.threads
	if κ < full || len(p.y) < p.crossover {
		return 1
	}
	return max(1, p.threads/(k-full))
}

// work evaluates particles i, i+nw, i+2nw, … on workspace i.
func (p *pool) work(i int) {
	np := p.model.NumParams()
	ws := p.ws[i]
	for κ := i; κ < len(p.lmls); κ += p.nw {
		p.blas[i].SetThreads(p.threadsFor(κ))
		var g []float64
		if p.grads != nil {
			g = p.grads[κ*np : κ*np+np]
		}
		v, err := ws.eval(p.phis[κ*np:κ*np+np], p.x, p.y, p.scale, g)
		p.lmls[κ] = v
		p.errs[κ] = err
	}
}

func (p *pool) startWorkers() {
	p.wake = make([]chan struct{}, p.threads)
	for i := 1; i < p.threads; i++ {
		ch := make(chan struct{})
		p.wake[i] = ch
		go func() {
			for range ch {
				p.work(i)
				p.wg.Done()
			}
		}()
	}
}

// close stops the worker goroutines, once; called by Close or when the
// Evaluator is garbage.
func (p *pool) close() {
	p.stop.Do(func() {
		p.start.Do(func() {}) // no workers may start after this
		for _, ch := range p.wake {
			if ch != nil {
				close(ch)
			}
		}
	})
}

package genfl

import (
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/linalg"
)

// Estimator selects how FEDBOUND estimates R̂_S(Q), the mean over the
// sample S of the expected 0–1 error of a weight vector W ∼ Q.
type Estimator int

const (
	// Pairs draws n independent pairs (W_i ∼ Q, z_i uniform on S) and
	// averages the 0–1 errors ℓ(W_i, z_i): n i.i.d. Bernoulli(R̂_S(Q))
	// variables. Since every W_i meets a single example, the network's
	// output for it can be sampled exactly layer by layer (the local
	// reparameterisation: given the layer's input h, the pre-activations
	// are independent N(μ_W h + μ_b, σ²_W h² + σ²_b)), so a block of pairs
	// is two GEMMs per layer (means and variances) and no weight sample is
	// ever formed. Each user evaluates the pairs whose example is its own.
	Pairs Estimator = iota + 1
	// Full is Alg. 2 as printed: every user k draws n weight samples
	// W_i^k ∼ Q and reports the mean of their 0–1 errors on all of S_k;
	// the server's err = Σ_k (m_k/m) err^k is the mean of n i.i.d.
	// [0, 1]-valued variables X_i = Σ_k (m_k/m) R̂_{S_k}(W_i^k) with mean
	// R̂_S(Q). Samples are stacked: the first layer is one GEMM of the
	// user's rows against the stacked weights of several samples.
	Full
)

// String is "pairs" or "full".
func (e Estimator) String() string {
	switch e {
	case Pairs:
		return "pairs"
	case Full:
		return "full"
	}
	return fmt.Sprintf("Estimator(%d)", int(e))
}

// ParseEstimator reads "pairs" or "full".
func ParseEstimator(s string) (Estimator, error) {
	switch s {
	case "pairs":
		return Pairs, nil
	case "full":
		return Full, nil
	}
	return 0, fmt.Errorf("genfl: unknown bound estimator %q (pairs or full)", s)
}

// MCConfig configures the Monte Carlo step of FEDBOUND.
type MCConfig struct {
	Estimator Estimator
	N         int // n: pairs (Pairs) or weight samples per user (Full)
	// Stack is the number of weight samples evaluated together by Full (0:
	// 4).
	Stack   int
	Workers int // 0: GOMAXPROCS
	Seed    uint64
	// Progress, if set, is called with the work done (Round) and the total
	// (Rounds: pairs or samples·users; Value NaN), from one goroutine at a
	// time.
	Progress func(fl.RoundEvent)
}

// pairBlock is the number of pairs evaluated together (the GEMMs' rows).
const pairBlock = 256

// MCResult is the outcome of FEDBOUND's sampling step.
type MCResult struct {
	Errors  int64   // 0–1 errors counted
	Evals   int64   // (weight sample, example) evaluations
	Err     float64 // the estimate of R̂_S(Q) (mean of the n variables)
	N       int     // n, the number of i.i.d. variables averaged
	Seconds float64
}

// moments holds Q's per-layer means and variances for the pair evaluator.
type moments struct {
	mu, s2 []float64 // like the parameter vector: μ and σ²
}

func newMoments(q *Posterior) moments {
	m := moments{mu: q.Mu, s2: make([]float64, len(q.Rho))}
	for j, r := range q.Rho {
		s, _ := softplus(r)
		m.s2[j] = s * s
	}
	return m
}

// pairEval evaluates blocks of pairs: per layer, mean = H μ_Wᵀ + μ_b,
// var = H² σ²_Wᵀ + σ²_b, then a = mean + √var·ε.
type pairEval struct {
	net      *net
	x, x2    []float64
	y        []int
	mean, vr []float64
}

// block returns the buffers of a block of rows examples of in features.
func (e *pairEval) block(rows, in int) ([]float64, []int) {
	if cap(e.x) < rows*in {
		e.x, e.y = make([]float64, rows*in), make([]int, rows)
	}
	return e.x[:rows*in], e.y[:rows]
}

func newPairEval(a Arch) *pairEval {
	return &pairEval{net: newNet(a, linalg.NewNative(1))}
}

// errors samples the network's outputs for the rows x (one independent
// weight draw per row) and counts the 0–1 errors against y.
func (e *pairEval) errors(m moments, x []float64, y []int, eps func() float64) int {
	return zeroOneErrors(e.sample(m, x, len(y), eps), y, e.net.arch.Classes)
}

// sample returns the network's sampled logits (rows × classes) for the rows
// x, one independent weight draw per row.
func (e *pairEval) sample(m moments, x []float64, rows int, eps func() float64) []float64 {
	n := e.net
	n.size(rows)
	grow := func(b []float64, k int) []float64 {
		if cap(b) < k {
			return make([]float64, k)
		}
		return b[:k]
	}
	mw := n.maxWidth()
	e.mean = grow(e.mean, rows*mw)
	e.vr = grow(e.vr, rows*mw)
	e.x2 = grow(e.x2, rows*mw)
	in := x
	last := len(n.ins) - 1
	for l := range n.ins {
		ni, no := n.ins[l], n.outs[l]
		off := n.offs[l]
		in2 := e.x2[:rows*ni]
		for i, v := range in {
			in2[i] = v * v
		}
		mean, vr := e.mean[:rows*no], e.vr[:rows*no]
		for r := 0; r < rows; r++ {
			copy(mean[r*no:(r+1)*no], m.mu[off+no*ni:off+no*ni+no])
			copy(vr[r*no:(r+1)*no], m.s2[off+no*ni:off+no*ni+no])
		}
		n.bl.Dgemm(blas.NoTrans, blas.Trans, rows, no, ni, 1, in, ni, m.mu[off:off+no*ni], ni, 1, mean, no)
		n.bl.Dgemm(blas.NoTrans, blas.Trans, rows, no, ni, 1, in2, ni, m.s2[off:off+no*ni], ni, 1, vr, no)
		out := n.acts[l]
		for i := range out {
			v := mean[i] + math.Sqrt(vr[i])*eps()
			if l < last && v < 0 {
				v = 0
			}
			out[i] = v
		}
		in = out
	}
	return n.acts[last]
}

// index maps a position in the concatenation of the users' samples to
// (user, row).
type index struct{ cum []int }

func newIndex(cs []Client) index {
	cum := make([]int, len(cs)+1)
	for k := range cs {
		cum[k+1] = cum[k] + cs[k].M()
	}
	return index{cum}
}

func (ix index) locate(j int) (user, row int) {
	k := sort.SearchInts(ix.cum, j+1) - 1
	return k, j - ix.cum[k]
}

// parallelBlocks runs fn over blocks [0, nb) on w workers (each with its
// own state from mk), dynamically scheduled; fn's results must not depend
// on which worker runs it.
func parallelBlocks[S any](nb, w int, mk func() S, fn func(s S, b int) error) error {
	w = max(min(w, nb), 1)
	var next atomic.Int64
	errs := make([]error, w)
	var wg sync.WaitGroup
	for i := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := mk()
			for {
				b := int(next.Add(1) - 1)
				if b >= nb {
					return
				}
				if err := fn(s, b); err != nil {
					errs[i] = err
					next.Store(int64(nb))
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (c *MCConfig) workers() int {
	if c.Workers > 0 {
		return c.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// progressCounter serialises progress calls.
type progressCounter struct {
	mu    sync.Mutex
	done  int
	total int
	fn    func(fl.RoundEvent)
}

func (p *progressCounter) add(k int) {
	if p.fn == nil {
		return
	}
	p.mu.Lock()
	p.done += k
	p.fn(fl.RoundEvent{Round: p.done, Rounds: p.total, Value: math.NaN()})
	p.mu.Unlock()
}

// SampleError is FEDBOUND's sampling step (Alg. 2 lines 5-8, userMCSampling):
// the Monte Carlo estimate of R̂_S(Q) over the users' samples, as the mean
// of cfg.N independent [0, 1]-valued unbiased estimates (see Estimator).
// The result depends only on Q, the data and cfg.Seed.
func SampleError(q *Posterior, a Arch, cs []Client, cfg MCConfig) (MCResult, error) {
	if err := a.Validate(); err != nil {
		return MCResult{}, err
	}
	if err := checkClients(cs, a); err != nil {
		return MCResult{}, err
	}
	if len(q.Mu) != a.NumParams() || len(q.Rho) != a.NumParams() {
		return MCResult{},
			fmt.Errorf("genfl: posterior of %d/%d parameters for a network of %d", len(q.Mu), len(q.Rho), a.NumParams())
	}
	if cfg.N < 1 {
		return MCResult{}, fmt.Errorf("genfl: FEDBOUND needs n ≥ 1 Monte Carlo samples, got %d", cfg.N)
	}
	switch cfg.Estimator {
	case Pairs:
		return samplePairs(q, a, cs, cfg)
	case Full:
		return sampleFull(q, a, cs, cfg)
	}
	return MCResult{}, fmt.Errorf("genfl: unknown estimator %v", cfg.Estimator)
}

func samplePairs(q *Posterior, a Arch, cs []Client, cfg MCConfig) (MCResult, error) {
	start := nowSeconds()
	m := newMoments(q)
	ix := newIndex(cs)
	total := ix.cum[len(cs)]
	nb := (cfg.N + pairBlock - 1) / pairBlock
	counts := make([]int, nb)
	pc := &progressCounter{total: cfg.N, fn: cfg.Progress}
	err := parallelBlocks(nb, cfg.workers(), func() *pairEval { return newPairEval(a) },
		func(e *pairEval, b int) error {
			rows := min(pairBlock, cfg.N-b*pairBlock)
			rng := stream(cfg.Seed, tagPairs, uint64(b))
			x, y := e.block(rows, a.In)
			for r := range rows {
				k, i := ix.locate(rng.IntN(total))
				copy(x[r*a.In:(r+1)*a.In], cs[k].X[i*a.In:(i+1)*a.In])
				y[r] = cs[k].Y[i]
			}
			counts[b] = e.errors(m, x, y, rng.NormFloat64)
			pc.add(rows)
			return nil
		})
	if err != nil {
		return MCResult{}, err
	}
	var errs int64
	for _, c := range counts {
		errs += int64(c)
	}
	return MCResult{Errors: errs, Evals: int64(cfg.N), Err: float64(errs) / float64(cfg.N), N: cfg.N,
		Seconds: nowSeconds() - start}, nil
}

// GibbsError estimates the expected 0–1 error of the stochastic classifier
// Q (the Gibbs classifier: a fresh W ∼ Q for every prediction) on the
// examples of cs, pooled: every example is evaluated with r independent
// weight draws (exactly, by the pair evaluator), so the estimate is
// unbiased for the sample's Gibbs error. It returns the error rate and, per
// user, its own rate.
func GibbsError(q *Posterior, a Arch, cs []Client, r int, workers int, seed uint64) (float64, []float64, error) {
	if r < 1 {
		return 0, nil, fmt.Errorf("genfl: %d weight draws per test example, want ≥ 1", r)
	}
	if err := checkClients(cs, a); err != nil {
		return 0, nil, err
	}
	counts := gibbsCounts(q, a, cs, 0, r, workers, seed)
	per := make([]float64, len(cs))
	var all int64
	for k, c := range counts {
		per[k] = float64(c) / float64(cs[k].M()*r)
		all += c
	}
	return float64(all) / float64(TotalM(cs)*r), per, nil
}

// gibbsCounts is GibbsError's count of 0–1 errors per user of cs, user k's
// blocks drawing from the streams (seed, "test", first+k, block start): a
// client counting alone (first = its index) draws what the pooled count
// draws for it.
func gibbsCounts(q *Posterior, a Arch, cs []Client, first, r, workers int, seed uint64) []int64 {
	if workers < 1 {
		workers = runtime.GOMAXPROCS(0)
	}
	m := newMoments(q)
	// Blocks: user k's examples, repeated r times, in blocks of pairBlock.
	type blk struct{ user, lo, hi int }
	var blocks []blk
	for k := range cs {
		n := cs[k].M() * r
		for lo := 0; lo < n; lo += pairBlock {
			blocks = append(blocks, blk{k, lo, min(lo+pairBlock, n)})
		}
	}
	counts := make([]int, len(blocks))
	// The block function never fails.
	_ = parallelBlocks(len(blocks), workers, func() *pairEval { return newPairEval(a) },
		func(e *pairEval, b int) error {
			bk := blocks[b]
			c := &cs[bk.user]
			rows := bk.hi - bk.lo
			x, y := e.block(rows, a.In)
			for p := bk.lo; p < bk.hi; p++ {
				i := p % c.M()
				copy(x[(p-bk.lo)*a.In:(p-bk.lo+1)*a.In], c.X[i*a.In:(i+1)*a.In])
				y[p-bk.lo] = c.Y[i]
			}
			rng := stream(seed, tagTest, uint64(first+bk.user), uint64(bk.lo))
			counts[b] = e.errors(m, x, y, rng.NormFloat64)
			return nil
		})
	per := make([]int64, len(cs))
	for b, bk := range blocks {
		per[bk.user] += int64(counts[b])
	}
	return per
}

// MeanError is the 0–1 error of the deterministic network at the posterior
// mean μ on the pooled examples of cs (for reference: not what the bound
// bounds).
func MeanError(mu []float64, a Arch, cs []Client) (float64, error) {
	if err := checkClients(cs, a); err != nil {
		return 0, err
	}
	errs := 0
	for k := range cs {
		errs += meanErrors(mu, a, &cs[k])
	}
	return float64(errs) / float64(TotalM(cs)), nil
}

// meanErrors is the number of 0–1 errors of the network with weights mu on
// the rows of c.
func meanErrors(mu []float64, a Arch, c *Client) int {
	n := newNet(a, linalg.NewNative(0))
	errs := 0
	for lo := 0; lo < c.M(); lo += 1024 {
		hi := min(lo+1024, c.M())
		logits := n.forward(mu, c.X[lo*a.In:hi*a.In], hi-lo, 0, nil)
		errs += zeroOneErrors(logits, c.Y[lo:hi], a.Classes)
	}
	return errs
}

// fullEval evaluates S stacked weight samples on a user's rows.
type fullEval struct {
	a         Arch
	ins, outs []int
	offs      []int
	S         int
	bl        blas.Float64
	w         [][]float64 // per layer: S·out·in weights then S·out biases
	acts      [][]float64 // per layer: rows × S·out
	sigma     []float64
}

func newFullEval(a Arch, S int, sigma []float64) *fullEval {
	f := &fullEval{a: a, S: S, bl: linalg.NewNative(1), sigma: sigma}
	f.ins, f.outs = a.layers()
	off := 0
	for l := range f.ins {
		f.offs = append(f.offs, off)
		off += f.outs[l]*f.ins[l] + f.outs[l]
		f.w = append(f.w, make([]float64, S*(f.outs[l]*f.ins[l]+f.outs[l])))
		f.acts = append(f.acts, nil)
	}
	return f
}

// draw writes S weight samples of Q into the stacked layers.
func (f *fullEval) draw(mu []float64, S int, norm func() float64) {
	for l := range f.ins {
		ni, no := f.ins[l], f.outs[l]
		nw := no * ni
		W, B := f.w[l][:S*nw], f.w[l][f.S*nw:f.S*nw+S*no]
		base := f.offs[l]
		for s := 0; s < S; s++ {
			ws := W[s*nw : (s+1)*nw]
			for j := range ws {
				ws[j] = mu[base+j] + f.sigma[base+j]*norm()
			}
			bs := B[s*no : (s+1)*no]
			for j := range bs {
				bs[j] = mu[base+nw+j] + f.sigma[base+nw+j]*norm()
			}
		}
	}
}

// errors runs the S' ≤ S drawn samples on the rows and returns the total
// number of 0–1 errors over samples and rows.
func (f *fullEval) errors(x []float64, y []int, S int) int {
	rows := len(y)
	in := x
	ld := f.a.In
	last := len(f.ins) - 1
	for l := range f.ins {
		ni, no := f.ins[l], f.outs[l]
		nw := no * ni
		W, B := f.w[l], f.w[l][f.S*nw:]
		if cap(f.acts[l]) < rows*S*no {
			f.acts[l] = make([]float64, rows*f.S*no)
		}
		out := f.acts[l][:rows*S*no]
		for r := 0; r < rows; r++ {
			copy(out[r*S*no:(r+1)*S*no], B[:S*no])
		}
		if l == 0 {
			// Shared input: one GEMM against the S·out stacked rows.
			f.bl.Dgemm(blas.NoTrans, blas.Trans, rows, S*no, ni, 1, in, ld, W[:S*nw], ni, 1, out, S*no)
		} else {
			for s := 0; s < S; s++ {
				f.bl.Dgemm(blas.NoTrans, blas.Trans, rows, no, ni, 1, in[s*ni:], ld, W[s*nw:(s+1)*nw], ni, 1,
					out[s*no:], S*no)
			}
		}
		if l < last {
			for i, v := range out {
				if v < 0 {
					out[i] = 0
				}
			}
		}
		in, ld = out, S*no
	}
	// Logits of sample s for row r at in[r·S·C + s·C :].
	C := f.a.Classes
	errs := 0
	for r, lab := range y {
		for s := 0; s < S; s++ {
			z := in[r*S*C+s*C : r*S*C+(s+1)*C]
			mx, arg := z[0], 0
			for c, v := range z[1:] {
				if v > mx {
					mx, arg = v, c+1
				}
			}
			if arg != lab || math.IsNaN(mx) {
				errs++
			}
		}
	}
	return errs
}

func sampleFull(q *Posterior, a Arch, cs []Client, cfg MCConfig) (MCResult, error) {
	start := nowSeconds()
	errs, err := fullErrors(q, a, cs, 0, cfg)
	if err != nil {
		return MCResult{}, err
	}
	m := TotalM(cs)
	evals := int64(cfg.N) * int64(m)
	// err = Σ_k (m_k/m)·errors_k/(n·m_k) = Σ errors/(n·m).
	return MCResult{Errors: errs, Evals: evals, Err: float64(errs) / float64(evals), N: cfg.N, Seconds: nowSeconds() -
		start}, nil
}

// fullErrors is the Full estimator's count of 0–1 errors over the users of
// cs, user k's blocks of samples drawn from the streams (cfg.Seed, "full",
// first+k, block): a client counting alone (first = its index) draws what
// the pooled count draws for it.
func fullErrors(q *Posterior, a Arch, cs []Client, first int, cfg MCConfig) (int64, error) {
	S := cfg.Stack
	if S == 0 {
		S = 4
	}
	if S < 1 {
		return 0, fmt.Errorf("genfl: %d stacked samples", S)
	}
	sigma := make([]float64, len(q.Rho))
	for j, r := range q.Rho {
		sigma[j], _ = softplus(r)
	}
	// Work units: (user, block of S samples).
	perUser := (cfg.N + S - 1) / S
	counts := make([]int64, len(cs)*perUser)
	pc := &progressCounter{total: cfg.N * len(cs), fn: cfg.Progress}
	err := parallelBlocks(len(counts), cfg.workers(), func() *fullEval { return newFullEval(a, S, sigma) },
		func(f *fullEval, b int) error {
			k, blk := b/perUser, b%perUser
			s := min(S, cfg.N-blk*S)
			rng := stream(cfg.Seed, tagFull, uint64(first+k), uint64(blk))
			f.draw(q.Mu, s, rng.NormFloat64)
			c := &cs[k]
			var e int64
			for lo := 0; lo < c.M(); lo += 1024 {
				hi := min(lo+1024, c.M())
				e += int64(f.errors(c.X[lo*a.In:hi*a.In], c.Y[lo:hi], s))
			}
			counts[b] = e
			pc.add(s)
			return nil
		})
	var errs int64
	for _, c := range counts {
		errs += c
	}
	return errs, err
}

// pairErrors is the Pairs estimator's count of 0–1 errors over the pairs
// whose example is one of own's rows, own being the rows [lo, lo+own.M())
// of the concatenated sample of total examples. Each block replays the
// pooled draws (the examples, then the noise of every row) and evaluates
// the whole block with the other users' rows zeroed, so the GEMMs have the
// pooled shapes and own's rows get the pooled bits: the counts of all
// users sum to samplePairs's. It also returns the number of own pairs.
func pairErrors(q *Posterior, a Arch, own *Client, lo, total int, cfg MCConfig) (errs, pairs int64) {
	m := newMoments(q)
	nb := (cfg.N + pairBlock - 1) / pairBlock
	counts := make([]int, nb)
	mine := make([]int, nb)
	C := a.Classes
	// The block function never fails.
	_ = parallelBlocks(nb, cfg.workers(), func() *pairEval { return newPairEval(a) },
		func(e *pairEval, b int) error {
			rows := min(pairBlock, cfg.N-b*pairBlock)
			rng := stream(cfg.Seed, tagPairs, uint64(b))
			x, y := e.block(rows, a.In)
			n := 0
			for r := range rows {
				i := rng.IntN(total) - lo
				if i >= 0 && i < own.M() {
					copy(x[r*a.In:(r+1)*a.In], own.X[i*a.In:(i+1)*a.In])
					y[r] = own.Y[i]
					n++
				} else {
					clear(x[r*a.In : (r+1)*a.In])
					y[r] = -1
				}
			}
			if n == 0 {
				return nil
			}
			logits := e.sample(m, x, rows, rng.NormFloat64)
			for r, lab := range y {
				if lab >= 0 {
					counts[b] += zeroOneErrors(logits[r*C:(r+1)*C], y[r:r+1], C)
				}
			}
			mine[b] = n
			return nil
		})
	for b := range counts {
		errs += int64(counts[b])
		pairs += int64(mine[b])
	}
	return errs, pairs
}

// Bound is FEDBOUND's result: the sampling step and the double inversion.
type Bound struct {
	fl.FedBoundResult
	MC MCResult `json:"-"`
}

// FedBound is FEDBOUND (Alg. 2): the sampling step over the users' samples
// (m = Σ_k m_k examples the prior P did not depend on), then
// R_D(Q) ≤ kl⁻¹(kl⁻¹(err, ln(2/δ′)/n), (KL(Q‖P) + ln(2√m/δ))/m) with
// probability ≥ 1 − δ − δ′.
func FedBound(q *Posterior, p *Prior, a Arch, cs []Client, delta, deltaPrime float64, cfg MCConfig) (*Bound, error) {
	if err := p.Validate(a); err != nil {
		return nil, err
	}
	kl, err := KL(q, p)
	if err != nil {
		return nil, err
	}
	mc, err := SampleError(q, a, cs, cfg)
	if err != nil {
		return nil, err
	}
	r, err := fl.FedBound(mc.Err, mc.N, deltaPrime, kl, TotalM(cs), delta)
	if err != nil {
		return nil, err
	}
	return &Bound{FedBoundResult: r, MC: mc}, nil
}

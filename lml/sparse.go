package lml

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"

	"github.com/pacpfl/pacpfl/asm"
	"github.com/pacpfl/pacpfl/cholesky"
	"github.com/pacpfl/pacpfl/internal/hugepage"
	"github.com/pacpfl/pacpfl/linalg"
)

// DefaultSparseChunk is the default number of rows a worker of a
// SparseWorkspace streams at once. At m = 100,000, M = 512 on two threads
// (AMD EPYC Zen 3, other jobs running; the chunks alternated in one
// process) it took 5.09 CPU-s per bound + gradient against 5.56 for 256
// rows (the right-hand operands are repacked per chunk) and 5.27 for 2048
// (two workers' 2048×513 blocks no longer stay in the caches).
const DefaultSparseChunk = 512

// sparseTile is the number of rows of one tile, the unit of every sum over
// rows, in the BLAS (the rank-n updates, the networks' weight gradients) or
// not (a chunk is a whole number of tiles; products whose rows are
// independent run on whole chunks). Fixing it is what makes the result
// independent of the chunk size. A variable so that tests can exercise many
// tiles, blocks and chunks with a few hundred rows.
var sparseTile = 256

// sparseBlocks is the number of row blocks the data are cut into (fewer if
// there are fewer tiles): each block is summed on its own, tile after tile,
// by whichever worker takes it, and the blocks are added in index order, so
// the result does not depend on the number of threads.
const sparseBlocks = 16

// SparseOptions configure a SparseWorkspace or a SparsePredictor. The zero
// value streams DefaultSparseChunk rows at a time on GOMAXPROCS threads.
type SparseOptions struct {
	// Chunk is the number of rows a worker holds at once (its kernel block
	// is Chunk×M); ≤ 0 means DefaultSparseChunk. It is rounded up to a
	// multiple of 256, the tile in which the rows are summed, and does not
	// change the result by a bit.
	Chunk int
	// Threads is the number of goroutines; ≤ 0 means GOMAXPROCS at
	// construction. It does not change the result by a bit either.
	Threads int
}

// SparseWorkspace evaluates, for one particle φ, the collapsed variational
// lower bound of Titsias (2009) on the log marginal likelihood of the GP
// prior P_φ with inducing inputs Z, and its exact gradient with respect to
// φ (docs/math.md, "Sparse GP (Titsias bound), streamed"):
//
//	F(φ) = ln N(y | m_φ(X), Q + σ²I) − tr(K − Q)/(2σ²),  Q = K_fu K_uu⁻¹ K_uf.
//
// The data are streamed in chunks: memory is O(M² + threads·Chunk·(M +
// network width)) besides X and y, never O(m·M). The rows are processed in
// parallel with a fixed summation order, so the value and the gradient are
// the same to the bit for any Chunk, Threads and GOMAXPROCS.
//
// A SparseWorkspace sizes its buffers on first use and reuses them, so
// repeated evaluations with the same (or smaller) m and M do not allocate.
// It is not safe for concurrent use. Its worker goroutines stop on Close or
// when it is garbage collected.
type SparseWorkspace struct {
	*sparsePool // separate, so the workers never keep the workspace alive
}

// sparsePool holds everything; see SparseWorkspace.
type sparsePool struct {
	model      Model
	mean, kern mlp
	np, df     int
	threads    int
	chunk      int // rows per chunk, a multiple of tile
	tile       int
	mm         *linalg.Native // the M×M work, on threads goroutines
	facK, facB cholesky.Factor
	jitter     float64
	ladder     []float64 // K_uu's jitter ladder, increasing
	l          []float64 // L = chol(K_uu + jitter·I)
	ldl        int
	linvT      []float64 // M×M: L⁻ᵀ (upper triangular), read by the workers
	// L⁻ᵀ and [2·∂F/∂S | α], packed once per evaluation for the workers'
	// products with every chunk (read-only while they run).
	pbWhiten, pbGrad linalg.PackedB

	// The call being served; read by the workers between wake and Done.
	phi, x, y     []float64
	m, M          int
	nTiles, nBlks int
	noiseVar      float64 // σ_e² = σ²/scale
	pass          int
	items         int
	next          atomic.Int64

	// M-sized state, sized for sizedM inducing inputs.
	sizedM  int
	zActs   [][]float64 // kernel-network activations at Z, M×width
	fz1     []float64   // M×(DF+1): [f(Z) | 1]
	gT      []float64   // (DF+1)×M: [f(Z) | 1]ᵀ
	kuu     []float64   // M×M: K_uu (no jitter)
	aa      []float64   // M×M: AAᵀ = L⁻¹SL⁻ᵀ, S = K_uf K_fu, A = L⁻¹K_uf
	bm      []float64   // M×M: B = I + AAᵀ/σ_e²
	binv    []float64   // M×M: B⁻¹
	gsa     []float64   // M×(M+1): [2·∂F/∂S | α]
	gk      []float64   // M×M: ∂F/∂K_uu, then ∂F/∂K_uu ∘ K_uu
	t, c    []float64   // M: t = L⁻¹b = A r (b = K_uf r), c = L_B⁻¹t/σ_e²
	alpha   []float64   // M: α = L⁻ᵀL_B⁻ᵀc/σ_e²
	tmpM    []float64   // M
	tmp2    []float64   // M
	gzacc   []float64   // (DF+1)×M: Σ_rows [F | 1]ᵀW
	zout    []float64   // M×(DF+1)
	gz      []float64   // M×DF: ∂F/∂f(Z)
	zg1     []float64   // M×max width
	zg2     []float64   // M×max width
	gphi    []float64   // dφ
	rr      float64     // rᵀr
	blocks  []sparseBlock
	workers []*sparseWorker

	// Prediction (SparsePredictor): the particle and test inputs served.
	pfit  *sparseFit
	xs    []float64
	ns    int
	mix   *Mixture
	kappa int

	wake   []chan struct{}
	wg     sync.WaitGroup
	start  sync.Once
	stop   sync.Once
	closed bool
}

// sparseBlock is the running sums of one row block.
type sparseBlock struct {
	aa   []float64 // (M+1)×(M+1), lower triangle: Σ [A_c; r_cᵀ][A_c; r_cᵀ]ᵀ
	gphi []float64 // dφ
	gz   []float64 // (DF+1)×M: Σ_rows [F | 1]ᵀW
}

// sparseWorker is one goroutine's chunk buffers and single-threaded BLAS.
type sparseWorker struct {
	bl                 *linalg.Native
	rows               int // chunk rows the buffers hold
	cols               int // M they were sized for
	meanActs, kernActs [][]float64
	k                  []float64 // rows×(M+1): [K_cu | r_c]
	h                  []float64 // rows×(M+1): [A_cᵀ | r_c], then [2K·∂F/∂S | Kα]
	r, dmu             []float64 // rows
	gf                 []float64 // rows×DF
	g1, g2             []float64 // tile×max width
}

const (
	passStats = iota
	passGrad
	passPredict
)

// NewSparseWorkspace returns a workspace for model.
func NewSparseWorkspace(model Model, opt SparseOptions) (*SparseWorkspace, error) {
	p, err := newSparsePool(model, opt)
	if err != nil {
		return nil, err
	}
	ws := &SparseWorkspace{sparsePool: p}
	runtime.AddCleanup(ws, func(p *sparsePool) { p.close() }, p)
	return ws, nil
}

func newSparsePool(model Model, opt SparseOptions) (*sparsePool, error) {
	if err := model.Validate(); err != nil {
		return nil, err
	}
	t := opt.Threads
	if t <= 0 {
		t = runtime.GOMAXPROCS(0)
	}
	tile := sparseTile
	c := opt.Chunk
	if c <= 0 {
		c = DefaultSparseChunk
	}
	c = (c + tile - 1) / tile * tile
	p := &sparsePool{model: model, np: model.NumParams(), df: model.DF, threads: t, chunk: c, tile: tile}
	p.mean = newMLP(model.D, model.MeanHidden, 1, 0)
	p.kern = newMLP(model.D, model.KernelHidden, model.DF, p.mean.end)
	p.mm = linalg.NewNative(t)
	p.facK.SetBLAS(p.mm)
	p.ladder = DefaultJitterLadder
	p.facB.SetBLAS(p.mm)
	p.facB.SetJitterLadder([]float64{}) // B ⪰ I: no jitter
	for i := 0; i < t; i++ {
		p.workers = append(p.workers, &sparseWorker{bl: linalg.NewNative(1)})
	}
	p.blocks = make([]sparseBlock, sparseBlocks)
	return p, nil
}

// Close stops the worker goroutines now rather than when the workspace is
// garbage collected. Bound then returns an error.
func (ws *SparseWorkspace) Close() {
	ws.closed = true
	ws.close()
}

// Model returns the model the workspace evaluates.
func (ws *SparseWorkspace) Model() Model { return ws.model }

// Threads returns the number of goroutines the workspace uses.
func (ws *SparseWorkspace) Threads() int { return ws.threads }

// Chunk returns the number of rows a worker streams at once.
func (ws *SparseWorkspace) Chunk() int { return ws.chunk }

// SetJitterLadder replaces the jitter ladder tried on K_uu (multiples of
// mean(diag K_uu), climbed in increasing order; see factorKuu); nil
// restores DefaultJitterLadder, an empty, non-nil ladder disables jitter.
func (ws *SparseWorkspace) SetJitterLadder(eps []float64) {
	if eps == nil {
		eps = DefaultJitterLadder
	}
	ws.ladder = ws.ladder[:0:0]
	for _, e := range eps {
		if e > 0 && !math.IsInf(e, 1) {
			ws.ladder = append(ws.ladder, e)
		}
	}
	slices.Sort(ws.ladder)
}

// Jitter returns the diagonal jitter added to K_uu in the last evaluation
// (0 if none). The value and gradient are then those of the bound with
// K_uu + jitter·I, the jitter held constant; that is still a lower bound on
// the log marginal likelihood.
func (ws *SparseWorkspace) Jitter() float64 { return ws.jitter }

// Bound returns the Titsias lower bound F(φ) on ln N(y | m_φ(X), K + σ²I)
// for the m×D row-major inputs X, the m targets y and the M×D row-major
// inducing inputs Z (M ≥ 1; M > m is allowed, e.g. for a mini-batch). If
// grad is not nil it receives ∂F/∂φ (overwritten, length NumParams), with
// Z held fixed.
func (ws *SparseWorkspace) Bound(phi, X, y, Z, grad []float64) (float64, error) {
	return ws.eval(phi, X, y, Z, 1, grad)
}

// TemperedBound is the bound on ln Z^C_β of Workspace.TemperedLML: the
// likelihood raised to the power scale, i.e. the bound with noise variance
// σ²/scale, plus m·[½ ln(2πσ²/scale) − (scale/2) ln(2πσ²)]. scale = m_i/b
// is the mini-batch objective of Algorithm 2, β/m a client temperature;
// scale = 1 is Bound. grad as in Bound.
func (ws *SparseWorkspace) TemperedBound(phi, X, y, Z []float64, scale float64, grad []float64) (float64, error) {
	if !(scale > 0) || math.IsInf(scale, 0) {
		return math.NaN(), fmt.Errorf("lml: tempering scale = %v must be positive and finite", scale)
	}
	return ws.eval(phi, X, y, Z, scale, grad)
}

// CheckInducing validates inducing inputs Z for model: a positive whole
// number of rows of D values, all finite. It returns M.
func (m Model) CheckInducing(Z []float64) (int, error) {
	if len(Z) == 0 || len(Z)%m.D != 0 {
		return 0, fmt.Errorf("lml: inducing inputs Z have %d values, not a positive multiple of D = %d", len(Z), m.D)
	}
	for i, v := range Z {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("lml: inducing input Z[%d][%d] = %v is not finite", i/m.D, i%m.D, v)
		}
	}
	return len(Z) / m.D, nil
}

// ensureM sizes the M-side buffers.
func (p *sparsePool) ensureM(M int) {
	if M <= p.sizedM {
		return
	}
	p.sizedM = M
	df := p.df
	p.zActs = make([][]float64, p.kern.layers())
	for l, w := range p.kern.widths {
		p.zActs[l] = make([]float64, M*w)
	}
	p.fz1 = make([]float64, M*(df+1))
	p.gT = make([]float64, (df+1)*M)
	p.kuu = hugepage.Floats(M * M)
	p.linvT = hugepage.Floats(M * M)
	p.aa = hugepage.Floats(M * M)
	p.bm = hugepage.Floats(M * M)
	p.t = make([]float64, M)
	p.c = make([]float64, M)
	p.alpha = make([]float64, M)
	p.tmpM = make([]float64, M)
	p.tmp2 = make([]float64, M)
	p.gz = make([]float64, M*df)
	mw := p.kern.maxWidth()
	p.zg1 = make([]float64, M*mw)
	p.zg2 = make([]float64, M*mw)
	p.gphi = make([]float64, p.np)
	// The gradient-only buffers and the blocks' sums are sized on demand.
	p.binv, p.gsa, p.gk, p.gzacc, p.zout = nil, nil, nil, nil, nil
	for i := range p.blocks {
		p.blocks[i] = sparseBlock{}
	}
	for _, w := range p.workers {
		w.cols = 0
	}
}

// ensureGrad sizes the buffers only the gradient needs.
func (p *sparsePool) ensureGrad(M int) {
	if len(p.gsa) >= M*(M+1) {
		return
	}
	df := p.df
	p.binv = hugepage.Floats(M * M)
	p.gsa = hugepage.Floats(M * (M + 1))
	p.gk = hugepage.Floats(M * M)
	p.gzacc = make([]float64, M*(df+1))
	p.zout = make([]float64, M*(df+1))
}

// ensureBlocks sizes the sums of the first n blocks.
func (p *sparsePool) ensureBlocks(n, M int, grad bool) {
	for i := 0; i < n; i++ {
		b := &p.blocks[i]
		if len(b.aa) < (M+1)*(M+1) {
			b.aa = hugepage.Floats((M + 1) * (M + 1))
		}
		if grad && len(b.gz) < M*(p.df+1) {
			b.gphi = make([]float64, p.np)
			b.gz = make([]float64, M*(p.df+1))
		}
	}
}

// ensureWorker sizes w's buffers for chunks of rows rows against M columns.
func (p *sparsePool) ensureWorker(w *sparseWorker, rows, M int) {
	if rows <= w.rows && M <= w.cols {
		return
	}
	rows, M = max(rows, w.rows), max(M, w.cols)
	w.rows, w.cols = rows, M
	acts := func(n *mlp) [][]float64 {
		a := make([][]float64, n.layers())
		for l, wd := range n.widths {
			a[l] = make([]float64, rows*wd)
		}
		return a
	}
	w.meanActs = acts(&p.mean)
	w.kernActs = acts(&p.kern)
	df := p.df
	w.k = hugepage.Floats(rows * (M + 1))
	w.h = hugepage.Floats(rows * (M + 1))
	w.r = make([]float64, rows)
	w.dmu = make([]float64, rows)
	w.gf = make([]float64, rows*df)
	t := min(rows, p.tile)
	mw := max(p.mean.maxWidth(), p.kern.maxWidth())
	w.g1 = make([]float64, t*mw)
	w.g2 = make([]float64, t*mw)
}

// zForward runs the kernel network on the M inducing inputs, tile by tile,
// and fills fz1 = [f(Z) | 1]. It returns f(Z) (M×DF).
func (p *sparsePool) zForward(bl *linalg.Native, phi, Z []float64, M int) []float64 {
	d, df := p.model.D, p.df
	for t0 := 0; t0 < M; t0 += p.tile {
		nt := min(p.tile, M-t0)
		p.kern.forwardRows(bl, phi, Z[t0*d:(t0+nt)*d], nt, t0, p.zActs)
	}
	fz := p.zActs[len(p.zActs)-1][:M*df]
	for j := 0; j < M; j++ {
		copy(p.fz1[j*(df+1):j*(df+1)+df], fz[j*df:j*df+df])
		p.fz1[j*(df+1)+df] = 1
		for c := 0; c < df; c++ {
			p.gT[c*M+j] = fz[j*df+c]
		}
		p.gT[df*M+j] = 1
	}
	return fz
}

// prepare validates a call and sets the inducing side up: f(Z), K_uu and
// its factor. It returns m, M and σ.
func (p *sparsePool) prepare(phi, X, y, Z []float64, scale float64) (m, M int, sigma float64, err error) {
	md := p.model
	if p.closed {
		return 0, 0, 0, errors.New("lml: sparse bound on a closed workspace")
	}
	if err := md.CheckParams(phi); err != nil {
		return 0, 0, 0, err
	}
	if err := md.CheckData(X, y); err != nil {
		return 0, 0, 0, err
	}
	if M, err = md.CheckInducing(Z); err != nil {
		return 0, 0, 0, err
	}
	m = len(y)
	p.ensureM(M)
	p.m, p.M = m, M
	p.phi, p.x, p.y = phi, X, y
	sigma = NoiseStd(phi[p.np-1])
	p.noiseVar = sigma * sigma / scale

	fz := p.zForward(p.workers[0].bl, phi, Z, M)
	kuu := p.kuu[:M*M]
	asm.SEKernel(kuu, M, fz, p.df, fz, p.df, M, M, p.df)
	if err := p.factorKuu(kuu, M); err != nil {
		if errors.Is(err, cholesky.ErrNotPositiveDefinite) {
			return 0, 0, 0, fmt.Errorf("lml: inducing kernel matrix K_uu (M=%d, σ=%.4g) is not positive definite "+
				"even with jitter: %w", M, sigma, err)
		}
		return 0, 0, 0, fmt.Errorf("lml: factorizing the inducing kernel matrix K_uu (M=%d, σ=%.4g): %w", M, sigma, err)
	}
	p.l, p.ldl = p.facK.L()
	// L⁻ᵀ, for the first pass's A_cᵀ = K_cu L⁻ᵀ: Lᵀ·X = I.
	linvT := p.linvT[:M*M]
	clear(linvT)
	for j := 0; j < M; j++ {
		linvT[j*M+j] = 1
	}
	p.mm.Dtrsm(blas.Left, blas.Lower, blas.Trans, blas.NonUnit, M, M, 1, p.l, p.ldl, linvT, M)
	for j := 1; j < M; j++ {
		clear(linvT[j*M : j*M+j]) // exactly upper triangular
	}
	p.workers[0].bl.PackB(&p.pbWhiten, blas.NoTrans, M, M, linvT, M, true)

	tile := p.tile
	p.nTiles = (m + tile - 1) / tile
	p.nBlks = min(sparseBlocks, p.nTiles)
	rows := min(p.chunk, p.nTiles*tile)
	for _, w := range p.workers {
		p.ensureWorker(w, rows, M)
	}
	return m, M, sigma, nil
}

// release drops the references to the caller's slices.
func (p *sparsePool) release() {
	p.phi, p.x, p.y, p.xs, p.pfit, p.mix, p.l = nil, nil, nil, nil, nil, nil, nil
}

// stats streams the data once and leaves AAᵀ = L⁻¹SL⁻ᵀ (full, symmetric),
// t = L⁻¹K_uf r and rᵀr in p.aa, p.t and p.rr.
func (p *sparsePool) stats(grad bool) {
	M := p.M
	p.ensureBlocks(p.nBlks, M, grad)
	p.run(passStats, p.nBlks)
	aa, t := p.aa[:M*M], p.t[:M]
	p.rr = 0
	ld := M + 1
	for i := 0; i < p.nBlks; i++ {
		blk := &p.blocks[i]
		for j := 0; j < M; j++ {
			dst, src := aa[j*M:j*M+j+1], blk.aa[j*ld:j*ld+j+1]
			if i == 0 {
				copy(dst, src)
			} else {
				asm.AxpyUnitary(1, src, dst)
			}
		}
		// The last row: [rᵀAᵀ | rᵀr].
		if i == 0 {
			copy(t, blk.aa[M*ld:M*ld+M])
		} else {
			asm.AxpyUnitary(1, blk.aa[M*ld:M*ld+M], t)
		}
		p.rr += blk.aa[M*ld+M]
	}
	mirrorLowerTo(aa, M)
}

// mirrorLowerTo copies the strict lower triangle of the n×n a onto its
// upper triangle.
func mirrorLowerTo(a []float64, n int) {
	for j := 0; j < n; j++ {
		for k := 0; k < j; k++ {
			a[k*n+j] = a[j*n+k]
		}
	}
}

// symmetrize replaces the n×n a (stride lda) by (a + aᵀ)/2.
func symmetrize(a []float64, n, lda int) {
	for j := 0; j < n; j++ {
		for k := 0; k < j; k++ {
			v := 0.5 * (a[j*lda+k] + a[k*lda+j])
			a[j*lda+k], a[k*lda+j] = v, v
		}
	}
}

// collapse computes, from AAᵀ, t and rᵀr, the factor of B = I + AAᵀ/σ_e²
// (p.facB; B itself is left in p.bm), c, and returns the bound together
// with tr(AAᵀ) and cᵀc.
func (p *sparsePool) collapse(scale, sigma float64) (f, trA, cc float64, err error) {
	M, m, v := p.M, float64(p.m), p.noiseVar
	aa, a := p.aa[:M*M], p.bm[:M*M]
	for j := 0; j < M; j++ {
		trA += aa[j*M+j]
	}
	inv := 1 / v
	for i, x := range aa {
		a[i] = x * inv
	}
	for j := 0; j < M; j++ {
		a[j*M+j]++
	}
	if err := p.facB.Factorize(a, M, M); err != nil {
		return math.NaN(), 0, 0, fmt.Errorf(
			"lml: sparse bound: B = I + L⁻¹SL⁻ᵀ/σ² (M=%d, m=%d, σ=%.4g) cannot be factorized: %w", M, p.m, sigma, err)
	}
	t, c := p.t[:M], p.c[:M]
	if err := p.facB.SolveLower(c, t); err != nil {
		return math.NaN(), 0, 0, err
	}
	for j := range c {
		c[j] *= inv
	}
	cc = asm.DotUnitary(c, c)
	// Σ_j k(x_j, x_j) = m: the kernel has unit diagonal.
	f = -0.5*m*(ln2Pi+math.Log(v)) - 0.5*p.facB.LogDet() - 0.5*p.rr*inv + 0.5*cc - 0.5*m*inv + 0.5*trA*inv
	if scale != 1 {
		s2 := sigma * sigma
		f += m * (0.5*(ln2Pi+math.Log(s2/scale)) - 0.5*scale*(ln2Pi+math.Log(s2)))
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return math.NaN(), 0, 0, fmt.Errorf("lml: sparse bound is %v (M=%d, m=%d, σ=%.4g)", f, M, p.m, sigma)
	}
	return f, trA, cc, nil
}

func (p *sparsePool) eval(phi, X, y, Z []float64, scale float64, grad []float64) (float64, error) {
	if grad != nil && len(grad) != p.np {
		return math.NaN(), fmt.Errorf("lml: gradient buffer has %d values, want %d", len(grad), p.np)
	}
	defer p.release()
	_, _, sigma, err := p.prepare(phi, X, y, Z, scale)
	if err != nil {
		return math.NaN(), err
	}
	p.stats(grad != nil)
	f, trA, cc, err := p.collapse(scale, sigma)
	if err != nil || grad == nil {
		return f, err
	}
	if err := p.gradient(Z, scale, sigma, trA, cc, grad); err != nil {
		return math.NaN(), err
	}
	return f, nil
}

// run serves items 0 … items−1 of pass on up to threads goroutines (the
// caller is worker 0); each item is taken by whichever worker is free.
func (p *sparsePool) run(pass, items int) {
	p.pass, p.items = pass, items
	p.next.Store(0)
	nw := min(p.threads, items)
	if nw > 1 {
		p.start.Do(p.startWorkers)
		p.wg.Add(nw - 1)
		for i := 1; i < nw; i++ {
			p.wake[i] <- struct{}{}
		}
	}
	p.work(0)
	if nw > 1 {
		p.wg.Wait()
	}
}

func (p *sparsePool) work(i int) {
	w := p.workers[i]
	for {
		it := int(p.next.Add(1)) - 1
		if it >= p.items {
			return
		}
		switch p.pass {
		case passStats:
			p.statsBlock(w, it)
		case passGrad:
			p.gradBlock(w, it)
		case passPredict:
			p.predictTile(w, it)
		}
	}
}

func (p *sparsePool) startWorkers() {
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

func (p *sparsePool) close() {
	p.stop.Do(func() {
		p.start.Do(func() {})
		for _, ch := range p.wake {
			if ch != nil {
				close(ch)
			}
		}
	})
}

// blockRows returns the rows [r0, r1) of block b: whole tiles, the blocks
// as even as the tiles allow.
func (p *sparsePool) blockRows(b int) (r0, r1 int) {
	t0 := b * p.nTiles / p.nBlks
	t1 := (b + 1) * p.nTiles / p.nBlks
	return t0 * p.tile, min(t1*p.tile, p.m)
}

// chunkForward runs both networks on the nc rows from c0, tile by tile,
// and fills w.r = y − m(X) and w.k = [K_cu | r] (nc×(M+1)). It returns f(X)
// of the chunk (nc×DF).
func (p *sparsePool) chunkForward(w *sparseWorker, c0, nc int) []float64 {
	d, df, M := p.model.D, p.df, p.M
	for t0 := 0; t0 < nc; t0 += p.tile {
		nt := min(p.tile, nc-t0)
		xt := p.x[(c0+t0)*d : (c0+t0+nt)*d]
		p.mean.forwardRows(w.bl, p.phi, xt, nt, t0, w.meanActs)
		p.kern.forwardRows(w.bl, p.phi, xt, nt, t0, w.kernActs)
	}
	mean := w.meanActs[len(w.meanActs)-1][:nc]
	F := w.kernActs[len(w.kernActs)-1][:nc*df]
	r := w.r[:nc]
	for i := range r {
		r[i] = p.y[c0+i] - mean[i]
	}
	fz := p.zActs[len(p.zActs)-1][:M*df]
	ld := M + 1
	asm.SEKernel(w.k[:nc*ld], ld, F, df, fz, df, nc, M, df)
	for i, v := range r {
		w.k[i*ld+M] = v
	}
	return F
}

// whiten sets the nc×M rows X (stride ldx) to K·L⁻ᵀ for the nc×M rows K
// (stride ldk), L⁻ᵀ upper triangular: one GEMM that skips the zero half
// (linalg's GemmUpperB, on L⁻ᵀ packed once per evaluation), M²/2 + 4M
// multiply-adds per row at the GEMM's speed, with K packed once per cache
// block. Each row of X depends on its
// row of K only.
func (p *sparsePool) whiten(bl *linalg.Native, K []float64, ldk, nc int, X []float64, ldx int) {
	bl.GemmPacked(nc, 1, K, ldk, &p.pbWhiten, 0, X, ldx)
}

// statsBlock sums AAᵀ, A r and rᵀr over the rows of block bi: per chunk
// A_cᵀ = K_cu L⁻ᵀ (whiten), then per tile one rank-nt update of the
// (M+1)×(M+1) [A; rᵀ][A; rᵀ]ᵀ, whose last row holds A r and rᵀr.
// AAᵀ is thus a sum of Gram matrices, positive semi-definite whatever the
// rounding, where L⁻¹(Σ K_uc K_cu)L⁻ᵀ would amplify the rounding of S by
// ‖K_uu⁻¹‖ and can come out indefinite when K_uu is ill-conditioned.
func (p *sparsePool) statsBlock(w *sparseWorker, bi int) {
	M := p.M
	blk := &p.blocks[bi]
	r0, r1 := p.blockRows(bi)
	beta := 0.0 // the first tile overwrites the block's sums
	ld := M + 1
	for c0 := r0; c0 < r1; c0 += p.chunk {
		nc := min(p.chunk, r1-c0)
		p.chunkForward(w, c0, nc)
		p.whiten(w.bl, w.k, ld, nc, w.h, ld)
		for i, v := range w.r[:nc] {
			w.h[i*ld+M] = v
		}
		for t0 := 0; t0 < nc; t0 += p.tile {
			nt := min(p.tile, nc-t0)
			w.bl.Dsyrk(blas.Lower, blas.Trans, ld, nt, 1, w.h[t0*ld:(t0+nt)*ld], ld, beta, blk.aa, ld)
			beta = 1
		}
	}
}

// factorKuu factors K_uu (M×M, both triangles; its diagonal is restored
// before returning) into p.facK and sets p.jitter. The plain factorization
// is tried first and kept if every pivot L_jj² is at least ε₀·mean(diag),
// ε₀ the first rung of the ladder (1e-6): K_uu has no noise term to keep it
// away from singular, and with a smaller pivot the rounding of L⁻¹K_uf,
// amplified by 1/L_jj, decides the bound (measured: relative errors of
// 1e-6 and bounds above the exact LML at pivots of 1e-14). Otherwise, or if
// it fails, jitter = ε·mean(diag) is added for each ε of the ladder in turn
// until the factorization succeeds; every pivot is then at least the
// jitter. If the last rung fails the error is the *cholesky.NotPDError.
func (p *sparsePool) factorKuu(kuu []float64, M int) error {
	p.jitter = 0
	err := p.facK.Factorize(kuu, M, M)
	var mean float64
	for j := 0; j < M; j++ {
		mean += kuu[j*M+j]
	}
	mean /= float64(M)
	if len(p.ladder) == 0 {
		return err
	}
	floor := p.ladder[0] * mean
	if err == nil {
		l, ld := p.facK.L()
		small := false
		for j := 0; j < M; j++ {
			if d := l[j*ld+j]; d*d < floor {
				small = true
				break
			}
		}
		if !small {
			return nil
		}
	} else if !errors.Is(err, cholesky.ErrNotPositiveDefinite) {
		return err
	}
	if !(mean > 0) {
		return err
	}
	for _, eps := range p.ladder {
		jit := eps * mean
		for j := 0; j < M; j++ {
			p.tmpM[j] = kuu[j*M+j]
			kuu[j*M+j] += jit
		}
		err = p.facK.Factorize(kuu, M, M)
		for j := 0; j < M; j++ {
			kuu[j*M+j] = p.tmpM[j]
		}
		if err == nil {
			p.jitter = jit
			return nil
		}
		if !errors.Is(err, cholesky.ErrNotPositiveDefinite) {
			return err
		}
	}
	var npd *cholesky.NotPDError
	if errors.As(err, &npd) {
		npd.Jitter = p.ladder[len(p.ladder)-1] * mean
	}
	return err
}

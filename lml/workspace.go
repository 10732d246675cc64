package lml

import (
	"errors"
	"fmt"
	"math"
	"runtime"

	"gonum.org/v1/gonum/blas"

	"github.com/pacpfl/pacpfl/asm"
	"github.com/pacpfl/pacpfl/cholesky"
	"github.com/pacpfl/pacpfl/internal/hugepage"
	"github.com/pacpfl/pacpfl/linalg"
)

// DefaultJitterLadder is the diagonal jitter tried, as multiples of
// mean(diag(K + σ²I)), when K + σ²I is not numerically positive definite:
// 1e-6, then ×10 up to five retries, then an error.
var DefaultJitterLadder = []float64{1e-6, 1e-5, 1e-4, 1e-3, 1e-2}

var ln2Pi = math.Log(2 * math.Pi)

// Workspace evaluates the log marginal likelihood of one particle and its
// gradient. It owns every buffer the evaluation needs, sized for the largest
// data set seen so far, so repeated calls do not allocate. It is not safe for
// concurrent use: give each goroutine its own.
//
// Memory: one m×m matrix is the only buffer that grows with m². It holds
// A = K + σ²I in both triangles; the Cholesky factor overwrites its lower
// triangle (cholesky.Factor.FactorizeInPlace), then A⁻¹ overwrites the
// factor (InverseInPlace), while the strict upper triangle keeps K, which
// the feature gradient reads and a jitter retry restores A from. The
// factorization's scratch adds at most about m²/4 when the BLAS runs on
// several threads (the concurrent halves of the inverse); everything else
// is O(m) (SquareFloats reports the total).
type Workspace struct {
	model      Model
	mean, kern mlp
	np         int
	bl         blas.Float64   // the BLAS given to NewWorkspace (nil: default)
	net        *linalg.Native // the networks' GEMMs, on one thread

	fac    cholesky.Factor
	jitter float64 // jitter of the last factorization

	m                  int // rows the buffers are sized for
	meanActs, kernActs [][]float64
	ft                 []float64 // DF×m, the kernel features transposed
	sq                 []float64 // m×m: A, then L, then A⁻¹ below; K above
	r, v               []float64 // m
	adiag              []float64 // m: A's diagonal, K_jj + σ²
	gF                 []float64 // m×DF
	gMean              []float64 // m
	g1, g2             []float64 // m×max width

	// The O(m²) passes over sq (building A, the feature gradient) run on
	// as many goroutines as the BLAS has threads, each on fixed rows.
	pass        sqPass
	passThreads int // > 0: overrides the BLAS's thread count (tests)
}

// NewWorkspace returns a workspace for model whose Cholesky factorizations
// run on b (nil: linalg's default BLAS). Pass linalg.NewNative(1) when many
// workspaces run concurrently.
func NewWorkspace(model Model, b blas.Float64) (*Workspace, error) {
	if err := model.Validate(); err != nil {
		return nil, err
	}
	ws := &Workspace{model: model, np: model.NumParams(), bl: b, net: linalg.NewNative(1)}
	ws.mean = newMLP(model.D, model.MeanHidden, 1, 0)
	ws.kern = newMLP(model.D, model.KernelHidden, model.DF, ws.mean.end)
	ws.fac.SetBLAS(b)
	ws.fac.SetJitterLadder(DefaultJitterLadder)
	return ws, nil
}

// Model returns the model the workspace evaluates.
func (ws *Workspace) Model() Model { return ws.model }

// SetJitterLadder replaces the jitter ladder (see DefaultJitterLadder); an
// empty, non-nil ladder disables jitter.
func (ws *Workspace) SetJitterLadder(eps []float64) {
	if eps == nil {
		eps = DefaultJitterLadder
	}
	ws.fac.SetJitterLadder(eps)
}

// Jitter returns the diagonal jitter the last evaluation needed (0 if none).
// The value and gradient are then those of K + (σ² + jitter)I, with the
// jitter held constant.
func (ws *Workspace) Jitter() float64 { return ws.jitter }

// LML returns ln N(y | m_φ(X), K_φ(X,X) + σ²I), eq. (33), for the m×D
// row-major inputs X and the m targets y. If grad is not nil it receives
// ∂LML/∂φ (overwritten, length NumParams).
func (ws *Workspace) LML(phi, X, y, grad []float64) (float64, error) {
	return ws.eval(phi, X, y, 1, grad)
}

// TemperedLML is ln Z^C_β(P_φ, S) for b rows (X, y) whose log-likelihood
// enters multiplied by scale: ln E_{h∼GP} Π_j N(y_j | h(x_j), σ²)^scale,
//
//	ln N(y | m, K + σ²/scale·I) + b·[½ ln(2πσ²/scale) − (scale/2) ln(2πσ²)].
//
// scale = m_i/b ≥ 1 is the mini-batch objective ln Z^C_{m_i}(P_φ, S^(b)) of
// Algorithm 2; scale = β/m on a full data set is the client temperature β
// (β < m tempers the likelihood); scale = 1 is LML. grad as in LML.
func (ws *Workspace) TemperedLML(phi, X, y []float64, scale float64, grad []float64) (float64, error) {
	if !(scale > 0) || math.IsInf(scale, 0) {
		return math.NaN(), fmt.Errorf("lml: tempering scale = %v must be positive and finite", scale)
	}
	return ws.eval(phi, X, y, scale, grad)
}

// CheckData validates a data set for model: X must be m×D with m = len(y) ≥ 1
// and everything finite.
func (m Model) CheckData(X, y []float64) error {
	if len(y) == 0 {
		return errors.New("lml: no data (y is empty)")
	}
	if len(X) != len(y)*m.D {
		return fmt.Errorf("lml: X has %d values, want m×D = %d×%d = %d (m = len(y))", len(X), len(y), m.D, len(y)*m.D)
	}
	if asm.AllFinite(X) && asm.AllFinite(y) {
		return nil
	}
	for i, v := range X {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("lml: X[%d][%d] = %v is not finite", i/m.D, i%m.D, v)
		}
	}
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("lml: y[%d] = %v is not finite", i, v)
		}
	}
	return nil
}

// CheckParams validates φ for model: the length and that it is finite.
func (m Model) CheckParams(phi []float64) error {
	if n := m.NumParams(); len(phi) != n {
		return fmt.Errorf("lml: φ has %d values, want %d for this model", len(phi), n)
	}
	if asm.AllFinite(phi) {
		return nil
	}
	for i, v := range phi {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("lml: φ[%d] (%s) = %v is not finite", i, m.blockName(i), v)
		}
	}
	return nil
}

// blockName names the block holding φ[i] and the position inside it.
func (m Model) blockName(i int) string {
	for _, b := range m.Layout() {
		if i >= b.Offset && i < b.Offset+b.Size() {
			return fmt.Sprintf("%s[%d]", b.Name, i-b.Offset)
		}
	}
	return "?"
}

// ensure sizes the per-row buffers for m rows.
func (ws *Workspace) ensure(m int) {
	if m <= ws.m {
		return
	}
	ws.m = m
	acts := func(n *mlp) [][]float64 {
		a := make([][]float64, n.layers())
		for l, w := range n.widths {
			a[l] = make([]float64, m*w)
		}
		return a
	}
	ws.meanActs = acts(&ws.mean)
	ws.kernActs = acts(&ws.kern)
	df := ws.model.DF
	ws.ft = make([]float64, df*m)
	ws.r = make([]float64, m)
	ws.v = make([]float64, m)
	ws.adiag = make([]float64, m)
	ws.gF = make([]float64, m*df)
	ws.gMean = make([]float64, m)
	mw := max(ws.mean.maxWidth(), ws.kern.maxWidth())
	ws.g1 = make([]float64, m*mw)
	ws.g2 = make([]float64, m*mw)
}

// ensureSquare sizes the one m×m buffer and returns it (stride m).
func (ws *Workspace) ensureSquare(m int) []float64 {
	if cap(ws.sq) < m*m {
		ws.sq = nil // let the old one go before the new one is allocated
		ws.sq = hugepage.Floats(m * m)
	}
	return ws.sq[:m*m]
}

// release drops the buffers that grow with m² (the m×m matrix and the
// factorization's scratch); the next evaluation allocates them again.
func (ws *Workspace) release() {
	ws.sq = nil
	ws.fac.Release()
}

// SquareFloats returns the number of float64 values the workspace holds in
// buffers that grow with m² (its m×m matrix and the factorization's
// scratch): m² + at most about m²/4 for the m of the largest data set seen.
func (ws *Workspace) SquareFloats() int {
	return cap(ws.sq) + ws.fac.Footprint()
}

// threads returns the goroutines the O(m²) passes may use: the BLAS's
// thread setting (GOMAXPROCS for the default BLAS, 1 for a BLAS without
// one).
func (ws *Workspace) threads() int {
	if ws.passThreads > 0 {
		return ws.passThreads
	}
	switch b := ws.bl.(type) {
	case nil:
		return runtime.GOMAXPROCS(0)
	case interface{ Threads() int }:
		return max(1, b.Threads())
	}
	return 1
}

// features runs both networks on X and returns the mean vector (m) and the
// kernel features (m×DF, row-major) as views into the workspace.
func (ws *Workspace) features(phi, X []float64, m int) (mean, F []float64) {
	ws.ensure(m)
	ws.mean.forwardRows(ws.net, phi, X, m, 0, ws.meanActs)
	ws.kern.forwardRows(ws.net, phi, X, m, 0, ws.kernActs)
	return ws.meanActs[len(ws.meanActs)-1][:m], ws.kernActs[len(ws.kernActs)-1][:m*ws.model.DF]
}

// backNets accumulates into grad the networks' gradients seeded with
// ∂LML/∂m_φ(X) (gMean, m) and ∂LML/∂F (gF, m×DF), after features.
func (ws *Workspace) backNets(phi, X []float64, m int, gMean, gF, grad []float64) {
	ws.mean.backwardRows(ws.net, phi, X, m, 0, ws.meanActs, gMean, grad, ws.g1, ws.g2)
	ws.kern.backwardRows(ws.net, phi, X, m, 0, ws.kernActs, gF, grad, ws.g1, ws.g2)
}

// factor builds A = K + noiseVar·I in the m×m buffer (both triangles) from
// the features F and factors it in place with jitter: L below the
// diagonal, K above.
func (ws *Workspace) factor(F []float64, m int, noiseVar, sigma float64) error {
	a := ws.ensureSquare(m)
	ws.pass.run(ws.threads(), sqKernelPass, ws, m, F, noiseVar)
	ws.jitter = 0
	if err := ws.fac.FactorizeInPlaceWithJitter(a, m, m); err != nil {
		if errors.Is(err, cholesky.ErrNotPositiveDefinite) {
			return fmt.Errorf("lml: kernel matrix K + σ²I (m=%d, σ=%.4g) is not positive definite even with jitter: %w",
				m, sigma, err)
		}
		return fmt.Errorf("lml: factorizing K + σ²I (m=%d, σ=%.4g): %w", m, sigma, err)
	}
	ws.jitter = ws.fac.Jitter()
	return nil
}

func (ws *Workspace) eval(phi, X, y []float64, scale float64, grad []float64) (float64, error) {
	md := ws.model
	if err := md.CheckParams(phi); err != nil {
		return math.NaN(), err
	}
	if err := md.CheckData(X, y); err != nil {
		return math.NaN(), err
	}
	if grad != nil && len(grad) != ws.np {
		return math.NaN(), fmt.Errorf("lml: gradient buffer has %d values, want %d", len(grad), ws.np)
	}
	m, df := len(y), md.DF
	mean, F := ws.features(phi, X, m)

	s := phi[ws.np-1]
	sigma := NoiseStd(s)
	sigma2 := sigma * sigma
	if err := ws.factor(F, m, sigma2/scale, sigma); err != nil {
		return math.NaN(), err
	}

	// v = A⁻¹ r, r = y − m_φ(X).
	r, v := ws.r[:m], ws.v[:m]
	for j := range r {
		r[j] = y[j] - mean[j]
	}
	if err := ws.fac.SolveVec(v, r); err != nil {
		return math.NaN(), err
	}
	fm := float64(m)
	lml := -0.5*asm.DotUnitary(r, v) - 0.5*ws.fac.LogDet() - 0.5*fm*ln2Pi
	if scale != 1 {
		lml += fm * (0.5*(ln2Pi+math.Log(sigma2/scale)) - 0.5*scale*(ln2Pi+math.Log(sigma2)))
	}
	if math.IsNaN(lml) || math.IsInf(lml, 0) {
		return math.NaN(), fmt.Errorf("lml: log marginal likelihood is %v (m=%d, σ=%.4g)", lml, m, sigma)
	}
	if grad == nil {
		return lml, nil
	}

	// Γ = ½(vvᵀ − A⁻¹): ∂LML/∂K = Γ, ∂LML/∂(noise var) = tr Γ. A⁻¹
	// replaces the factor in the lower triangle; K stays above it.
	a, _, err := ws.fac.InverseInPlace()
	if err != nil {
		return math.NaN(), err
	}
	ft := ws.ft[:df*m]
	for j := 0; j < m; j++ {
		for c := 0; c < df; c++ {
			ft[c*m+j] = F[j*df+c]
		}
	}
	// ∂LML/∂f_j = −2 Σ_l Γ_jl K_jl (f_j − f_l) = −(f_j Σ_l w_l − Σ_l w_l f_l)
	// with w_l = (v_j v_l − A⁻¹_jl) K_jl over l ≠ j (the diagonal term
	// vanishes: f_j − f_j = 0); see featureGradRows.
	ws.pass.run(ws.threads(), sqGradPass, ws, m, F, 0)
	var trAinv float64
	for j := 0; j < m; j++ {
		trAinv += a[j*m+j]
	}
	trGamma := 0.5 * (asm.DotUnitary(v, v) - trAinv)

	clear(grad)
	// The networks, seeded with ∂LML/∂m_j = v_j and ∂LML/∂F.
	copy(ws.gMean[:m], v)
	ws.backNets(phi, X, m, ws.gMean[:m], ws.gF[:m*df], grad)
	// Noise: A depends on σ² through σ²/scale; the tempering term on σ²
	// directly. dσ²/ds = 2σ·sigmoid(s).
	dSigma2 := trGamma / scale
	if scale != 1 {
		dSigma2 += fm * (1 - scale) / (2 * sigma2)
	}
	grad[ws.np-1] = dSigma2 * 2 * sigma * sigmoid(s)
	return lml, nil
}

// factorize factors a (m×m, stride m), retrying with the jitter ladder only
// if the plain factorization finds it not positive definite. (Trying plainly
// first costs nothing extra, and keeps the common path free of the
// allocation FactorizeWithJitter makes while inspecting the error.)
func factorize(f *cholesky.Factor, a []float64, m int) error {
	err := f.Factorize(a, m, m)
	if err != nil && errors.Is(err, cholesky.ErrNotPositiveDefinite) {
		err = f.FactorizeWithJitter(a, m, m)
	}
	return err
}

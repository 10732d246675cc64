package lml

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"

	"github.com/pacpfl/pacpfl/asm"
	"github.com/pacpfl/pacpfl/cholesky"
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
type Workspace struct {
	model      Model
	mean, kern mlp
	np         int

	fac    cholesky.Factor
	jitter float64 // jitter of the last factorization

	m                  int // rows the buffers are sized for
	meanActs, kernActs [][]float64
	ft                 []float64 // DF×m, the kernel features transposed
	a                  []float64 // m×m: K + σ²I (K off the diagonal)
	ainv               []float64 // m×m: (K + σ²I)⁻¹
	r, v, w            []float64 // m
	gF                 []float64 // m×DF
	gMean              []float64 // m
	g1, g2             []float64 // m×max width
}

// NewWorkspace returns a workspace for model whose Cholesky factorizations
// run on b (nil: linalg's default BLAS). Pass linalg.NewNative(1) when many
// workspaces run concurrently.
func NewWorkspace(model Model, b blas.Float64) (*Workspace, error) {
	if err := model.Validate(); err != nil {
		return nil, err
	}
	ws := &Workspace{model: model, np: model.NumParams()}
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
	ws.w = make([]float64, m)
	ws.gF = make([]float64, m*df)
	ws.gMean = make([]float64, m)
	mw := max(ws.mean.maxWidth(), ws.kern.maxWidth())
	ws.g1 = make([]float64, m*mw)
	ws.g2 = make([]float64, m*mw)
}

// ensureSquare sizes the m×m buffers: A always, A⁻¹ only for gradients
// (it is not needed to evaluate or to predict).
func (ws *Workspace) ensureSquare(m int, inverse bool) {
	if cap(ws.a) < m*m {
		ws.a = make([]float64, m*m)
	}
	if inverse && cap(ws.ainv) < m*m {
		ws.ainv = make([]float64, m*m)
	}
}

// features runs both networks on X and returns the mean vector (m) and the
// kernel features (m×DF, row-major) as views into the workspace.
func (ws *Workspace) features(phi, X []float64, m int) (mean, F []float64) {
	ws.ensure(m)
	ws.mean.forward(phi, X, m, ws.meanActs)
	ws.kern.forward(phi, X, m, ws.kernActs)
	return ws.meanActs[len(ws.meanActs)-1][:m], ws.kernActs[len(ws.kernActs)-1][:m*ws.model.DF]
}

// factor builds A = K + noiseVar·I in ws.a (m×m, stride m) from the features
// F and factors it with jitter.
func (ws *Workspace) factor(F []float64, m int, noiseVar, sigma float64) error {
	df := ws.model.DF
	ws.ensureSquare(m, false)
	a := ws.a[:m*m]
	asm.SEKernel(a, m, F, df, F, df, m, m, df)
	for j := 0; j < m; j++ {
		a[j*m+j] += noiseVar
	}
	ws.jitter = 0
	if err := factorize(&ws.fac, a, m); err != nil {
		if errors.Is(err, cholesky.ErrNotPositiveDefinite) {
			return fmt.Errorf("lml: kernel matrix K + σ²I (m=%d, σ=%.4g) is not positive definite even with jitter: %w", m, sigma, err)
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

	// Γ = ½(vvᵀ − A⁻¹): ∂LML/∂K = Γ, ∂LML/∂(noise var) = tr Γ.
	ws.ensureSquare(m, true)
	ainv := ws.ainv[:m*m]
	if err := ws.fac.Inverse(ainv, m); err != nil {
		return math.NaN(), err
	}
	a := ws.a[:m*m]
	ft := ws.ft[:df*m]
	for j := 0; j < m; j++ {
		for c := 0; c < df; c++ {
			ft[c*m+j] = F[j*df+c]
		}
	}
	// ∂LML/∂f_j = −2 Σ_l Γ_jl K_jl (f_j − f_l) = −(f_j Σ_l w_l − Σ_l w_l f_l)
	// with w_l = (v_j v_l − A⁻¹_jl) K_jl; the diagonal drops out (f_j − f_j
	// = 0), so w_j is set to 0 and A's diagonal (K_jj + σ²) never read.
	gF := ws.gF[:m*df]
	wb := ws.w[:m]
	var trAinv float64
	for j := 0; j < m; j++ {
		vj := v[j]
		arow := a[j*m : j*m+m]
		irow := ainv[j*m : j*m+m]
		trAinv += irow[j]
		var sum float64
		for l, kv := range arow {
			t := (vj*v[l] - irow[l]) * kv
			wb[l] = t
			sum += t
		}
		sum -= wb[j]
		wb[j] = 0
		for c := 0; c < df; c++ {
			gF[j*df+c] = asm.DotUnitary(wb, ft[c*m:c*m+m]) - F[j*df+c]*sum
		}
	}
	trGamma := 0.5 * (asm.DotUnitary(v, v) - trAinv)

	clear(grad)
	// Mean network: ∂LML/∂m_j = v_j.
	copy(ws.gMean[:m], v)
	ws.mean.backward(phi, X, m, ws.meanActs, ws.gMean[:m], grad, ws.g1, ws.g2)
	// Kernel network, seeded with ∂LML/∂F.
	ws.kern.backward(phi, X, m, ws.kernActs, gF, grad, ws.g1, ws.g2)
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

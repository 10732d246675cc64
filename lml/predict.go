package lml

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"

	"github.com/pacpfl/pacpfl/asm"
	"github.com/pacpfl/pacpfl/cholesky"
	"github.com/pacpfl/pacpfl/internal/hugepage"
	"github.com/pacpfl/pacpfl/linalg"
)

// Predictor holds k particles conditioned on one client's personalisation
// data and predicts with the mixture of their GP posteriors (eqs. 35–37).
// Fit once, then Predict as often as needed; buffers are reused across calls
// of the same sizes. Not safe for concurrent use.
type Predictor struct {
	model Model
	np    int
	ws    *Workspace // runs the networks
	bl    blas.Float64

	parts  []fitted
	lml    []float64 // ln Z_κ
	alpha  []float64 // mixture weights
	fitted bool
	m      int

	// Predict scratch.
	ks []float64 // n×m k_* rows, overwritten by L⁻¹k_*
}

// fitted is one particle conditioned on the data.
type fitted struct {
	phi    []float64
	a      []float64 // m×m: A = K + σ²I, factored in place (L below the diagonal)
	fac    cholesky.Factor
	v      []float64 // (K + σ²I)⁻¹(y − m)
	F      []float64 // training features, m×DF
	sigma2 float64
}

// NewPredictor returns a predictor for model; b is the BLAS (nil: default).
func NewPredictor(model Model, b blas.Float64) (*Predictor, error) {
	if b == nil {
		var err error
		if b, err = linalg.Backend(""); err != nil {
			return nil, err
		}
	}
	ws, err := NewWorkspace(model, b)
	if err != nil {
		return nil, err
	}
	return &Predictor{model: model, np: model.NumParams(), ws: ws, bl: b}, nil
}

// Fit conditions each particle (row of the k×dφ matrix phis) on the data X
// (m×D), y, and computes the mixture weights α_κ ∝ exp(LML_κ) (eq. 37b),
// normalised by log-sum-exp.
func (p *Predictor) Fit(phis, X, y []float64) error { return p.FitTempered(phis, X, y, 1) }

// FitTempered is Fit with the Gibbs posterior at temperature β = scale·m
// (docs/math.md §1.2): the likelihood raised to the power scale, i.e. the GP posterior
// under noise variance σ²/scale, and mixture weights ∝ Z^C_β (the tempered
// LML of Workspace.TemperedLML). Predictions still add the observation
// noise σ² of a new target. scale = 1 is Fit.
func (p *Predictor) FitTempered(phis, X, y []float64, scale float64) error {
	p.fitted = false
	if !(scale > 0) || math.IsInf(scale, 0) {
		return fmt.Errorf("lml: temperature scale β/m = %v must be positive and finite", scale)
	}
	if len(phis) == 0 || len(phis)%p.np != 0 {
		return fmt.Errorf("lml: particle matrix has %d values, not a positive multiple of dφ = %d", len(phis), p.np)
	}
	if err := p.model.CheckData(X, y); err != nil {
		return err
	}
	k, m, df := len(phis)/p.np, len(y), p.model.DF
	if len(p.parts) != k {
		p.parts = make([]fitted, k)
		for i := range p.parts {
			p.parts[i].fac.SetBLAS(p.bl)
			p.parts[i].fac.SetJitterLadder(DefaultJitterLadder)
		}
		p.lml = make([]float64, k)
		p.alpha = make([]float64, k)
	}
	p.m = m
	for κ := range p.parts {
		phi := phis[κ*p.np : κ*p.np+p.np]
		if err := p.model.CheckParams(phi); err != nil {
			return fmt.Errorf("lml: particle %d: %w", κ, err)
		}
		f := &p.parts[κ]
		f.phi = append(f.phi[:0], phi...)
		mean, F := p.ws.features(phi, X, m)
		f.F = append(f.F[:0], F[:m*df]...)
		sigma := NoiseStd(phi[p.np-1])
		f.sigma2 = sigma * sigma
		// Build K + σ²I in the particle's own m×m matrix and factor it
		// there: the factor is the only m² buffer a fitted particle keeps.
		if cap(f.a) < m*m {
			f.a = nil
			f.a = hugepage.Floats(m * m)
		}
		a := f.a[:m*m]
		asm.SEKernel(a, m, F, df, F, df, m, m, df)
		for j := 0; j < m; j++ {
			a[j*m+j] += f.sigma2 / scale
		}
		if err := f.fac.FactorizeInPlaceWithJitter(a, m, m); err != nil {
			return fmt.Errorf("lml: particle %d: kernel matrix K + (σ²/%g)I (m=%d, σ=%.4g) cannot be factorized: %w", κ,
				scale, m, sigma, err)
		}
		if cap(f.v) < m {
			f.v = make([]float64, m)
		}
		f.v = f.v[:m]
		r := p.ws.r[:m]
		for j := range r {
			r[j] = y[j] - mean[j]
		}
		if err := f.fac.SolveVec(f.v, r); err != nil {
			return err
		}
		var q float64
		for j := range r {
			q += r[j] * f.v[j]
		}
		p.lml[κ] = -0.5*q - 0.5*f.fac.LogDet() - 0.5*float64(m)*ln2Pi
		if scale != 1 {
			p.lml[κ] += float64(m) * (0.5*(ln2Pi+math.Log(f.sigma2/scale)) - 0.5*scale*(ln2Pi+math.Log(f.sigma2)))
		}
	}
	if err := MixtureWeights(p.alpha, p.lml); err != nil {
		return err
	}
	p.fitted = true
	return nil
}

// LMLs returns ln Z_κ of the personalisation data for each particle (a view).
func (p *Predictor) LMLs() []float64 { return p.lml }

// Weights returns the mixture weights α (a view).
func (p *Predictor) Weights() []float64 { return p.alpha }

// MixtureWeights sets dst[κ] = exp(lml[κ] − LSE(lml)), the normalised
// weights of eq. (37b); they sum to 1. A particle with LML −∞ gets weight 0.
// A NaN or +∞ LML, or all of them −∞, is an error (dst is then untouched).
func MixtureWeights(dst, lml []float64) error {
	if len(dst) < len(lml) || len(lml) == 0 {
		return fmt.Errorf("lml: MixtureWeights: %d weights for %d LMLs", len(dst), len(lml))
	}
	mx := math.Inf(-1)
	for κ, v := range lml {
		if math.IsNaN(v) || math.IsInf(v, 1) {
			return fmt.Errorf("lml: MixtureWeights: LML of particle %d is %v", κ, v)
		}
		mx = math.Max(mx, v)
	}
	if math.IsInf(mx, -1) {
		return fmt.Errorf("lml: MixtureWeights: every LML is −∞")
	}
	var s float64
	for i, v := range lml {
		dst[i] = math.Exp(v - mx)
		s += dst[i]
	}
	for i := range lml {
		dst[i] /= s
	}
	return nil
}

// Predict fills mix with the per-particle predictive means and variances
// (35b–c, noise included) at the n test inputs Xs (n×D) and the weights of
// the last Fit.
func (p *Predictor) Predict(Xs []float64, mix *Mixture) error {
	if !p.fitted {
		return fmt.Errorf("lml: Predict before a successful Fit")
	}
	d, df, m := p.model.D, p.model.DF, p.m
	if len(Xs) == 0 || len(Xs)%d != 0 {
		return fmt.Errorf("lml: test inputs have %d values, not a positive multiple of D = %d", len(Xs), d)
	}
	n := len(Xs) / d
	for i, v := range Xs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("lml: test input X[%d][%d] = %v is not finite", i/d, i%d, v)
		}
	}
	k := len(p.parts)
	mix.resize(n, k)
	copy(mix.Weights, p.alpha)
	// Test points go through in chunks so that the k_* block stays
	// chunk×m whatever n is.
	chunk := min(n, predictChunk)
	if cap(p.ks) < chunk*m {
		p.ks = make([]float64, chunk*m)
	}
	for κ := range p.parts {
		f := &p.parts[κ]
		l, ldl := f.fac.L()
		for c0 := 0; c0 < n; c0 += chunk {
			nc := min(chunk, n-c0)
			ks := p.ks[:nc*m]
			mean, Fs := p.ws.features(f.phi, Xs[c0*d:(c0+nc)*d], nc)
			// k_* rows: ks[i, j] = k(x*_i, x_j).
			asm.SEKernel(ks, m, Fs, df, f.F, df, nc, m, df)
			for i := 0; i < nc; i++ {
				mix.Means[(c0+i)*k+κ] = mean[i] + asm.DotUnitary(ks[i*m:i*m+m], f.v)
			}
			// Rows of ks ← (L⁻¹ k_*)ᵀ: solve X Lᵀ = K_*.
			p.bl.Dtrsm(blas.Right, blas.Lower, blas.Trans, blas.NonUnit, nc, m, 1, l, ldl, ks, m)
			for i := 0; i < nc; i++ {
				row := ks[i*m : i*m+m]
				q := asm.DotUnitary(row, row)
				// k(x*, x*) = 1; the posterior variance of h is ≥ 0 in
				// exact arithmetic, clamp the rounding.
				mix.Vars[(c0+i)*k+κ] = math.Max(0, 1-q) + f.sigma2
			}
		}
	}
	return nil
}

// predictChunk is the number of test points whose k_* rows are held at once.
const predictChunk = 256

// Mixture is the predictive distribution at n test points: at point i, the
// mixture Σ_κ α_κ N(Means[i,κ], Vars[i,κ]) (eq. 37a). Means and Vars are
// n×k row-major; Weights has k entries.
type Mixture struct {
	N, K        int
	Weights     []float64
	Means, Vars []float64
}

func (x *Mixture) resize(n, k int) {
	x.N, x.K = n, k
	grow := func(s []float64, l int) []float64 {
		if cap(s) < l {
			return make([]float64, l)
		}
		return s[:l]
	}
	x.Weights = grow(x.Weights, k)
	x.Means = grow(x.Means, n*k)
	x.Vars = grow(x.Vars, n*k)
}

// Mean returns the mixture mean Σ α_κ μ_κ at test point i.
func (x *Mixture) Mean(i int) float64 {
	var s float64
	for κ, a := range x.Weights {
		s += a * x.Means[i*x.K+κ]
	}
	return s
}

// Variance returns the mixture variance Σ α_κ (Σ_κ + μ_κ²) − (Σ α_κ μ_κ)²,
// computed around the mixture mean to avoid cancellation.
func (x *Mixture) Variance(i int) float64 {
	mu := x.Mean(i)
	var s float64
	for κ, a := range x.Weights {
		d := x.Means[i*x.K+κ] - mu
		s += a * (x.Vars[i*x.K+κ] + d*d)
	}
	return s
}

// CDF returns the mixture CDF Σ α_κ Φ((y − μ_κ)/√Σ_κ) at test point i.
func (x *Mixture) CDF(i int, y float64) float64 {
	var s float64
	for κ, a := range x.Weights {
		z := (y - x.Means[i*x.K+κ]) / math.Sqrt(x.Vars[i*x.K+κ])
		s += a * 0.5 * math.Erfc(-z/math.Sqrt2)
	}
	return math.Min(1, s)
}

// LogPDF returns ln Σ α_κ N(y | μ_κ, Σ_κ) at test point i (log-sum-exp).
func (x *Mixture) LogPDF(i int, y float64) float64 {
	mx := math.Inf(-1)
	for κ, a := range x.Weights {
		if a > 0 {
			mx = math.Max(mx, x.compLog(i, κ, y))
		}
	}
	if math.IsInf(mx, -1) {
		return mx
	}
	var s float64
	for κ, a := range x.Weights {
		if a > 0 {
			s += a * math.Exp(x.compLog(i, κ, y)-mx)
		}
	}
	return mx + math.Log(s)
}

func (x *Mixture) compLog(i, κ int, y float64) float64 {
	v := x.Vars[i*x.K+κ]
	d := y - x.Means[i*x.K+κ]
	return -0.5 * (ln2Pi + math.Log(v) + d*d/v)
}

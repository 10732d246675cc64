package lml

import (
	"fmt"
	"math"
	"runtime"

	"gonum.org/v1/gonum/blas"

	"github.com/pacpfl/pacpfl/asm"
	"github.com/pacpfl/pacpfl/internal/hugepage"
)

// SparsePredictor is Predictor with the sparse GP: k particles conditioned
// on one client's data through M inducing inputs Z (the SGPR posterior of
// Titsias 2009), mixed with weights ∝ exp(F_κ), F_κ the particle's Titsias
// bound (eq. 37b with the bound in place of the LML). Fitting streams the
// data in chunks as SparseWorkspace does; a fitted particle keeps O(M²)
// numbers, whatever m. Fit once, then Predict as often as needed; not safe
// for concurrent use. Its worker goroutines stop on Close or when it is
// garbage collected.
type SparsePredictor struct {
	*sparsePool
	parts  []sparseFit
	bounds []float64
	alpha  []float64
	fitted bool
	m, M   int
}

// sparseFit is one particle conditioned on the data.
type sparseFit struct {
	phi    []float64
	fz     []float64 // f(Z), M×DF
	l, lb  []float64 // L = chol(K_uu) and L_B = chol(B), M×M
	w      []float64 // L⁻ᵀL_B⁻ᵀc: the predictive mean is m(x*) + k_*uᵀw
	sigma2 float64
	jitter float64
}

// NewSparsePredictor returns a sparse predictor for model.
func NewSparsePredictor(model Model, opt SparseOptions) (*SparsePredictor, error) {
	p, err := newSparsePool(model, opt)
	if err != nil {
		return nil, err
	}
	sp := &SparsePredictor{sparsePool: p}
	runtime.AddCleanup(sp, func(p *sparsePool) { p.close() }, p)
	return sp, nil
}

// Close stops the worker goroutines now; Fit and Predict then return an
// error.
func (sp *SparsePredictor) Close() {
	sp.closed = true
	sp.close()
}

// Fit conditions each particle (row of the k×dφ matrix phis) on the data X
// (m×D), y through the inducing inputs Z (M×D) and sets the mixture weights
// α_κ ∝ exp(F_κ).
func (sp *SparsePredictor) Fit(phis, X, y, Z []float64) error {
	return sp.FitTempered(phis, X, y, Z, 1)
}

// FitTempered is Fit with the likelihood raised to the power scale (noise
// variance σ²/scale in the posterior, weights from TemperedBound), as
// Predictor.FitTempered. Predictions still add the noise σ² of a new target.
func (sp *SparsePredictor) FitTempered(phis, X, y, Z []float64, scale float64) error {
	sp.fitted = false
	if !(scale > 0) || math.IsInf(scale, 0) {
		return fmt.Errorf("lml: temperature scale β/m = %v must be positive and finite", scale)
	}
	np := sp.np
	if len(phis) == 0 || len(phis)%np != 0 {
		return fmt.Errorf("lml: particle matrix has %d values, not a positive multiple of dφ = %d", len(phis), np)
	}
	k := len(phis) / np
	if len(sp.parts) != k {
		sp.parts = make([]sparseFit, k)
		sp.bounds = make([]float64, k)
		sp.alpha = make([]float64, k)
	}
	defer sp.release()
	for κ := range sp.parts {
		phi := phis[κ*np : κ*np+np]
		m, M, sigma, err := sp.prepare(phi, X, y, Z, scale)
		if err != nil {
			return fmt.Errorf("lml: particle %d: %w", κ, err)
		}
		sp.stats(false)
		f, _, _, err := sp.collapse(scale, sigma)
		if err != nil {
			return fmt.Errorf("lml: particle %d: %w", κ, err)
		}
		sp.m, sp.M = m, M
		sp.bounds[κ] = f
		pf := &sp.parts[κ]
		pf.phi = append(pf.phi[:0], phi...)
		pf.fz = append(pf.fz[:0], sp.zActs[len(sp.zActs)-1][:M*sp.df]...)
		pf.sigma2 = sigma * sigma
		pf.jitter = sp.jitter
		l, ldl := sp.facK.L()
		pf.l = copyFactor(pf.l, l, ldl, M)
		lb, ldb := sp.facB.L()
		pf.lb = copyFactor(pf.lb, lb, ldb, M)
		if cap(pf.w) < M {
			pf.w = make([]float64, M)
		}
		pf.w = pf.w[:M]
		if err := sp.facB.SolveUpper(sp.tmpM[:M], sp.c[:M]); err != nil {
			return err
		}
		if err := sp.facK.SolveUpper(pf.w, sp.tmpM[:M]); err != nil {
			return err
		}
	}
	if err := MixtureWeights(sp.alpha, sp.bounds); err != nil {
		return err
	}
	sp.fitted = true
	return nil
}

// copyFactor copies the lower triangle of the n×n factor (l, stride ld)
// into dst (n×n, stride n, zeros above the diagonal), growing dst if needed.
func copyFactor(dst, l []float64, ld, n int) []float64 {
	if cap(dst) < n*n {
		dst = hugepage.Floats(n * n)
	}
	dst = dst[:n*n]
	for i := 0; i < n; i++ {
		copy(dst[i*n:i*n+i+1], l[i*ld:i*ld+i+1])
		clear(dst[i*n+i+1 : i*n+n])
	}
	return dst
}

// Bounds returns the Titsias bound F_κ of each particle on the fitted data
// (a view).
func (sp *SparsePredictor) Bounds() []float64 { return sp.bounds }

// Weights returns the mixture weights (a view).
func (sp *SparsePredictor) Weights() []float64 { return sp.alpha }

// Jitter returns the jitter K_uu of particle κ needed (0 if none).
func (sp *SparsePredictor) Jitter(κ int) float64 { return sp.parts[κ].jitter }

// Predict fills mix with each particle's sparse predictive mean and
// variance (noise σ² included) at the n test inputs Xs (n×D),
//
//	μ* = m(x*) + k_*uᵀ L⁻ᵀ L_B⁻ᵀ c,
//	Σ* = 1 − ‖L⁻¹k_u*‖² + ‖L_B⁻¹L⁻¹k_u*‖² + σ²,
//
// and the weights of the last Fit. The test inputs are processed in tiles
// of 256 on the workers; the result does not depend on their number.
func (sp *SparsePredictor) Predict(Xs []float64, mix *Mixture) error {
	if sp.closed {
		return fmt.Errorf("lml: Predict on a closed SparsePredictor")
	}
	if !sp.fitted {
		return fmt.Errorf("lml: Predict before a successful Fit")
	}
	d := sp.model.D
	if len(Xs) == 0 || len(Xs)%d != 0 {
		return fmt.Errorf("lml: test inputs have %d values, not a positive multiple of D = %d", len(Xs), d)
	}
	n := len(Xs) / d
	for i, v := range Xs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("lml: test input X[%d][%d] = %v is not finite", i/d, i%d, v)
		}
	}
	k := len(sp.parts)
	mix.resize(n, k)
	copy(mix.Weights, sp.alpha)
	defer sp.release()
	sp.M = sp.parts[0].lenM()
	for _, w := range sp.workers {
		sp.ensureWorker(w, sp.tile, sp.M)
	}
	sp.xs, sp.ns, sp.mix = Xs, n, mix
	items := (n + sp.tile - 1) / sp.tile
	for κ := range sp.parts {
		sp.pfit, sp.kappa = &sp.parts[κ], κ
		sp.phi = sp.parts[κ].phi
		sp.run(passPredict, items)
	}
	return nil
}

func (f *sparseFit) lenM() int { return len(f.w) }

// predictTile predicts the current particle at the test rows of tile it.
func (p *sparsePool) predictTile(w *sparseWorker, it int) {
	f := p.pfit
	M, df, d := len(f.w), p.df, p.model.D
	r0 := it * p.tile
	nt := min(p.tile, p.ns-r0)
	xt := p.xs[r0*d : (r0+nt)*d]
	p.mean.forwardRows(w.bl, f.phi, xt, nt, 0, w.meanActs)
	p.kern.forwardRows(w.bl, f.phi, xt, nt, 0, w.kernActs)
	mean := w.meanActs[len(w.meanActs)-1][:nt]
	F := w.kernActs[len(w.kernActs)-1][:nt*df]
	ks := w.k[:nt*M]
	asm.SEKernel(ks, M, F, df, f.fz, df, nt, M, df)
	mu := w.r[:nt]
	w.bl.Dgemv(blas.NoTrans, nt, M, 1, ks, M, f.w, 1, 0, mu, 1)
	// Rows of ks ← (L⁻¹k_u*)ᵀ, then (L_B⁻¹L⁻¹k_u*)ᵀ.
	w.bl.Dtrsm(blas.Right, blas.Lower, blas.Trans, blas.NonUnit, nt, M, 1, f.l, M, ks, M)
	q1 := w.dmu[:nt]
	for i := range q1 {
		row := ks[i*M : i*M+M]
		q1[i] = asm.DotUnitary(row, row)
	}
	w.bl.Dtrsm(blas.Right, blas.Lower, blas.Trans, blas.NonUnit, nt, M, 1, f.lb, M, ks, M)
	k, κ := p.mix.K, p.kappa
	for i := 0; i < nt; i++ {
		row := ks[i*M : i*M+M]
		q2 := asm.DotUnitary(row, row)
		p.mix.Means[(r0+i)*k+κ] = mean[i] + mu[i]
		// k(x*, x*) = 1; the latent variance is ≥ 0 in exact arithmetic,
		// clamp the rounding.
		p.mix.Vars[(r0+i)*k+κ] = math.Max(0, 1-q1[i]+q2) + f.sigma2
	}
}

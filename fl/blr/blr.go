// Package blr is Bayesian linear regression as a PAC-PFL client model: a
// worked example of bringing your own model to the federated loop of
// package fl (the contract is in fl's package documentation).
//
// The model of client i is y = xᵀw + ε with known noise ε ∼ N(0, σ²) and
// the prior P_φ: w ∼ N(μ, s²I). The server learns a hyper-posterior over
// φ = μ (dφ = D) or, with LearnScale, φ = (μ, ln s²) (dφ = D+1). Everything a
// client needs is closed-form, which makes the model a test bench for the
// loop: with Σ_i = s²X_iX_iᵀ + σ²I the log marginal likelihood is
// ln N(y_i | X_iμ, Σ_i), and for a fixed s the hyper-posterior
// 𝒬* ∝ 𝒫(μ)·Π_i Z_i(μ)^τ of a Gaussian hyper-prior is Gaussian too.
//
// Cost per client update: O(m·D² + D³) per particle (the D×D posterior
// precision, never the m×m covariance). A client owns its workspace and
// allocates nothing in steady state; different clients may run concurrently
// (the server runs one Update per client at a time, as fl.Client requires).
package blr

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pacpfl/pacpfl/cholesky"
	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/linalg"
	"github.com/pacpfl/pacpfl/lml"
	"github.com/pacpfl/pacpfl/svgd"
)

// Model is Bayesian linear regression with a learnable Gaussian prior over
// the weights. The zero value is not usable; build one with New.
type Model struct {
	D          int     // input dimension (no intercept is added: append a column of ones for one)
	NoiseStd   float64 // σ, the known observation noise
	LearnScale bool    // φ = (μ, ln s²) instead of φ = μ
	PriorStd   float64 // s when LearnScale is false
}

// New returns the model for inputs of dimension d. With learnScale the prior
// scale s is part of φ and priorStd is only the hyper-prior's centre for it.
func New(d int, noiseStd, priorStd float64, learnScale bool) (*Model, error) {
	switch {
	case d < 1:
		return nil, fmt.Errorf("blr: input dimension %d; need ≥ 1", d)
	case !(noiseStd > 0) || math.IsInf(noiseStd, 0):
		return nil, fmt.Errorf("blr: noise std %v must be positive and finite", noiseStd)
	case !(priorStd > 0) || math.IsInf(priorStd, 0):
		return nil, fmt.Errorf("blr: prior std %v must be positive and finite", priorStd)
	}
	return &Model{D: d, NoiseStd: noiseStd, LearnScale: learnScale, PriorStd: priorStd}, nil
}

// Dim is dφ, the length of one particle: μ, then ln s² with LearnScale.
func (m *Model) Dim() int {
	if m.LearnScale {
		return m.D + 1
	}
	return m.D
}

// prior returns μ and s² of the prior P_φ.
func (m *Model) prior(phi []float64) (mu []float64, s2 float64) {
	if m.LearnScale {
		return phi[:m.D], math.Exp(phi[m.D])
	}
	return phi[:m.D], m.PriorStd * m.PriorStd
}

// HyperPrior returns 𝒫 = N(0, std²I) over μ and, with LearnScale,
// N(ln PriorStd², std²) over ln s².
func (m *Model) HyperPrior(std float64) (*svgd.Gaussian, error) {
	mean := make([]float64, m.Dim())
	if m.LearnScale {
		mean[m.D] = math.Log(m.PriorStd * m.PriorStd)
	}
	return svgd.Isotropic(mean, std)
}

// CheckData reports the first problem with a client's data: a length that
// is not a multiple of D, rows and targets that disagree, no rows, or a
// NaN or infinity (named by row and column).
func (m *Model) CheckData(x, y []float64) error {
	if len(y) == 0 {
		return errors.New("blr: client has no data")
	}
	if len(x) != len(y)*m.D {
		return fmt.Errorf("blr: %d inputs for %d targets of dimension %d (want %d)", len(x), len(y), m.D, len(y)*m.D)
	}
	for j, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("blr: input row %d column %d is %v", j/m.D, j%m.D, v)
		}
	}
	for j, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("blr: target %d is %v", j, v)
		}
	}
	return nil
}

// workspace holds what one evaluation needs; sized for D, reused.
type workspace struct {
	a, ainv []float64 // D×D posterior precision A and its inverse
	c, u    []float64 // Xᵀr/v and A⁻¹c
	fac     cholesky.Factor
}

func newWorkspace(d int) *workspace {
	w := &workspace{a: make([]float64, d*d), ainv: make([]float64, d*d), c: make([]float64, d), u: make([]float64, d)}
	// Many clients factor concurrently: keep each on one thread.
	w.fac.SetBLAS(linalg.NewNative(1))
	return w
}

// posterior forms, for prior (μ, s²) and data with noise variance v,
// A = XᵀX/v + I/s², c = Xᵀ(y − Xμ)/v, factors A and solves u = A⁻¹c
// (the posterior of w is N(μ + u, A⁻¹)). It returns rᵀr/v.
func (w *workspace) posterior(d int, mu []float64, s2, v float64, x, y []float64) (float64, error) {
	clear(w.a)
	clear(w.c)
	var rr float64
	for j := range y {
		row := x[j*d : (j+1)*d]
		r := y[j]
		for p, xp := range row {
			r -= xp * mu[p]
		}
		rr += r * r
		for p, xp := range row {
			w.c[p] += xp * r
			ap := w.a[p*d : p*d+p+1]
			for q := range ap {
				ap[q] += xp * row[q]
			}
		}
	}
	for p := 0; p < d; p++ {
		for q := 0; q <= p; q++ {
			w.a[p*d+q] /= v
		}
		w.a[p*d+p] += 1 / s2
		w.c[p] /= v
	}
	if err := w.fac.Factorize(w.a, d, d); err != nil {
		return 0, fmt.Errorf("blr: posterior precision: %w", err)
	}
	if err := w.fac.SolveVec(w.u, w.c); err != nil {
		return 0, err
	}
	return rr / v, nil
}

// logML is ln N(y | Xμ, s²XXᵀ + vI) and, if grad is not nil, its gradient
// with respect to φ, written into grad (length Dim). Derivation (Woodbury,
// with A and u of posterior): rᵀΣ⁻¹r = rᵀr/v − cᵀu, ln|Σ| = m ln v + D ln s² +
// ln|A|, ∇_μ = Xᵀ Σ⁻¹ r = u/s², and ∂/∂ln s² = ½(‖u‖²/s² − D + tr(A⁻¹)/s²).
func (m *Model) logML(w *workspace, phi, x, y []float64, v float64, grad []float64) (float64, error) {
	d := m.D
	mu, s2 := m.prior(phi)
	rr, err := w.posterior(d, mu, s2, v, x, y)
	if err != nil {
		return 0, err
	}
	var cu, uu float64
	for p := range w.u {
		cu += w.c[p] * w.u[p]
		uu += w.u[p] * w.u[p]
	}
	n := float64(len(y))
	lz := -0.5*(rr-cu) - 0.5*(n*math.Log(v)+float64(d)*math.Log(s2)+w.fac.LogDet()) - 0.5*n*math.Log(2*math.Pi)
	if grad == nil {
		return lz, nil
	}
	for p := range w.u {
		grad[p] = w.u[p] / s2
	}
	if m.LearnScale {
		if err := w.fac.Inverse(w.ainv, d); err != nil {
			return 0, err
		}
		var tr float64
		for p := 0; p < d; p++ {
			tr += w.ainv[p*d+p]
		}
		grad[d] = 0.5 * (uu/s2 - float64(d) + tr/s2)
	}
	return lz, nil
}

// LogML returns ln Z = ln N(y | Xμ, s²XXᵀ + σ²I), the log marginal
// likelihood of the prior P_φ on the data (x row-major, len(y) × D), and its
// gradient with respect to φ. It allocates; clients use a workspace.
func (m *Model) LogML(phi, x, y []float64) (float64, []float64, error) {
	if len(phi) != m.Dim() {
		return 0, nil, fmt.Errorf("blr: φ of length %d, model has dφ = %d", len(phi), m.Dim())
	}
	if err := m.CheckData(x, y); err != nil {
		return 0, nil, err
	}
	grad := make([]float64, m.Dim())
	lz, err := m.logML(newWorkspace(m.D), phi, x, y, m.NoiseStd*m.NoiseStd, grad)
	if err != nil {
		return 0, nil, err
	}
	return lz, grad, nil
}

// client is one existing client's Update (Algorithm 2 of the paper).
type client struct {
	model   *Model
	x, y    []float64
	ws      *workspace
	batches data.RowSampler
}

// NewClient returns the training client for S_i = (c.X, c.Y). It keeps
// references to c's slices (they must not change during training).
func (m *Model) NewClient(c *data.ClientData) (fl.Client, error) {
	if err := m.CheckData(c.X, c.Y); err != nil {
		return nil, err
	}
	return &client{model: m, x: c.X, y: c.Y, ws: newWorkspace(m.D)}, nil
}

// Update implements fl.Client: for each particle row φ_κ it writes
// ∇_φ ln Z^C_{m_i}(P_φκ, S_i) into grad and returns the mean ln Z^C. On a
// mini-batch of b < m_i rows it uses the tempered objective of the paper
// (the batch's log-likelihood scaled by m_i/b, docs/math.md §4.5), which for a
// Gaussian likelihood is again Gaussian: Σ_j ln N(y_j|f_j, σ²)·t equals
// Σ_j ln N(y_j|f_j, σ²/t) plus b·(½ ln(2πσ²/t) − (t/2) ln(2πσ²)).
func (c *client) Update(particles []float64, k, dphi, batch int, rng *rand.Rand, grad []float64) (float64, error) {
	if dphi != c.model.Dim() {
		return 0, fmt.Errorf("blr client: particles of dimension %d, model has dφ = %d", dphi, c.model.Dim())
	}
	if len(particles) != k*dphi || len(grad) != k*dphi {
		return 0, fmt.Errorf("blr client: %d particles and %d gradient entries for k×dφ = %d×%d", len(particles),
			len(grad), k, dphi)
	}
	x, y := c.x, c.y
	m := len(y)
	s2n := c.model.NoiseStd * c.model.NoiseStd
	v, constant := s2n, 0.0
	if batch > 0 && batch < m {
		var err error
		if x, y, err = c.batches.Sample(c.x, c.y, c.model.D, batch, rng); err != nil {
			return 0, err
		}
		t := float64(m) / float64(batch)
		v = s2n / t
		constant = float64(batch) * (0.5*math.Log(2*math.Pi*v) - 0.5*t*math.Log(2*math.Pi*s2n))
	}
	var sum float64
	for r := 0; r < k; r++ {
		lz, err := c.model.logML(c.ws, particles[r*dphi:(r+1)*dphi], x, y, v, grad[r*dphi:(r+1)*dphi])
		if err != nil {
			return 0, fmt.Errorf("particle %d: %w", r, err)
		}
		sum += lz + constant
	}
	return sum / float64(k), nil
}

// Predict is the PAC-PFL predictive of one client (eq. 37 of the paper):
// for each particle the Bayes posterior of w given (x, y), and the mixture
// over particles weighted by α_κ ∝ Z(P_φκ, (x, y)). At each test input it
// returns the mixture mean and, where yTest is given, the mixture CDF at the
// true target (for calibration). With no conditioning data (len(y) = 0) the
// predictive is the equally weighted mixture of the priors.
func (m *Model) Predict(particles []float64, k int, x, y, xTest, yTest []float64) (fl.Prediction, error) {
	d, dphi := m.D, m.Dim()
	if len(particles) != k*dphi || k < 1 {
		return fl.Prediction{}, fmt.Errorf("blr: %d particle entries for k = %d, dφ = %d", len(particles), k, dphi)
	}
	if len(y) > 0 {
		if err := m.CheckData(x, y); err != nil {
			return fl.Prediction{}, err
		}
	}
	nt := len(xTest) / d
	if len(xTest) != nt*d || (yTest != nil && len(yTest) != nt) {
		return fl.Prediction{},
			fmt.Errorf("blr: %d test inputs and %d test targets for dimension %d", len(xTest), len(yTest), d)
	}
	w := newWorkspace(d)
	s2n := m.NoiseStd * m.NoiseStd
	lz := make([]float64, k)
	means := make([]float64, k*nt)
	sds := make([]float64, k*nt)
	for r := 0; r < k; r++ {
		phi := particles[r*dphi : (r+1)*dphi]
		mu, s2 := m.prior(phi)
		post := append([]float64(nil), mu...)
		if len(y) > 0 {
			var err error
			if lz[r], err = m.logML(w, phi, x, y, s2n, nil); err != nil {
				return fl.Prediction{}, err
			}
			for p := range post {
				post[p] += w.u[p]
			}
			if err := w.fac.Inverse(w.ainv, d); err != nil {
				return fl.Prediction{}, err
			}
		} else {
			clear(w.ainv)
			for p := 0; p < d; p++ {
				w.ainv[p*d+p] = s2
			}
		}
		for j := 0; j < nt; j++ {
			xs := xTest[j*d : (j+1)*d]
			var mean, quad float64
			for p, xp := range xs {
				mean += xp * post[p]
				for q, xq := range xs {
					quad += xp * w.ainv[p*d+q] * xq
				}
			}
			means[r*nt+j] = mean
			sds[r*nt+j] = math.Sqrt(quad + s2n)
		}
	}
	alpha := make([]float64, k)
	if err := lml.MixtureWeights(alpha, lz); err != nil {
		return fl.Prediction{}, err
	}
	out := fl.Prediction{Mean: make([]float64, nt)}
	if yTest != nil {
		out.CDFAtY = make([]float64, nt)
	}
	for j := 0; j < nt; j++ {
		for r := 0; r < k; r++ {
			mean, sd := means[r*nt+j], sds[r*nt+j]
			out.Mean[j] += alpha[r] * mean
			if yTest != nil {
				out.CDFAtY[j] += alpha[r] * 0.5 * math.Erfc(-(yTest[j]-mean)/(sd*math.Sqrt2))
			}
		}
	}
	return out, nil
}

// PredictGroup predicts each client's test set, conditioning on all of its
// data (S_i and S̃_i for an existing client, its own data for a new one), in
// the form fl.Evaluate takes.
func (m *Model) PredictGroup(particles []float64, k int, clients []data.ClientData) ([]fl.Prediction, error) {
	out := make([]fl.Prediction, len(clients))
	for i := range clients {
		x, y := clients[i].PersonalisationData()
		var err error
		if out[i], err = m.Predict(particles, k, x, y, clients[i].XTest, clients[i].YTest); err != nil {
			return nil, fmt.Errorf("client %d: %w", i, err)
		}
	}
	return out, nil
}

// ClippedLogZ is the fl.LogZCFunc of the PAC-Bayesian bounds for this model
// at β = m_i: ln Z^C = ln E_{w∼P_φ} exp(−Σ_j clip(−ln N(y_j | x_jᵀw, σ²), a, b)),
// estimated from samples draws of w (a Monte Carlo estimate, biased low by
// Jensen, which keeps the bounds conservative).
func (m *Model) ClippedLogZ(clients []data.ClientData, a, b float64, samples int) fl.LogZCFunc {
	return func(phi []float64, i int, rng *rand.Rand) (float64, error) {
		if samples < 1 {
			return 0, fmt.Errorf("blr: %d Monte Carlo samples", samples)
		}
		c := &clients[i]
		mu, s2 := m.prior(phi)
		s := math.Sqrt(s2)
		w := make([]float64, m.D)
		vals := make([]float64, samples)
		lnorm := 0.5 * math.Log(2*math.Pi*m.NoiseStd*m.NoiseStd)
		for t := range vals {
			for p := range w {
				w[p] = mu[p] + s*rng.NormFloat64()
			}
			var loss float64
			for j, yj := range c.Y {
				f := 0.0
				for p, xp := range c.X[j*m.D : (j+1)*m.D] {
					f += xp * w[p]
				}
				z := (yj - f) / m.NoiseStd
				loss += math.Min(math.Max(lnorm+0.5*z*z, a), b)
			}
			vals[t] = -loss
		}
		return fl.LogSumExp(vals) - math.Log(float64(samples)), nil
	}
}

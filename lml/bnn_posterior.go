package lml

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pacpfl/pacpfl/conv"
	"github.com/pacpfl/pacpfl/svgd"
)

// BNNPosteriorOptions configure the posterior inference of a BNN client
// (our choice, docs/math.md §5.3, PACOH-NN's meta-test): per prior particle, SVGD over M
// weight particles initialised from P_φ, with target
// ln P_φ(θ) + (m/b) Σ_batch ln p(y | x, θ), Adam, and the mixture weights
// α_κ from the estimate (38) on the client's data.
type BNNPosteriorOptions struct {
	Particles    int     // M weight particles per prior (0: 5)
	Steps        int     // SVGD steps (0: none, the particles stay prior draws)
	LR           float64 // Adam learning rate (0: 1e-3)
	Batch        int     // mini-batch b (0: min(m, 64); ≥ m: all the data)
	AlphaSamples int     // weight samples of the estimate behind α_κ (0: 100)
}

// Defaults of BNNPosteriorOptions. 500 SVGD steps: the particles converge
// within 250 on Fashion-MNIST's small split (docs/math.md, "BNN defaults"),
// and the larger splits have more data per step to fit.
const (
	DefaultBNNParticles      = 5
	DefaultBNNPosteriorSteps = 500
	DefaultBNNPosteriorLR    = 1e-3
	DefaultBNNPosteriorBatch = 64
	DefaultBNNAlphaSamples   = 100
)

// DefaultBNNPosteriorOptions returns the defaults (docs/math.md).
func DefaultBNNPosteriorOptions() BNNPosteriorOptions {
	return BNNPosteriorOptions{Steps: DefaultBNNPosteriorSteps}.WithDefaults()
}

// WithDefaults fills the zero fields in, except Steps.
func (o BNNPosteriorOptions) WithDefaults() BNNPosteriorOptions {
	if o.Particles == 0 {
		o.Particles = DefaultBNNParticles
	}
	if o.LR == 0 {
		o.LR = DefaultBNNPosteriorLR
	}
	if o.Batch == 0 {
		o.Batch = DefaultBNNPosteriorBatch
	}
	if o.AlphaSamples == 0 {
		o.AlphaSamples = DefaultBNNAlphaSamples
	}
	return o
}

// Validate reports an unusable option.
func (o BNNPosteriorOptions) Validate() error {
	o = o.WithDefaults()
	switch {
	case o.Particles < 1:
		return fmt.Errorf("bnn posterior: %d weight particles, want ≥ 1", o.Particles)
	case o.Steps < 0:
		return fmt.Errorf("bnn posterior: %d SVGD steps, want ≥ 0", o.Steps)
	case !(o.LR > 0) || math.IsInf(o.LR, 0):
		return fmt.Errorf("bnn posterior: learning rate %v must be positive and finite", o.LR)
	case o.Batch < 0:
		return fmt.Errorf("bnn posterior: negative batch %d", o.Batch)
	case o.AlphaSamples < 1:
		return fmt.Errorf("bnn posterior: %d samples for α, want ≥ 1", o.AlphaSamples)
	}
	return nil
}

// predictRows bounds the rows of one forward pass in prediction and in the
// many-sample estimates, which bounds their memory.
const predictRows = 256

// BNNPredictor conditions k prior particles on one client's data and
// predicts with the α-weighted mixture of their posteriors (docs/math.md §5.3):
//
//	p̂(c | x) = Σ_κ α_κ (1/M) Σ_s softmax(h_{θ_{κ,s}}(x))_c,  α = softmax_κ(ln Z̃_κ).
//
// Fit once, then Predict as often as needed. Not safe for concurrent use.
type BNNPredictor struct {
	model BNN
	opt   BNNPosteriorOptions
	est   *BNNEstimator // M samples: its network runs the SVGD particles too
	nw    int

	k      int
	thetas []float64 // k × M × |θ|: the fitted weight particles
	logZ   []float64 // k
	alpha  []float64 // k

	// Fit scratch.
	scores []float64 // M × |θ|
	invVar []float64 // e^{−ω} of the prior being fitted
	perm   []int
	bx, by []float64
	zeros  []float64 // placeholder labels for prediction
}

// NewBNNPredictor returns a predictor for model; opt sets the network's
// BLAS and workers (Workers 1 and a single-threaded BLAS when predictors run
// concurrently).
func NewBNNPredictor(model BNN, po BNNPosteriorOptions, opt conv.Options) (*BNNPredictor, error) {
	if err := po.Validate(); err != nil {
		return nil, err
	}
	po = po.WithDefaults()
	est, err := NewBNNEstimator(model, po.Particles, opt)
	if err != nil {
		return nil, err
	}
	nw := est.nw
	return &BNNPredictor{model: est.model, opt: po, est: est, nw: nw,
		scores: make([]float64, po.Particles*nw), invVar: make([]float64, nw)}, nil
}

// Alpha returns the mixture weights α_κ of the last Fit.
func (p *BNNPredictor) Alpha() []float64 { return p.alpha }

// LogZ returns the estimates ln Z̃_κ of the last Fit.
func (p *BNNPredictor) LogZ() []float64 { return p.logZ }

// Particles returns the fitted weight particles of prior κ (M×|θ|, a view).
func (p *BNNPredictor) Particles(κ int) []float64 {
	sz := p.opt.Particles * p.nw
	return p.thetas[κ*sz : (κ+1)*sz]
}

// Fit runs, for each prior particle φ_κ (row κ of the k×dφ matrix phis),
// SVGD over M weight particles drawn from P_φκ on the data X (m×D), y, and
// estimates ln Z_κ with AlphaSamples weight samples for the mixture weights.
// All randomness comes from rng.
func (p *BNNPredictor) Fit(phis, X, y []float64, rng *rand.Rand) error {
	dphi := 2 * p.nw
	if len(phis) == 0 || len(phis)%dphi != 0 {
		return fmt.Errorf("bnn posterior: particle matrix has %d values, not a positive multiple of dφ = %d", len(phis),
			dphi)
	}
	if err := p.model.CheckData(X, y); err != nil {
		return err
	}
	k, M := len(phis)/dphi, p.opt.Particles
	if p.k != k {
		p.k = k
		p.thetas = make([]float64, k*M*p.nw)
		p.logZ = make([]float64, k)
		p.alpha = make([]float64, k)
	}
	for κ := range k {
		phi := phis[κ*dphi : (κ+1)*dphi]
		lz, err := p.est.LogZ(phi, X, y, 1, Loss{}, p.opt.AlphaSamples, rng)
		if err != nil {
			return fmt.Errorf("prior %d: ln Z: %w", κ, err)
		}
		p.logZ[κ] = lz
		if err := p.svgd(phi, p.Particles(κ), X, y, rng); err != nil {
			return fmt.Errorf("prior %d: %w", κ, err)
		}
	}
	lse := logSumExp(p.logZ)
	for κ, v := range p.logZ {
		p.alpha[κ] = math.Exp(v - lse)
	}
	return nil
}

// svgd initialises the M particles theta (M×|θ|) from P_φ and runs the
// SVGD steps.
func (p *BNNPredictor) svgd(phi, theta, X, y []float64, rng *rand.Rand) error {
	nw, M := p.nw, p.opt.Particles
	mu, omega := phi[:nw], phi[nw:]
	for s := range M {
		th := theta[s*nw : (s+1)*nw]
		for i := range th {
			th[i] = mu[i] + math.Exp(0.5*omega[i])*rng.NormFloat64()
		}
	}
	if p.opt.Steps == 0 {
		return nil
	}
	for i, w := range omega {
		p.invVar[i] = math.Exp(-w)
	}
	sv, err := svgd.New(M, nw)
	if err != nil {
		return err
	}
	adam := svgd.NewAdam(p.opt.LR)
	m := len(y)
	b := min(p.opt.Batch, m)
	scale := float64(m) / float64(b)
	for s := range M {
		p.est.coef[s] = scale
	}
	nn := p.est.nn
	for range p.opt.Steps {
		bx, by := X, y
		if b < m {
			bx, by = p.sample(X, y, b, rng)
		}
		for s := range M {
			nn.setWeights(s, theta[s*nw:(s+1)*nw])
		}
		if err := nn.load(bx, by); err != nil {
			return err
		}
		if err := nn.forward(Loss{}); err != nil {
			return err
		}
		if err := nn.backward(p.est.coef[:M]); err != nil {
			return err
		}
		for s := range M {
			sc := p.scores[s*nw : (s+1)*nw]
			th := theta[s*nw : (s+1)*nw]
			// ∇ ln P_φ(θ) = −(θ − μ) e^{−ω}.
			for i := range sc {
				sc[i] = -(th[i] - mu[i]) * p.invVar[i]
			}
			nn.addWeightGrad(s, 1, sc)
		}
		if err := sv.Step(theta, p.scores, adam); err != nil {
			return err
		}
	}
	return nil
}

// sample draws b of the m rows uniformly without replacement (partial
// Fisher–Yates from the identity, so the batch depends only on rng).
func (p *BNNPredictor) sample(X, y []float64, b int, rng *rand.Rand) (bx, by []float64) {
	m, d := len(y), p.model.D()
	if len(p.perm) != m {
		p.perm = make([]int, m)
	}
	if len(p.by) < b {
		p.bx = make([]float64, b*d)
		p.by = make([]float64, b)
	}
	for i := range p.perm {
		p.perm[i] = i
	}
	for i := range b {
		j := i + rng.IntN(m-i)
		p.perm[i], p.perm[j] = p.perm[j], p.perm[i]
		r := p.perm[i]
		copy(p.bx[i*d:(i+1)*d], X[r*d:(r+1)*d])
		p.by[i] = y[r]
	}
	return p.bx[:b*d], p.by[:b]
}

// Predict writes the mixture's class probabilities for the n rows of X
// (n×D) into probs (n×C, row-major); each is at least ProbFloor (so its
// logarithm is finite) and each row sums to 1.
func (p *BNNPredictor) Predict(X, probs []float64) error {
	if p.k == 0 {
		return fmt.Errorf("bnn posterior: Predict before Fit")
	}
	d, C, M, nw := p.model.D(), p.model.Classes, p.opt.Particles, p.nw
	if len(X)%d != 0 || len(X) == 0 {
		return fmt.Errorf("bnn posterior: %d input values are not rows of %d features", len(X), d)
	}
	n := len(X) / d
	if len(probs) != n*C {
		return fmt.Errorf("bnn posterior: probability buffer has %d values, want %d×%d", len(probs), n, C)
	}
	clear(probs)
	nn := p.est.nn
	if len(p.zeros) < min(n, predictRows) {
		p.zeros = make([]float64, min(n, predictRows))
	}
	zeros := p.zeros
	for κ := range p.k {
		th := p.Particles(κ)
		for s := range M {
			nn.setWeights(s, th[s*nw:(s+1)*nw])
		}
		w := p.alpha[κ] / float64(M)
		for r0 := 0; r0 < n; r0 += predictRows {
			r1 := min(n, r0+predictRows)
			if err := nn.load(X[r0*d:r1*d], zeros[:r1-r0]); err != nil {
				return err
			}
			lp, err := nn.logProbs()
			if err != nil {
				return err
			}
			for i := range r1 - r0 {
				dst := probs[(r0+i)*C : (r0+i+1)*C]
				for s := range M {
					for c, v := range lp[(i*M+s)*C : (i*M+s+1)*C] {
						if math.IsNaN(v) || math.IsInf(v, 1) {
							return fmt.Errorf("bnn posterior: prior %d, weight particle %d: log-probability %v at "+
								"test row %d (non-finite weights? lower the posterior learning rate)", κ, s, v, r0+i)
						}
						dst[c] += w * math.Exp(v)
					}
				}
			}
		}
	}
	floorProbs(probs, C)
	return nil
}

// ProbFloor is the smallest class probability Predict returns: a softmax
// far in its tail underflows to exactly 0, and −ln 0 = +Inf would make any
// log-loss or cross-entropy of the predictive infinite (or NaN in 0·ln 0
// sums). Every probability below it is raised to it and the mass added is
// taken from the row's largest probability (at least 1/C), so a row still
// sums to 1, the predicted class is unchanged and no probability moves by
// more than C·ProbFloor.
const ProbFloor = 1e-15

// floorProbs raises every entry of the rows (n×C) of probs to ProbFloor,
// taking the mass added from the row's largest entry.
func floorProbs(probs []float64, C int) {
	for r := 0; r < len(probs); r += C {
		row := probs[r : r+C]
		best, added := 0, 0.0
		for c, v := range row {
			if v > row[best] {
				best = c
			}
			if v < ProbFloor {
				added += ProbFloor - v
				row[c] = ProbFloor
			}
		}
		row[best] -= added
	}
}

// LogZ estimates ln Z^C = ln E_{θ∼P_φ} exp(−scale·Σ_i ℓ(θ, z_i)) on all of X
// (m×D), y with n weight samples (drawn in chunks of the estimator's L, the
// rows in chunks of 256): LSE_j(s_j) − ln n, s_j = −scale Σ_i ℓ(θ_j, z_i).
// With scale 1 and the NLL it is the LML estimate (38) of the data.
func (e *BNNEstimator) LogZ(phi, X, y []float64, scale float64, loss Loss, n int, rng *rand.Rand) (float64, error) {
	if err := e.check(phi, nil, scale); err != nil {
		return 0, err
	}
	if err := loss.validate(); err != nil {
		return 0, err
	}
	if n < 1 {
		return 0, fmt.Errorf("bnn: %d weight samples, want ≥ 1", n)
	}
	m, d := len(y), e.model.D()
	if m == 0 || len(X) != m*d {
		return 0, fmt.Errorf("bnn: %d input values for %d labels, want %d×%d", len(X), m, m, d)
	}
	zs := make([]float64, 0, n)
	acc := make([]float64, e.L)
	e.phi, e.draw = phi, true
	defer func() { e.phi = nil }()
	for len(zs) < n {
		for i := range e.segs {
			e.segs[i].src.Seed(rng.Uint64(), rng.Uint64())
		}
		e.pass(estPrepare)
		clear(acc)
		for r0 := 0; r0 < m; r0 += predictRows {
			r1 := min(m, r0+predictRows)
			if err := e.nn.load(X[r0*d:r1*d], y[r0:r1]); err != nil {
				return 0, err
			}
			if err := e.nn.forward(loss); err != nil {
				return 0, err
			}
			for j, v := range e.nn.ll {
				acc[j] += v
			}
		}
		for j := 0; j < e.L && len(zs) < n; j++ {
			zs = append(zs, scale*acc[j])
		}
	}
	lse := logSumExp(zs)
	if math.IsNaN(lse) || math.IsInf(lse, 0) {
		return 0, fmt.Errorf("bnn: ln Z estimate is %v", lse)
	}
	return lse - math.Log(float64(n)), nil
}

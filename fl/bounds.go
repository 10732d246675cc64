package fl

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// Upsilon is υ of Theorem 4.2: a tiny constant that keeps the bound defined
// when no client has personalisation-only data (n₂ = 0).
const Upsilon = 1e-4

// BoundConfig holds the constants of the PAC-Bayesian bounds (docs/math.md §1.3).
type BoundConfig struct {
	A, B    float64 // loss range [a, b] (the NLL is clipped to it)
	Delta   float64 // confidence δ ∈ (0, 1)
	Beta    float64 // client temperature β (we use β = min_i m_i)
	Tau     float64 // server temperature τ ∈ (1/(1+nβ), 1)
	Upsilon float64 // υ > 0 (0 → Upsilon)
	M       []int   // m_i, existing clients
	MTilde  []int   // m̃_i (nil → all zero)
}

func (c *BoundConfig) upsilon() float64 {
	if c.Upsilon > 0 {
		return c.Upsilon
	}
	return Upsilon
}

// N2 is the number of clients with m̃_i > 0.
func (c *BoundConfig) N2() int {
	n := 0
	for _, v := range c.MTilde {
		if v > 0 {
			n++
		}
	}
	return n
}

// Lambda inverts τ = λ/(λ + βn(n₂+υ)): λ = τβn(n₂+υ)/(1−τ).
func (c *BoundConfig) Lambda() float64 {
	n := float64(len(c.M))
	return c.Tau * c.Beta * n * (float64(c.N2()) + c.upsilon()) / (1 - c.Tau)
}

// TauFromLambda is τ = λ/(λ + βn(n₂+υ)) (Corollary 4.4).
func TauFromLambda(lambda, beta float64, n, n2 int, upsilon float64) float64 {
	return lambda / (lambda + beta*float64(n)*(float64(n2)+upsilon))
}

// Validate checks the assumptions of Theorem 4.2 / Lemma 4.6.
func (c *BoundConfig) Validate() error {
	n := len(c.M)
	switch {
	case n == 0:
		return errors.New("bounds: no clients")
	case !(c.B > c.A) || math.IsInf(c.A, 0) || math.IsInf(c.B, 0):
		return fmt.Errorf("bounds: loss range [%v, %v] must be finite with a < b", c.A, c.B)
	case !(c.Delta > 0 && c.Delta < 1):
		return fmt.Errorf("bounds: δ = %v must lie in (0, 1)", c.Delta)
	case !(c.Beta >= 1/float64(n)) || math.IsInf(c.Beta, 0):
		return fmt.Errorf("bounds: β = %v must be ≥ 1/n = %v", c.Beta, 1/float64(n))
	case c.MTilde != nil && len(c.MTilde) != n:
		return fmt.Errorf("bounds: %d m̃_i for %d clients", len(c.MTilde), n)
	}
	if lo := 1 / (1 + float64(n)*c.Beta); !(c.Tau > lo && c.Tau < 1) {
		// λ > n₂+υ ⇔ τ = λ/(λ+βn(n₂+υ)) > 1/(1+nβ), whatever n₂.
		return fmt.Errorf("bounds: τ = %v must lie in (%v, 1) (equivalently λ > n₂+υ)", c.Tau, lo)
	}
	for i, m := range c.M {
		if m < 1 {
			return fmt.Errorf("bounds: client %d has m_i = %d", i, m)
		}
	}
	// A range so wide that (b−a)² overflows makes every bound +Inf (or
	// NaN): refuse it before any work rather than report an infinite bound.
	for _, v := range []float64{c.serverConstants(), c.newClientConstants()} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("bounds: loss range [%v, %v] is too wide: the bounds' (b−a)² terms overflow (%v); give "+
				"the range of the clipped loss, e.g. -10,10", c.A, c.B, v)
		}
	}
	return nil
}

// Deltas returns Δ_i of Theorem 4.2: (1/n) times a bound on how far adding
// S̃_i can move client i's expected loss, with x = 2βm̃_i(b−a)/(m_i+m̃_i)
// bounding the log density ratio of the two Gibbs posteriors (both ways).
// A density ratio within [e^{−x}, e^{x}] keeps the total variation below
// tanh(x/2), so the expectations of a loss in [a, b] differ by at most
// (b−a)·tanh(x/2), valid for every range. The paper's b·(e^x − e^{−x})
// assumes 0 ≤ ℓ ≤ b; it is used too (the smaller wins) only when a ≥ 0.
func (c *BoundConfig) Deltas() []float64 {
	n := float64(len(c.M))
	d := make([]float64, len(c.M))
	for i, m := range c.M {
		mt := 0
		if c.MTilde != nil {
			mt = c.MTilde[i]
		}
		if mt == 0 {
			continue
		}
		x := 2 * c.Beta * float64(mt) / float64(m+mt) * (c.B - c.A)
		v := (c.B - c.A) * math.Tanh(x/2)
		if c.A >= 0 {
			v = math.Min(v, c.B*(math.Exp(x)-math.Exp(-x)))
		}
		d[i] = v / n
	}
	return d
}

// Epsilons returns ε_i = 2βτ(b−a)/m_i of Lemma 4.5 (the DP level of sampling
// from the exact Gibbs hyper-posterior 𝒬*).
func (c *BoundConfig) Epsilons() []float64 {
	e := make([]float64, len(c.M))
	for i, m := range c.M {
		e[i] = 2 * c.Beta * c.Tau * (c.B - c.A) / float64(m)
	}
	return e
}

// Bounds are the two PAC-Bayesian bounds at the Gibbs hyper-posterior 𝒬*
// together with the quantities they are made of.
type Bounds struct {
	LogZS       float64 `json:"log_zs"`        // estimate of ln Z^S_τ(𝒫, S)
	Server      float64 `json:"server"`        // Theorem 4.2 at 𝒬 = 𝒬*
	NewClient   float64 `json:"new_client"`    // Lemma 4.6
	Lambda      float64 `json:"lambda"`        // λ implied by τ
	EpsilonMax  float64 `json:"epsilon_gibbs"` // max_i ε_i of Lemma 4.5
	A           float64 `json:"loss_a"`
	B           float64 `json:"loss_b"`
	Delta       float64 `json:"delta"`
	Samples     int     `json:"hyperprior_samples"`
	Description string  `json:"description"`
}

// Evaluate returns both bounds given ln Z^S_τ.
//
// Server (9) at 𝒬*: its first two terms equal −(1/(nβτ)) ln Z^S_τ (eqs. 31-32), so
//
//	B_S = −ln Z^S/(nβτ) + β(b−a)²/(8n) Σ 1/m_i + λ Σ Δ_i²/(8(n₂+υ)) + ln(1/δ)/√n.
//
// New client (Lemma 4.6), with c_KL = 1/(nβ) + (n₂+υ)/λ = 1/(nβτ):
//
//	B_N = −c_KL ln Z^S + (b−a)²/(8n) (β Σ 1/m_i + λ/(n₂+υ)) + ln(1/δ)/√n.
func (c *BoundConfig) Evaluate(logZS float64) (Bounds, error) {
	if err := c.Validate(); err != nil {
		return Bounds{}, err
	}
	// The loss is clipped to [a, b], so ln Z^S is finite; a NaN or ±Inf here
	// is a failed estimate and would print as a NaN or ∓Inf "bound".
	if math.IsNaN(logZS) || math.IsInf(logZS, 0) {
		return Bounds{}, fmt.Errorf("bounds: ln Z^S = %v is not finite", logZS)
	}
	lambda := c.Lambda()
	cKL := c.klWeight()
	b := Bounds{
		LogZS:     logZS,
		Server:    -logZS*cKL + c.serverConstants(),
		NewClient: -cKL*logZS + c.newClientConstants(),
		Lambda:    lambda, A: c.A, B: c.B, Delta: c.Delta,
	}
	for _, e := range c.Epsilons() {
		b.EpsilonMax = math.Max(b.EpsilonMax, e)
	}
	return b, nil
}

// klWeight is the factor of KL(𝒬‖𝒫) in (9), c_KL = 1/(nβ) + (n₂+υ)/λ
// (= 1/(nβτ) with λ from τ).
func (c *BoundConfig) klWeight() float64 {
	return 1/(float64(len(c.M))*c.Beta) + (float64(c.N2())+c.upsilon())/c.Lambda()
}

// serverConstants are the terms of (9) that depend on neither 𝒬 nor the
// data: β(b−a)²/(8n) Σ 1/m_i + λ Σ Δ_i²/(8(n₂+υ)) + ln(1/δ)/√n.
func (c *BoundConfig) serverConstants() float64 {
	n := float64(len(c.M))
	var invM, sumD2 float64
	for _, m := range c.M {
		invM += 1 / float64(m)
	}
	for _, d := range c.Deltas() {
		sumD2 += d * d
	}
	ba := c.B - c.A
	return c.Beta*ba*ba/(8*n)*invM + c.Lambda()*sumD2/(8*(float64(c.N2())+c.upsilon())) +
		math.Log(1/c.Delta)/math.Sqrt(n)
}

// newClientConstants are the terms of Lemma 4.6 that do not depend on the
// data: (b−a)²/(8n) (β Σ 1/m_i + λ/(n₂+υ)) + ln(1/δ)/√n.
func (c *BoundConfig) newClientConstants() float64 {
	n := float64(len(c.M))
	var invM float64
	for _, m := range c.M {
		invM += 1 / float64(m)
	}
	ba := c.B - c.A
	return ba*ba/(8*n)*(c.Beta*invM+c.Lambda()/(float64(c.N2())+c.upsilon())) + math.Log(1/c.Delta)/math.Sqrt(n)
}

// PriorSampler draws prior parameters φ from the hyper-prior 𝒫.
type PriorSampler interface {
	Dim() int
	Sample(dst []float64, rng *rand.Rand)
}

// LogZCFunc returns ln Z^C_β(P_φ, S_i) for existing client i with the loss
// clipped to [a, b]; it may use rng for a Monte Carlo estimate.
type LogZCFunc func(phi []float64, client int, rng *rand.Rand) (float64, error)

// EstimateLogZS estimates ln Z^S_τ(𝒫, S) = ln E_{P∼𝒫} exp(τ Σ_i ln Z^C_β(P, S_i))
// by Monte Carlo over N hyper-prior draws with log-sum-exp:
// LSE_j(τ Σ_i ln Z^C(P_j, S_i)) − ln N (our choice, docs/math.md §1.3). The estimate is biased
// low in expectation (Jensen), which makes the bounds conservative.
func EstimateLogZS(prior PriorSampler, nSamples, nClients int, tau float64, lnZC LogZCFunc,
	rng *rand.Rand) (float64, error) {
	if nSamples < 1 || nClients < 1 {
		return 0, fmt.Errorf("bounds: need ≥ 1 hyper-prior sample and client, got %d and %d", nSamples, nClients)
	}
	phi := make([]float64, prior.Dim())
	terms := make([]float64, nSamples)
	for j := range terms {
		prior.Sample(phi, rng)
		s := 0.0
		for i := 0; i < nClients; i++ {
			v, err := lnZC(phi, i, rng)
			if err != nil {
				return 0, fmt.Errorf("bounds: ln Z^C for client %d: %w", i, err)
			}
			s += v
		}
		terms[j] = tau * s
	}
	lse := LogSumExp(terms)
	if math.IsNaN(lse) || math.IsInf(lse, 1) {
		return 0, fmt.Errorf("bounds: ln Z^S estimate is %v", lse)
	}
	return lse - math.Log(float64(nSamples)), nil
}

// LogSumExp is ln Σ exp(x_j), computed stably.
func LogSumExp(x []float64) float64 {
	mx := math.Inf(-1)
	for _, v := range x {
		if math.IsNaN(v) {
			return math.NaN()
		}
		mx = math.Max(mx, v)
	}
	if math.IsInf(mx, 0) {
		return mx
	}
	s := 0.0
	for _, v := range x {
		s += math.Exp(v - mx)
	}
	return mx + math.Log(s)
}

// ClippedGaussianLogZ estimates ln Z^C_β with the Gaussian NLL clipped to
// [a, b] for a GP prior whose noise-free function values at the m client
// inputs are N(mean, cov) (cov given by its lower Cholesky factor L, m×m
// row-major) and whose noise std is sigma:
//
//	ln Z^C ≈ LSE_s(−(β/m) Σ_j clip(−ln N(y_j | f_sj, σ²), a, b)) − ln S,  f_s ∼ N(mean, LLᵀ).
//
// With β = m this is the log marginal likelihood of the clipped loss.
func ClippedGaussianLogZ(y, mean, chol []float64, sigma, beta, a, b float64, nSamples int,
	rng *rand.Rand) (float64, error) {
	m := len(y)
	if len(mean) != m || len(chol) != m*m {
		return 0, fmt.Errorf("bounds: %d targets, %d means, %d Cholesky entries", m, len(mean), len(chol))
	}
	if !(sigma > 0) || nSamples < 1 {
		return 0, fmt.Errorf("bounds: need σ > 0 and ≥ 1 sample, got σ=%v samples=%d", sigma, nSamples)
	}
	z := make([]float64, m)
	terms := make([]float64, nSamples)
	c0 := 0.5 * math.Log(2*math.Pi*sigma*sigma)
	for s := range terms {
		for j := range z {
			z[j] = rng.NormFloat64()
		}
		loss := 0.0
		for j := 0; j < m; j++ {
			f := mean[j]
			row := chol[j*m : j*m+j+1]
			for l, v := range row {
				f += v * z[l]
			}
			r := (y[j] - f) / sigma
			// clip to [a, b] by comparisons: math.Max and math.Min, with
			// their signed-zero cases, were a tenth of this estimator, and
			// give the same sum (a NaN stays NaN either way).
			l := c0 + 0.5*r*r
			if l < a {
				l = a
			}
			if l > b {
				l = b
			}
			loss += l
		}
		terms[s] = -beta / float64(m) * loss
	}
	return LogSumExp(terms) - math.Log(float64(nSamples)), nil
}

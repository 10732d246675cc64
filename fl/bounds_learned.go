package fl

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/svgd"
)

// LearnedBoundOptions configure the bound of Theorem 4.2 for the trained
// hyper-posterior (docs/math.md, "Bounds for the trained hyper-posterior").
type LearnedBoundOptions struct {
	// Widths are the candidate component scales s, as multiples of the
	// hyper-prior std; the smallest bound over them is reported (each is
	// a valid bound, and the Monte Carlo term pays a union bound over the
	// candidates). Empty: DefaultLearnedWidths.
	Widths []float64
	// Samples is the number N of draws from 𝒬 per width (rounded up to a
	// multiple of k); 0 means DefaultLearnedSamples.
	Samples int
	// DeltaSampling is δ' of the Monte Carlo term; 0 means 0.01. The bound
	// then holds with probability ≥ 1 − δ − δ'.
	DeltaSampling float64
	Seed          uint64
}

// Defaults of LearnedBoundOptions.
var DefaultLearnedWidths = []float64{0.1, 0.3, 0.5, 0.7}

const DefaultLearnedSamples = 200

// LearnedBound is Theorem 4.2 evaluated at the trained hyper-posterior
// 𝒬 = (1/k) Σ_κ Lap(φ_κ, s·σ_𝒫): a mixture of product-Laplace
// distributions centred on the k particles.
type LearnedBound struct {
	Server float64 `json:"server"`
	// The terms: Server = EmpiricalTerm + SamplingTerm + KLWeight·KL + Constants.
	EmpiricalTerm float64 `json:"empirical_term"` // Monte Carlo mean of −(1/(nβ)) Σ_i ln Z^C_β(P, S_i), P ∼ 𝒬
	SamplingTerm  float64 `json:"sampling_term"`  // Hoeffding: (b−a)·√(ln(G/δ')/(2N))
	KL            float64 `json:"kl"`             // upper bound on KL(𝒬‖𝒫): mean of the components' KLs
	KLWeight      float64 `json:"kl_weight"`      // 1/(nβ) + (n₂+υ)/λ
	Constants     float64 `json:"constants"`      // β(b−a)²/(8n)Σ1/m_i + λΣΔ_i²/(8(n₂+υ)) + ln(1/δ)/√n
	Width         float64 `json:"width"`          // the chosen s (× σ_𝒫)
	Samples       int     `json:"samples"`        // N
	A             float64 `json:"loss_a"`
	B             float64 `json:"loss_b"`
	Delta         float64 `json:"delta"`
	DeltaSampling float64 `json:"delta_sampling"`
	Description   string  `json:"description"`
}

// EvaluateLearned returns Theorem 4.2's bound (9) for the hyper-posterior
// 𝒬 = (1/k) Σ_κ Lap(φ_κ, s·σ_𝒫) around the trained particles (k×d,
// row-major), for the best width s of o.Widths.
//
// Each term of (9) is made computable:
//   - KL(𝒬‖𝒫) ≤ (1/k) Σ_κ KL(Lap(φ_κ, s·σ) ‖ N(μ, σ²)) by the joint convexity
//     of KL (a mixture against the same 𝒫), each in closed form per
//     coordinate: −ln(2b) − 1 + ½ ln(2πσ²) + ((φ−μ)² + 2b²)/(2σ²), b = sσ.
//   - −(1/(nβ)) Σ_i E_{P∼𝒬} ln Z^C_β(P, S_i): each draw X_j of it lies in
//     [a, b] (the loss is clipped), so with N independent draws (N/k from
//     each component) Hoeffding's inequality gives, with probability
//     ≥ 1 − δ'/G per width, E ≤ mean(X) + (b−a)√(ln(G/δ')/(2N)). lnZC
//     itself may be a Monte Carlo estimate of ln Z^C; it must not be biased
//     upwards in expectation (ln of an unbiased estimate of Z^C is biased
//     downwards, which keeps the bound valid).
//
// The theorem holds simultaneously for all 𝒬 whose sampling is ε-DP for a
// finite ε; the caller checks that (see learnedBoundCondition). lnZC is
// called concurrently from several goroutines.
func (c *BoundConfig) EvaluateLearned(particles []float64, k int, prior *svgd.Gaussian, lnZC LogZCFunc,
	o LearnedBoundOptions) (LearnedBound, error) {
	if err := c.Validate(); err != nil {
		return LearnedBound{}, err
	}
	d := prior.Dim()
	if k < 1 || len(particles) != k*d {
		return LearnedBound{},
			fmt.Errorf("bounds: %d particle values for k = %d particles of dimension %d", len(particles), k, d)
	}
	widths := o.Widths
	if len(widths) == 0 {
		widths = DefaultLearnedWidths
	}
	for _, w := range widths {
		if !(w > 0) || math.IsInf(w, 0) {
			return LearnedBound{}, fmt.Errorf("bounds: component width %v must be positive and finite", w)
		}
	}
	N := o.Samples
	if N == 0 {
		N = DefaultLearnedSamples
	}
	if N < 1 {
		return LearnedBound{}, fmt.Errorf("bounds: %d samples from the hyper-posterior", N)
	}
	N = (N + k - 1) / k * k
	dS := o.DeltaSampling
	if dS == 0 {
		dS = 0.01
	}
	if !(dS > 0 && dS < 1) {
		return LearnedBound{}, fmt.Errorf("bounds: δ' = %v must lie in (0, 1)", dS)
	}
	n := len(c.M)
	ba := c.B - c.A
	G := float64(len(widths))
	best := LearnedBound{Server: math.Inf(1)}
	for wi, w := range widths {
		kl := mixtureLaplaceKL(particles, k, prior, w)
		xs := make([]float64, N)
		err := parallelFor(N, func(j int) error {
			rng := rand.New(rand.NewPCG(o.Seed, data.StreamID(0x6c6561726e, uint64(wi), uint64(j))))
			phi := make([]float64, d)
			κ := j % k
			for i := range phi {
				phi[i] = particles[κ*d+i] + laplace(rng, w*prior.Std[i])
			}
			s := 0.0
			for i := 0; i < n; i++ {
				v, err := lnZC(phi, i, rng)
				if err != nil {
					return fmt.Errorf("ln Z^C of client %d: %w", i, err)
				}
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return fmt.Errorf("ln Z^C of client %d is %v", i, v)
				}
				s += v
			}
			xs[j] = -s / (float64(n) * c.Beta)
			return nil
		})
		if err != nil {
			return LearnedBound{}, fmt.Errorf("bounds: hyper-posterior sample: %w", err)
		}
		// Summation in index order: independent of the worker count.
		emp := 0.0
		for _, x := range xs {
			emp += x
		}
		emp /= float64(N)
		lb := LearnedBound{
			EmpiricalTerm: emp,
			SamplingTerm:  ba * math.Sqrt(math.Log(G/dS)/(2*float64(N))),
			KL:            kl,
			KLWeight:      c.klWeight(),
			Constants:     c.serverConstants(),
			Width:         w, Samples: N, A: c.A, B: c.B, Delta: c.Delta, DeltaSampling: dS,
		}
		lb.Server = lb.EmpiricalTerm + lb.SamplingTerm + lb.KLWeight*lb.KL + lb.Constants
		if lb.Server < best.Server {
			best = lb
		}
	}
	if math.IsNaN(best.Server) || math.IsInf(best.Server, 0) {
		return LearnedBound{}, errors.New("bounds: the learned hyper-posterior bound is not finite")
	}
	ws := append([]float64(nil), widths...)
	sort.Float64s(ws)
	best.Description = fmt.Sprintf("Theorem 4.2 for the trained hyper-posterior 𝒬 = uniform mixture of "+
		"product-Laplace distributions of scale %g·σ_𝒫 around the %d particles (best of widths %v), with probability "+
		"≥ 1 − δ − δ' = %g; KL(𝒬‖𝒫) bounded by convexity, E_𝒬 ln Z^C from %d draws with a Hoeffding term",
		best.Width, k, ws, 1-c.Delta-dS, N)
	return best, nil
}

// mixtureLaplaceKL is (1/k) Σ_κ KL(Lap(φ_κ, w·σ) ‖ N(μ, σ²)), coordinate by
// coordinate, an upper bound on KL(𝒬‖𝒫) for the uniform mixture 𝒬.
func mixtureLaplaceKL(particles []float64, k int, prior *svgd.Gaussian, w float64) float64 {
	d := prior.Dim()
	total := 0.0
	for κ := 0; κ < k; κ++ {
		for i := 0; i < d; i++ {
			sd := prior.Std[i]
			b := w * sd
			dm := particles[κ*d+i] - prior.Mean[i]
			total += -math.Log(2*b) - 1 + 0.5*math.Log(2*math.Pi*sd*sd) + (dm*dm+2*b*b)/(2*sd*sd)
		}
	}
	return total / float64(k)
}

// adamStepBound is the largest factor by which one step of svgd.Adam with
// moment constants β1, β2 (β1² < β2) can move a coordinate, in units of its
// learning rate, whatever the gradients: |m̂_t|/√v̂_t ≤
// (1−β1)/(1−β1ᵗ) · √((1−β2ᵗ)/(1−β2)) · 1/√(1−β1²/β2) by Cauchy–Schwarz on
// the two exponential averages, maximised over t (the ε of Adam only
// shrinks the step). 7.27 for PyTorch's (0.9, 0.999).
func adamStepBound(beta1, beta2 float64) float64 {
	r := 1 / math.Sqrt(1-beta1*beta1/beta2)
	best := 0.0
	b1t, b2t := 1.0, 1.0
	for t := 1; t <= 1_000_000; t++ {
		b1t *= beta1
		b2t *= beta2
		v := (1 - beta1) / (1 - b1t) * math.Sqrt((1-b2t)/(1-beta2)) * r
		if v > best {
			best = v
		} else if b1t < 1e-300 && b2t < 1e-300 {
			break
		}
	}
	return best
}

// learnedBoundCondition says why sampling P from a mixture of Laplace
// components of scale w·σ_𝒫 around the trained particles is ε-DP for a
// finite ε, which Theorem 4.2 assumes (the value of ε does not enter the
// bound), or returns an error when that is not established.
func learnedBoundCondition(cfg Config, prior *svgd.Gaussian, w float64) (string, error) {
	if cfg.DP != nil && cfg.DP.mechanism() != DPGaussian {
		return "the particles are pure ε-DP (" + string(cfg.DP.mechanism()) +
			" mechanism), so sampling around them is too", nil
	}
	if cfg.Optimizer == "sgd" {
		return "", errors.New("not available: plain-ascent SVGD steps are unbounded, so sampling from the trained " +
			"hyper-posterior has no finite DP level (Theorem 4.2's assumption); train with Adam or with " +
			"--dp-mechanism laplace")
	}
	// Neighbouring runs start from the same data-free particles and each of
	// T Adam steps moves a coordinate by at most C·η.
	move := 2 * adamStepBound(0.9, 0.999) * cfg.LR * float64(cfg.Rounds)
	eps := 0.0
	for _, sd := range prior.Std {
		eps += move / (w * sd)
	}
	return fmt.Sprintf("finite DP level: Adam moves a coordinate by at most %.3g·η per step, so neighbouring runs' "+
		"particles differ by ≤ %.3g per coordinate and the Laplace components make sampling ε-DP with ε ≤ %.3g",
		adamStepBound(0.9, 0.999), move, eps), nil
}

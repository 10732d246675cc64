package fl

import (
	crand "crypto/rand"
	"fmt"
	"math"
	"math/rand/v2"
)

// DPMechanism names a differentially private aggregation of the clients'
// updates (Algorithm 3 and its corrections; derivation in docs/math.md §2.3).
//
// The neighbouring relation is the paper's Def. 3.1: two federations that
// differ in one sample of one client's training set S_i. Every mechanism
// here clips each client's whole update before averaging, so the bound on
// how far one client can move the average holds whatever changed in that
// client's data: the guarantee also covers replacing a client's entire
// training set. It protects the released particles (the trained
// hyper-posterior) and everything computed from them alone; the per-round
// mean ln Z^C that Result.MeanLML records is computed from the raw updates
// and is not covered.
type DPMechanism string

const (
	// DPLaplace (default): each client's k×dφ update is clipped to L1 norm
	// γ, so replacing one client's data moves the mean of the c clipped
	// updates by at most 2γ/c in L1; Laplace noise of scale 2Tγ/(εc) per
	// coordinate makes each round (ε/T)-DP and the T rounds ε-DP by basic
	// composition (pure ε-DP, δ = 0).
	DPLaplace DPMechanism = "laplace"
	// DPGaussian: the whole update is clipped to L2 norm γ (sensitivity
	// 2γ/c in L2) and Gaussian noise of std z·2γ/c is added, z chosen so
	// that the T-fold composition is (ε, δ)-DP by Rényi-DP accounting:
	// RDP(α) = Tα/(2z²), ε(δ) = min_α RDP(α) + ln(1/δ)/(α−1). Its noise
	// grows like √T instead of T.
	DPGaussian DPMechanism = "gaussian"
	// DPPaper is Algorithm 3 as printed: each particle row clipped to L2
	// norm γ, Laplace noise of scale Tγ/(εc). Laplace noise needs an L1
	// sensitivity, which row-wise L2 clipping does not bound by γ/c: the
	// nominal ε is not a guarantee. The level that does hold is
	// 2k·√dφ·ε (Privacy reports it).
	DPPaper DPMechanism = "paper"
)

// DPMechanisms lists the mechanisms in the order they are documented.
var DPMechanisms = []DPMechanism{DPLaplace, DPGaussian, DPPaper}

// DPConfig switches on differentially private training (Algorithm 3).
type DPConfig struct {
	Mechanism DPMechanism // "" means DPLaplace
	Epsilon   float64     // target ε (DPPaper: the nominal ε of the paper)
	Delta     float64     // DPGaussian only: δ ∈ (0, 1) of (ε, δ)-DP
	Clip      float64     // γ, the clip norm of a client's update
	// Noise is the source of the privacy noise. nil draws a fresh secret
	// seed from crypto/rand for every server. A caller-supplied source makes
	// a run reproducible, and the guarantee then holds only against whoever
	// does not know its seed.
	Noise rand.Source
}

func (d *DPConfig) mechanism() DPMechanism {
	if d.Mechanism == "" {
		return DPLaplace
	}
	return d.Mechanism
}

// Validate reports the first unusable DP parameter.
func (d *DPConfig) Validate() error {
	switch d.mechanism() {
	case DPLaplace, DPPaper:
		if d.Delta != 0 {
			return fmt.Errorf("DP: δ = %v is only used by the gaussian mechanism (%s is pure ε-DP)", d.Delta,
				d.mechanism())
		}
	case DPGaussian:
		if !(d.Delta > 0 && d.Delta < 1) {
			return fmt.Errorf("DP: the gaussian mechanism needs δ in (0, 1), got %v", d.Delta)
		}
	default:
		return fmt.Errorf("DP: unknown mechanism %q (want laplace, gaussian or paper)", d.Mechanism)
	}
	if !(d.Epsilon > 0) || math.IsInf(d.Epsilon, 0) {
		return fmt.Errorf("DP: ε = %v must be positive and finite", d.Epsilon)
	}
	if !(d.Clip > 0) || math.IsInf(d.Clip, 0) {
		return fmt.Errorf("DP: clip norm γ = %v must be positive and finite", d.Clip)
	}
	return nil
}

// clip bounds one client's k×dim update in the norm the mechanism's
// sensitivity is computed in.
func (d *DPConfig) clip(g []float64, k, dim int) {
	switch d.mechanism() {
	case DPLaplace:
		ClipL1(g, d.Clip)
	case DPGaussian:
		ClipL2(g, d.Clip)
	case DPPaper:
		clipRows(g, k, dim, d.Clip)
	}
}

// Sensitivity is how far replacing one client's data can move the mean of
// the c clipped updates of a round, in the norm the noise is calibrated to
// (L1 for laplace, L2 for gaussian): 2γ/c. For DPPaper it is the L1
// sensitivity that row-wise L2 clipping really has, 2kγ√dim/c.
func (d *DPConfig) Sensitivity(c, k, dim int) float64 {
	s := 2 * d.Clip / float64(c)
	if d.mechanism() == DPPaper {
		s *= float64(k) * math.Sqrt(float64(dim))
	}
	return s
}

// NoiseScale is the scale of the per-coordinate noise added to the mean of
// the clipped updates in each of T rounds: the Laplace scale 2Tγ/(εc)
// (laplace), the Gaussian std z·2γ/c (gaussian), or the printed Tγ/(εc)
// (paper).
func (d *DPConfig) NoiseScale(rounds, c int) float64 {
	T, cc := float64(rounds), float64(c)
	switch d.mechanism() {
	case DPGaussian:
		return GaussianNoiseMultiplier(d.Epsilon, d.Delta, rounds) * 2 * d.Clip / cc
	case DPPaper:
		return T * d.Clip / (d.Epsilon * cc)
	default:
		return 2 * T * d.Clip / (d.Epsilon * cc)
	}
}

// noise draws one coordinate of the mechanism's noise at the given scale.
func (d *DPConfig) noise(rng *rand.Rand, scale float64) float64 {
	if d.mechanism() == DPGaussian {
		return scale * rng.NormFloat64()
	}
	return laplace(rng, scale)
}

// noiseSource returns the configured source, or a fresh ChaCha8 generator
// seeded from the operating system's secure random numbers.
func (d *DPConfig) noiseSource() (rand.Source, error) {
	if d.Noise != nil {
		return d.Noise, nil
	}
	var seed [32]byte
	if _, err := crand.Read(seed[:]); err != nil {
		return nil, fmt.Errorf("DP: no secure random seed for the noise: %w", err)
	}
	return rand.NewChaCha8(seed), nil
}

// Privacy is the differential-privacy level of a training run and what it
// is a guarantee of.
type Privacy struct {
	Mechanism DPMechanism `json:"mechanism,omitempty"`
	// Epsilon and Delta are the guarantee that holds: (ε, δ)-DP of the
	// released particles for one changed sample (indeed the whole training
	// set) of one client. +Inf without DP.
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	// NominalEpsilon is the ε that was asked for; it differs from Epsilon
	// only for DPPaper, whose nominal ε is not a guarantee.
	NominalEpsilon float64 `json:"nominal_epsilon"`
	// SecretNoise is false when the noise came from a caller-supplied
	// (seeded, reproducible) source.
	SecretNoise bool   `json:"secret_noise"`
	Statement   string `json:"statement"`
}

// privacy describes the guarantee of a run with T rounds, c clients per
// round, k particles of dimension dim.
func (d *DPConfig) privacy(rounds, c, k, dim int) Privacy {
	if d == nil {
		return Privacy{Epsilon: math.Inf(1), NominalEpsilon: math.Inf(1),
			Statement: "no differential privacy: the particles are a deterministic function of the clients' data " +
				"(SVGD loses the inherent privacy of sampling from 𝒬*, Lemma 4.5)"}
	}
	p := Privacy{Mechanism: d.mechanism(), Epsilon: d.Epsilon, Delta: d.Delta, NominalEpsilon: d.Epsilon,
		SecretNoise: d.Noise == nil}
	scope := fmt.Sprintf("for the released particles, against replacing one training sample (indeed the whole "+
		"training set) of any one client; %d rounds of %d clients, clip γ = %g", rounds, c, d.Clip)
	switch d.mechanism() {
	case DPLaplace:
		p.Statement = fmt.Sprintf("ε = %g (pure ε-DP, δ = 0) %s; Laplace mechanism on L1-clipped updates, scale "+
			"%.4g, basic composition", d.Epsilon, scope, d.NoiseScale(rounds, c))
	case DPGaussian:
		p.Statement = fmt.Sprintf("(ε, δ) = (%g, %g) %s; Gaussian mechanism on L2-clipped updates, std %.4g (noise "+
			"multiplier %.4g), Rényi-DP accounting", d.Epsilon, d.Delta, scope, d.NoiseScale(rounds, c),
			GaussianNoiseMultiplier(d.Epsilon, d.Delta, rounds))
	case DPPaper:
		p.Epsilon = 2 * float64(k) * math.Sqrt(float64(dim)) * d.Epsilon
		p.Statement = fmt.Sprintf("the paper's Algorithm 3: its nominal ε = %g is NOT a guarantee (row-wise L2 "+
			"clipping does not bound the L1 sensitivity the Laplace noise is calibrated to); what holds is ε = "+
			"2k√dφ·ε = %.4g %s", d.Epsilon, p.Epsilon, scope)
	}
	if !p.SecretNoise {
		p.Statement += "; the noise came from a caller-supplied seeded source: the guarantee holds only against " +
			"whoever does not know that seed"
	}
	return p
}

// GaussianNoiseMultiplier is the smallest z for which T compositions of the
// Gaussian mechanism with noise std z·Δ (Δ the L2 sensitivity) are
// (ε, δ)-DP under the Rényi-DP conversion ε = Tα/(2z²) + ln(1/δ)/(α−1),
// minimised over α > 1: z = √(T/2) / (√(ln(1/δ)+ε) − √ln(1/δ)).
func GaussianNoiseMultiplier(eps, delta float64, rounds int) float64 {
	l := math.Log(1 / delta)
	return math.Sqrt(float64(rounds)/2) / (math.Sqrt(l+eps) - math.Sqrt(l))
}

// GaussianEpsilon is the accountant the other way round: the ε of T
// compositions of the Gaussian mechanism with noise multiplier z at δ,
// ε = T/(2z²) + √(2T ln(1/δ))/z (the optimum of the RDP conversion at
// α = 1 + z√(2 ln(1/δ)/T)).
func GaussianEpsilon(z float64, rounds int, delta float64) float64 {
	T := float64(rounds)
	return T/(2*z*z) + math.Sqrt(2*T*math.Log(1/delta))/z
}

// ClipL1 scales g to L1 norm at most gamma: g / max(1, ‖g‖₁/γ).
func ClipL1(g []float64, gamma float64) {
	s := 0.0
	for _, v := range g {
		s += math.Abs(v)
	}
	if s > gamma {
		scaleTo(g, gamma/s)
	}
}

// ClipL2 scales g to Euclidean norm at most gamma (the norm computed
// without overflow).
func ClipL2(g []float64, gamma float64) {
	if nrm := norm2(g); nrm > gamma {
		scaleTo(g, gamma/nrm)
	}
}

// clipRows scales every row of g (k×d) to Euclidean norm at most gamma:
// ĝ = g / max(1, ‖g‖/γ) (Algorithm 3, line 6, per particle, as printed).
func clipRows(g []float64, k, d int, gamma float64) {
	for r := 0; r < k; r++ {
		ClipL2(g[r*d:(r+1)*d], gamma)
	}
}

func scaleTo(g []float64, f float64) {
	for i := range g {
		g[i] *= f
	}
}

// norm2 is the Euclidean norm, scaled so that large entries do not
// overflow the sum of squares.
func norm2(g []float64) float64 {
	mx := 0.0
	for _, v := range g {
		mx = math.Max(mx, math.Abs(v))
	}
	if mx == 0 || math.IsInf(mx, 0) || math.IsNaN(mx) {
		return mx
	}
	s := 0.0
	for _, v := range g {
		r := v / mx
		s += r * r
	}
	return mx * math.Sqrt(s)
}

// Laplace draws from the Laplace distribution with location 0 and scale s
// (density e^{−|x|/s}/(2s)) as the difference of two standard exponentials
// times s: always finite (inversion from a uniform draw returned −Inf when
// the uniform was exactly 0).
func laplace(rng *rand.Rand, s float64) float64 {
	return s * (rng.ExpFloat64() - rng.ExpFloat64())
}

package svgd

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Gaussian is a diagonal Gaussian hyper-prior 𝒫 = N(Mean, diag(Std²)) over
// particles of dimension len(Mean). PAC-PFL uses N(μ_P, σ_P² I); Isotropic
// builds that case.
type Gaussian struct {
	Mean []float64
	Std  []float64

	logNorm float64   // −Σ ln σ_i − (d/2) ln 2π, cached by validate
	invVar  []float64 // 1/σ_i²
}

// Isotropic returns N(mean, std² I).
func Isotropic(mean []float64, std float64) (*Gaussian, error) {
	s := make([]float64, len(mean))
	for i := range s {
		s[i] = std
	}
	return NewGaussian(mean, s)
}

// NewGaussian returns N(mean, diag(std²)); every std must be positive and
// finite, every mean finite. The slices are copied.
func NewGaussian(mean, std []float64) (*Gaussian, error) {
	if len(mean) == 0 || len(mean) != len(std) {
		return nil, fmt.Errorf("svgd: hyper-prior mean has %d values and std %d; need equal, non-zero lengths",
			len(mean), len(std))
	}
	g := &Gaussian{
		Mean:   append([]float64(nil), mean...),
		Std:    append([]float64(nil), std...),
		invVar: make([]float64, len(std)),
	}
	g.logNorm = -0.5 * float64(len(mean)) * math.Log(2*math.Pi)
	for i, s := range std {
		if !(s > 0) || math.IsInf(s, 0) {
			return nil, fmt.Errorf("svgd: hyper-prior std[%d] = %v must be positive and finite", i, s)
		}
		if math.IsNaN(mean[i]) || math.IsInf(mean[i], 0) {
			return nil, fmt.Errorf("svgd: hyper-prior mean[%d] = %v is not finite", i, mean[i])
		}
		g.invVar[i] = 1 / (s * s)
		g.logNorm -= math.Log(s)
	}
	return g, nil
}

// Dim returns the dimension.
func (g *Gaussian) Dim() int { return len(g.Mean) }

// LogDensity returns ln 𝒫(φ) for one particle φ.
func (g *Gaussian) LogDensity(phi []float64) float64 {
	phi = phi[:len(g.Mean)]
	var q float64
	for i, v := range phi {
		t := v - g.Mean[i]
		q += t * t * g.invVar[i]
	}
	return g.logNorm - 0.5*q
}

// AddGrad adds ∇ ln 𝒫(φ) = −(φ − μ)/σ² to dst for one particle φ.
func (g *Gaussian) AddGrad(dst, phi []float64) {
	phi = phi[:len(g.Mean)]
	dst = dst[:len(phi)]
	for i, v := range phi {
		dst[i] -= (v - g.Mean[i]) * g.invVar[i]
	}
}

// AddGradRows adds ∇ ln 𝒫 of every row of the k×d particle matrix phi to the
// matching row of dst (k×d): the hyper-prior part of the score (eq. 40).
func (g *Gaussian) AddGradRows(dst, phi []float64) error {
	d := len(g.Mean)
	if len(phi)%d != 0 || len(dst) != len(phi) {
		return fmt.Errorf("svgd: AddGradRows: particles (%d values) and scores (%d values) must both be k×%d", len(phi),
			len(dst), d)
	}
	for r := 0; r < len(phi); r += d {
		g.AddGrad(dst[r:r+d], phi[r:r+d])
	}
	return nil
}

// Sample draws one particle into dst.
func (g *Gaussian) Sample(dst []float64, rng *rand.Rand) {
	dst = dst[:len(g.Mean)]
	for i := range dst {
		dst[i] = g.Mean[i] + g.Std[i]*rng.NormFloat64()
	}
}

// SampleRows draws k i.i.d. particles into the k×d matrix dst (Algorithm 1,
// line 1).
func (g *Gaussian) SampleRows(dst []float64, rng *rand.Rand) error {
	d := len(g.Mean)
	if len(dst)%d != 0 {
		return fmt.Errorf("svgd: SampleRows: buffer of %d values is not k×%d", len(dst), d)
	}
	for r := 0; r < len(dst); r += d {
		g.Sample(dst[r:r+d], rng)
	}
	return nil
}

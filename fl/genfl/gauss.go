package genfl

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pacpfl/pacpfl/fl/internal/meanfield"
)

// Arch is a fully connected ReLU network In → Hidden… → Classes (the seed's
// stochastic MLP; 784-600-600-10 by default, docs/math.md §7).
type Arch struct {
	In      int
	Hidden  []int
	Classes int
}

// DefaultArch is the MLP 784-600-600-10 of the issue. The paper says "2
// hidden layers of 600" but counts 1,198,210 parameters, which is
// 784-600-600-600-10 (Pérez-Ortiz et al.'s network); Hidden = {600, 600,
// 600} gives that one.
func DefaultArch() Arch { return Arch{In: 784, Hidden: []int{600, 600}, Classes: 10} }

// widths returns the input width of every layer and its output width.
func (a Arch) layers() (ins, outs []int) {
	in := a.In
	for _, h := range append(append([]int(nil), a.Hidden...), a.Classes) {
		ins = append(ins, in)
		outs = append(outs, h)
		in = h
	}
	return ins, outs
}

// Validate checks that every width is at least 1 (and Classes ≥ 2).
func (a Arch) Validate() error {
	if a.In < 1 || a.Classes < 2 {
		return fmt.Errorf("genfl: network %d inputs → %d classes: need ≥ 1 input and ≥ 2 classes", a.In, a.Classes)
	}
	for i, h := range a.Hidden {
		if h < 1 {
			return fmt.Errorf("genfl: hidden layer %d has width %d", i+1, h)
		}
	}
	return nil
}

// NumParams is the number of weights and biases. The parameter vector holds,
// layer after layer, W_l (out×in, row-major) then b_l (out).
func (a Arch) NumParams() int {
	ins, outs := a.layers()
	n := 0
	for l := range ins {
		n += outs[l]*ins[l] + outs[l]
	}
	return n
}

// String is "784-600-600-10".
func (a Arch) String() string {
	s := fmt.Sprint(a.In)
	for _, h := range a.Hidden {
		s += fmt.Sprintf("-%d", h)
	}
	return s + fmt.Sprintf("-%d", a.Classes)
}

// Prior is the Gaussian prior N(Mu, Sigma² I) over the weights, data-free
// (RandomPrior) or learnt on data the bound does not use (LearnPrior).
type Prior struct {
	Mu    []float64
	Sigma float64 // σ_prior > 0
}

// Posterior is the diagonal Gaussian N(Mu, diag σ²) over the weights, σ =
// softplus(Rho) = ln(1 + e^ρ) (the paper's parameterisation).
type Posterior struct {
	Mu, Rho []float64
}

// Clone returns a deep copy.
func (q *Posterior) Clone() *Posterior {
	return &Posterior{Mu: append([]float64(nil), q.Mu...), Rho: append([]float64(nil), q.Rho...)}
}

// softplus is ln(1 + e^u) and its derivative sigmoid(u); invSoftplus its
// inverse (package meanfield).
var (
	softplus    = meanfield.Softplus
	invSoftplus = meanfield.InvSoftplus
)

// PosteriorAt returns Q = P: mean μ_P, σ = σ_prior (GenFL's start, Alg. 1
// line 3).
func PosteriorAt(p *Prior) *Posterior {
	q := &Posterior{Mu: append([]float64(nil), p.Mu...), Rho: make([]float64, len(p.Mu))}
	r := invSoftplus(p.Sigma)
	for i := range q.Rho {
		q.Rho[i] = r
	}
	return q
}

// Validate checks the sizes against the network and that σ_prior is a
// positive finite number and every mean is finite.
func (p *Prior) Validate(a Arch) error {
	if len(p.Mu) != a.NumParams() {
		return fmt.Errorf("genfl: prior has %d means for a network of %d parameters", len(p.Mu), a.NumParams())
	}
	if !(p.Sigma > 0) || math.IsInf(p.Sigma, 0) {
		return fmt.Errorf("genfl: σ_prior = %v must be positive and finite", p.Sigma)
	}
	for i, v := range p.Mu {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("genfl: prior mean %d is %v", i, v)
		}
	}
	return nil
}

// RandomPrior is the paper's data-free prior: weights of layer l centred at
// draws from N(0, 1/n_in) (standard deviation 1/√n_in) truncated to
// ±2/√n_in by rejection, biases centred at 0 (Pérez-Ortiz et al.'s
// initialisation; the paper is silent on biases), all with standard
// deviation sigma.
func RandomPrior(a Arch, sigma float64, rng *rand.Rand) (*Prior, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	p := &Prior{Mu: make([]float64, a.NumParams()), Sigma: sigma}
	ins, outs := a.layers()
	off := 0
	for l := range ins {
		s := 1 / math.Sqrt(float64(ins[l]))
		w := p.Mu[off : off+outs[l]*ins[l]]
		for i := range w {
			for {
				v := rng.NormFloat64()
				if math.Abs(v) <= 2 {
					w[i] = v * s
					break
				}
			}
		}
		off += outs[l]*ins[l] + outs[l]
	}
	return p, p.Validate(a)
}

// KL is KL(Q‖P) = Σ_j [ln(σ_P/σ_j) + (σ_j² + (μ_j − μ_Pj)²)/(2σ_P²) − ½]
// for the diagonal Gaussians.
func KL(q *Posterior, p *Prior) (float64, error) {
	if len(q.Mu) != len(p.Mu) || len(q.Rho) != len(p.Mu) {
		return 0,
			fmt.Errorf("genfl: posterior of %d/%d parameters against a prior of %d", len(q.Mu), len(q.Rho), len(p.Mu))
	}
	inv2 := 1 / (2 * p.Sigma * p.Sigma)
	lsp := math.Log(p.Sigma)
	kl := 0.0
	for j, mu := range q.Mu {
		s, _ := softplus(q.Rho[j])
		d := mu - p.Mu[j]
		kl += lsp - math.Log(s) + (s*s+d*d)*inv2 - 0.5
	}
	if math.IsNaN(kl) || math.IsInf(kl, 0) {
		return 0, errors.New("genfl: KL(Q‖P) is not finite (a σ underflowed to 0?)")
	}
	return math.Max(kl, 0), nil
}

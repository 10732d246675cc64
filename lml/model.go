package lml

import (
	"fmt"
	"math"
	"strconv"
)

// MinNoiseStd is the floor of the likelihood noise: σ = softplus(s) + MinNoiseStd.
// It keeps K + σ²I away from singular whatever s is.
const MinNoiseStd = 1e-3

// DefaultHidden is the default width of each hidden layer of both networks
// (two hidden layers of 32, the best PV setting of the paper).
var DefaultHidden = []int{32, 32}

// DefaultDF is the default output width of the kernel network f_φ.
const DefaultDF = 2

// Model describes the GP prior P_φ = GP(m_φ, k_φ) with Gaussian likelihood:
//
//   - mean m_φ: ℝ^D → ℝ, an MLP with tanh hidden layers of widths MeanHidden
//     and a linear scalar output;
//   - kernel k_φ(x, x') = exp(−½‖f_φ(x) − f_φ(x')‖²), with f_φ: ℝ^D → ℝ^DF an
//     MLP with tanh hidden layers of widths KernelHidden and a linear output;
//   - noise σ = softplus(s) + MinNoiseStd.
//
// Empty hidden lists give linear networks. φ is one flat vector laid out as
// Layout reports.
type Model struct {
	D            int   // input dimension
	DF           int   // kernel feature dimension
	MeanHidden   []int // hidden widths of the mean network
	KernelHidden []int // hidden widths of the kernel network
}

// DefaultModel returns the model with d inputs, DF = 2 and two hidden layers
// of 32 in both networks.
func DefaultModel(d int) Model {
	return Model{D: d, DF: DefaultDF, MeanHidden: DefaultHidden, KernelHidden: DefaultHidden}
}

// Validate reports a model that cannot be built.
func (m Model) Validate() error {
	if m.D < 1 {
		return fmt.Errorf("lml: model input dimension D=%d must be ≥ 1", m.D)
	}
	if m.DF < 1 {
		return fmt.Errorf("lml: kernel feature dimension DF=%d must be ≥ 1", m.DF)
	}
	for i, w := range m.MeanHidden {
		if w < 1 {
			return fmt.Errorf("lml: mean hidden layer %d has width %d; widths must be ≥ 1", i, w)
		}
	}
	for i, w := range m.KernelHidden {
		if w < 1 {
			return fmt.Errorf("lml: kernel hidden layer %d has width %d; widths must be ≥ 1", i, w)
		}
	}
	// Counted in float64: with absurd widths the int count of NumParams
	// overflows and allocating φ would panic instead of failing cleanly.
	count := func(hidden []int, out int) float64 {
		c, in := 0.0, float64(m.D)
		for _, h := range hidden {
			c += (in + 1) * float64(h)
			in = float64(h)
		}
		return c + (in+1)*float64(out)
	}
	if n := count(m.MeanHidden, 1) + count(m.KernelHidden, m.DF); n > math.MaxInt/8 {
		return fmt.Errorf("lml: model has %.3g parameters, too many to allocate", n)
	}
	return nil
}

// Block is one named piece of φ: a weight matrix W (Shape = [out, in],
// row-major), a bias b (Shape = [out]) or the raw noise s (Shape = [1]),
// stored at φ[Offset : Offset+Size()].
type Block struct {
	Name   string `json:"name"`
	Shape  []int  `json:"shape"`
	Offset int    `json:"offset"`
}

// Size returns the number of values in the block.
func (b Block) Size() int {
	n := 1
	for _, s := range b.Shape {
		n *= s
	}
	return n
}

// Layout returns the blocks of φ in storage order, which is fixed:
//
//	mean.W0, mean.b0, …, mean.W{L}, mean.b{L}        (layer 0 reads x; layer L is the output)
//	kernel.W0, kernel.b0, …, kernel.W{L'}, kernel.b{L'}
//	noise.s
//
// Each W is out×in, row-major, so W[o][i] multiplies input i into output o.
func (m Model) Layout() []Block {
	var blocks []Block
	off := 0
	add := func(name string, shape ...int) {
		b := Block{Name: name, Shape: shape, Offset: off}
		blocks = append(blocks, b)
		off += b.Size()
	}
	net := func(prefix string, hidden []int, out int) {
		in := m.D
		widths := append(append([]int(nil), hidden...), out)
		for l, w := range widths {
			add(prefix+".W"+strconv.Itoa(l), w, in)
			add(prefix+".b"+strconv.Itoa(l), w)
			in = w
		}
	}
	net("mean", m.MeanHidden, 1)
	net("kernel", m.KernelHidden, m.DF)
	add("noise.s", 1)
	return blocks
}

// NumParams returns dφ, the length of φ.
func (m Model) NumParams() int {
	return netParams(m.D, m.MeanHidden, 1) + netParams(m.D, m.KernelHidden, m.DF) + 1
}

// NoiseIndex returns the index of the raw noise s in φ (the last entry).
func (m Model) NoiseIndex() int { return m.NumParams() - 1 }

func netParams(in int, hidden []int, out int) int {
	n := 0
	for _, w := range hidden {
		n += w*in + w
		in = w
	}
	return n + out*in + out
}

// NoisePriorMean is the hyper-prior mean of the raw noise s: softplus⁻¹(0.4),
// so that a particle at the hyper-prior mean has noise std ≈ 0.4 (the
// paper's "noise std mean 0.4"; the 1e-3 floor is ignored here).
var NoisePriorMean = math.Log(math.Expm1(0.4))

// HyperPriorMean returns the default hyper-prior mean of φ: zero for every
// network weight and bias, NoisePriorMean for s.
func (m Model) HyperPriorMean() []float64 {
	mu := make([]float64, m.NumParams())
	mu[len(mu)-1] = NoisePriorMean
	return mu
}

// NoiseStd returns σ = softplus(s) + MinNoiseStd for the raw noise s.
func NoiseStd(s float64) float64 { return softplus(s) + MinNoiseStd }

// softplus is ln(1 + eˣ) without overflow for large x or loss for small x.
func softplus(x float64) float64 {
	if x > 0 {
		return x + math.Log1p(math.Exp(-x))
	}
	return math.Log1p(math.Exp(x))
}

// sigmoid is softplus'.
func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

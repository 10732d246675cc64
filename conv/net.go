package conv

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Net is a sequential network ending in softmax cross-entropy.
type Net struct {
	Layers []Layer
	Loss   *SoftmaxCrossEntropy
	params []Param
}

// NewNet chains the layers; the loss's sample count must match the last
// layer's.
func NewNet(loss *SoftmaxCrossEntropy, layers ...Layer) *Net {
	n := &Net{Layers: layers, Loss: loss}
	for _, l := range layers {
		n.params = append(n.params, l.Params()...)
	}
	return n
}

// Params lists every trainable parameter, first layer first.
func (n *Net) Params() []Param { return n.params }

// Forward runs the network on x and returns the mean loss over the labels
// (and the weight samples).
func (n *Net) Forward(x *Tensor, labels []int) (float64, error) {
	for _, l := range n.Layers {
		var err error
		if x, err = l.Forward(x); err != nil {
			return 0, err
		}
	}
	return n.Loss.Forward(x, labels)
}

// Backward sets every parameter gradient for the last Forward.
func (n *Net) Backward() error {
	dy, err := n.Loss.Backward()
	if err != nil {
		return err
	}
	for i := len(n.Layers) - 1; i >= 0 && dy != nil; i-- {
		if dy, err = n.Layers[i].Backward(dy); err != nil {
			return err
		}
	}
	return nil
}

// BCNNConfig describes the paper's convolutional network:
// conv K×K (valid) → ReLU → maxpool 2×2 → conv K×K → ReLU → maxpool 2×2 →
// flatten → dense Hidden → ReLU → dense Classes → softmax cross-entropy
// (built with each ReLU after its pooling, which computes the same thing).
type BCNNConfig struct {
	InChannels, InH, InW int // 0 means 1×28×28
	Conv1, Conv2         int // output channels; 0 means 10 and 62
	Kernel               int // 0 means 5
	Hidden               int // 0 means 128
	Classes              int // 0 means 10
	Samples              int // weight samples evaluated together; 0 means 1
	Options
}

func (c *BCNNConfig) defaults() {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.InChannels, 1)
	def(&c.InH, 28)
	def(&c.InW, 28)
	def(&c.Conv1, 10)
	def(&c.Conv2, 62)
	def(&c.Kernel, 5)
	def(&c.Hidden, 128)
	def(&c.Classes, 10)
	def(&c.Samples, 1)
}

// NewBCNN builds the network with zero weights.
func NewBCNN(cfg BCNNConfig) (*Net, error) {
	cfg.defaults()
	S, k := cfg.Samples, cfg.Kernel
	c1, err := NewConv2D(Conv2DConfig{Name: "conv1", InChannels: cfg.InChannels, InH: cfg.InH, InW: cfg.InW,
		OutChannels: cfg.Conv1, KernelH: k, KernelW: k, Samples: S, SkipInputGrad: true, Options: cfg.Options})
	if err != nil {
		return nil, err
	}
	p1, err := NewMaxPool2D("pool1", 2, 2, 2, cfg.Options)
	if err != nil {
		return nil, err
	}
	h, w := c1.OH/2, c1.OW/2
	if h < 1 || w < 1 {
		return nil, fmt.Errorf("bcnn: input %d×%d too small for two %d×%d convolutions and poolings", cfg.InH, cfg.InW, k, k)
	}
	c2, err := NewConv2D(Conv2DConfig{Name: "conv2", InChannels: cfg.Conv1, InH: h, InW: w,
		OutChannels: cfg.Conv2, KernelH: k, KernelW: k, Samples: S, Options: cfg.Options})
	if err != nil {
		return nil, err
	}
	p2, err := NewMaxPool2D("pool2", 2, 2, 2, cfg.Options)
	if err != nil {
		return nil, err
	}
	h, w = c2.OH/2, c2.OW/2
	if h < 1 || w < 1 {
		return nil, fmt.Errorf("bcnn: input %d×%d too small for two %d×%d convolutions and poolings", cfg.InH, cfg.InW, k, k)
	}
	d1, err := NewDense(DenseConfig{Name: "dense1", In: cfg.Conv2 * h * w, Out: cfg.Hidden, Samples: S, Options: cfg.Options})
	if err != nil {
		return nil, err
	}
	d2, err := NewDense(DenseConfig{Name: "dense2", In: cfg.Hidden, Out: cfg.Classes, Samples: S, Options: cfg.Options})
	if err != nil {
		return nil, err
	}
	loss, err := NewSoftmaxCrossEntropy("loss", cfg.Classes, S)
	if err != nil {
		return nil, err
	}
	// ReLU is monotone, so max-pooling commutes with it: pooling first
	// gives the same outputs and gradients (up to which of several zero
	// maxima gets a zero gradient) on a quarter of the elements.
	return NewNet(loss, c1, p1, NewReLU("relu1"), c2, p2, NewReLU("relu2"),
		NewFlatten("flatten"), d1, NewReLU("relu3"), d2), nil
}

// Bayes evaluates the reparameterised Monte Carlo estimate of the expected
// loss of a mean-field Gaussian posterior over the network's weights,
// w = μ + softplus(ρ)·ε with ε ~ N(0, I), and its gradients to μ and ρ.
//
// Stacked, the S weight samples go through one network built with
// Samples = S (shared im2col in the first layer, S-fold wider GEMMs);
// separate, one single-sample network runs S times. Both give the same
// numbers for the same ε.
type Bayes struct {
	Net     *Net
	S       int
	Stacked bool
	// Mu, Rho and their gradients hold one entry per network parameter,
	// each one sample long.
	Mu, Rho, GradMu, GradRho [][]float64
	// Eps holds the noise of the last Step per parameter, S samples one
	// after another.
	Eps   [][]float64
	sigma [][]float64
}

// NewBayes builds the network for S samples, stacked or separate, with
// μ = 0 and ρ = 0 (the caller initialises them).
func NewBayes(cfg BCNNConfig, samples int, stacked bool) (*Bayes, error) {
	if samples < 1 {
		return nil, fmt.Errorf("bayes: %d weight samples, want ≥ 1", samples)
	}
	cfg.Samples = 1
	if stacked {
		cfg.Samples = samples
	}
	net, err := NewBCNN(cfg)
	if err != nil {
		return nil, err
	}
	b := &Bayes{Net: net, S: samples, Stacked: stacked}
	for _, p := range net.Params() {
		size := len(p.Value) / p.Samples
		b.Mu = append(b.Mu, make([]float64, size))
		b.Rho = append(b.Rho, make([]float64, size))
		b.GradMu = append(b.GradMu, make([]float64, size))
		b.GradRho = append(b.GradRho, make([]float64, size))
		b.Eps = append(b.Eps, make([]float64, samples*size))
		b.sigma = append(b.sigma, make([]float64, size))
	}
	return b, nil
}

// Step draws fresh noise from rng into Eps and evaluates.
func (b *Bayes) Step(x *Tensor, labels []int, rng *rand.Rand) (float64, error) {
	for _, e := range b.Eps {
		for i := range e {
			e[i] = rng.NormFloat64()
		}
	}
	return b.Evaluate(x, labels)
}

// Evaluate returns the loss averaged over the S samples in Eps and sets
// GradMu and GradRho.
func (b *Bayes) Evaluate(x *Tensor, labels []int) (float64, error) {
	params := b.Net.Params()
	for j := range params {
		for i, r := range b.Rho[j] {
			b.sigma[j][i] = softplus(r)
		}
		clear(b.GradMu[j])
		clear(b.GradRho[j])
	}
	if b.Stacked {
		b.sampleWeights(0, b.S)
		loss, err := b.Net.Forward(x, labels)
		if err != nil {
			return 0, err
		}
		if err := b.Net.Backward(); err != nil {
			return 0, err
		}
		b.accumulate(0, b.S, 1)
		b.finish()
		return loss, nil
	}
	total := 0.0
	for s := 0; s < b.S; s++ {
		b.sampleWeights(s, 1)
		loss, err := b.Net.Forward(x, labels)
		if err != nil {
			return 0, err
		}
		if err := b.Net.Backward(); err != nil {
			return 0, err
		}
		b.accumulate(s, 1, 1/float64(b.S))
		total += loss
	}
	b.finish()
	return total / float64(b.S), nil
}

// sampleWeights writes samples [first, first+count) into the network's
// parameter arrays (which hold count samples).
func (b *Bayes) sampleWeights(first, count int) {
	for j, p := range b.Net.Params() {
		mu, sg := b.Mu[j], b.sigma[j]
		size := len(mu)
		for s := 0; s < count; s++ {
			eps := b.Eps[j][(first+s)*size : (first+s+1)*size]
			w := p.Value[s*size : (s+1)*size]
			for i := range w {
				w[i] = mu[i] + sg[i]*eps[i]
			}
		}
	}
}

// accumulate adds scale·∂L/∂w_s to GradMu and scale·∂L/∂w_s·ε_s to GradRho
// (the chain rule's σ'(ρ) factor is applied once in finish).
func (b *Bayes) accumulate(first, count int, scale float64) {
	for j, p := range b.Net.Params() {
		gm, gr := b.GradMu[j], b.GradRho[j]
		size := len(gm)
		for s := 0; s < count; s++ {
			eps := b.Eps[j][(first+s)*size : (first+s+1)*size]
			g := p.Grad[s*size : (s+1)*size]
			for i, v := range g {
				gm[i] += scale * v
				gr[i] += scale * v * eps[i]
			}
		}
	}
}

func (b *Bayes) finish() {
	for j, rho := range b.Rho {
		gr := b.GradRho[j]
		for i, r := range rho {
			gr[i] *= sigmoid(r)
		}
	}
}

// softplus is ln(1 + eᵘ), computed without overflow.
func softplus(u float64) float64 {
	if u > 30 {
		return u + math.Log1p(math.Exp(-u))
	}
	return math.Log1p(math.Exp(u))
}

// sigmoid is the derivative of softplus.
func sigmoid(u float64) float64 {
	if u >= 0 {
		return 1 / (1 + math.Exp(-u))
	}
	e := math.Exp(u)
	return e / (1 + e)
}

// GEMMFlops is the floating-point work of the matrix products of one
// forward+backward pass of the last batch (biases, activations and pooling
// not counted): what a GFLOP/s figure divides.
func (n *Net) GEMMFlops() float64 {
	total := 0.0
	for _, l := range n.Layers {
		if f, ok := l.(interface{ GEMMFlops() float64 }); ok {
			total += f.GEMMFlops()
		}
	}
	return total
}

// GEMMFlops is the work of the last forward+backward's products:
// 2·N·S·C_out·K·P each for the output, the weight gradient and (unless
// skipped) the input gradient.
func (l *Conv2D) GEMMFlops() float64 {
	if l.x == nil {
		return 0
	}
	one := 2 * float64(l.x.N) * float64(l.S*l.Cout) * float64(l.k) * float64(l.p)
	if l.SkipInputGrad {
		return 2 * one
	}
	return 3 * one
}

// GEMMFlops is the work of the last forward+backward's products.
func (l *Dense) GEMMFlops() float64 {
	if l.x == nil {
		return 0
	}
	one := 2 * float64(l.x.N) * float64(l.S*l.Out) * float64(l.In)
	if l.SkipInputGrad {
		return 2 * one
	}
	return 3 * one
}

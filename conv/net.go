package conv

import "fmt"

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
	Hidden               int // 0 means 512 (docs/math.md §5.1, PFLlib's CNN)
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
	def(&c.Hidden, 512)
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
		return nil,
			fmt.Errorf("bcnn: input %d×%d too small for two %d×%d convolutions and poolings", cfg.InH, cfg.InW, k, k)
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
		return nil,
			fmt.Errorf("bcnn: input %d×%d too small for two %d×%d convolutions and poolings", cfg.InH, cfg.InW, k, k)
	}
	d1, err := NewDense(
		DenseConfig{Name: "dense1", In: cfg.Conv2 * h * w, Out: cfg.Hidden, Samples: S, Options: cfg.Options})
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

// MLPConfig describes a fully connected classifier with one hidden layer:
// dense Hidden → ReLU → dense Classes → softmax cross-entropy (pFedBayes's
// 784-100-10 network by default).
type MLPConfig struct {
	In      int // input features (any input is flattened); 0 means 784
	Hidden  int // 0 means 100
	Classes int // 0 means 10
	Samples int // weight samples evaluated together; 0 means 1
	Options
}

func (c *MLPConfig) defaults() {
	if c.In == 0 {
		c.In = 784
	}
	if c.Hidden == 0 {
		c.Hidden = 100
	}
	if c.Classes == 0 {
		c.Classes = 10
	}
	if c.Samples == 0 {
		c.Samples = 1
	}
}

// NewMLP builds the network with zero weights. With S samples the first
// layer is one GEMM of the shared input against the S·Hidden stacked rows;
// the second runs one GEMM per sample on that sample's slice.
func NewMLP(cfg MLPConfig) (*Net, error) {
	cfg.defaults()
	d1, err := NewDense(DenseConfig{Name: "dense1", In: cfg.In, Out: cfg.Hidden, Samples: cfg.Samples,
		SkipInputGrad: true, Options: cfg.Options})
	if err != nil {
		return nil, err
	}
	d2, err := NewDense(
		DenseConfig{Name: "dense2", In: cfg.Hidden, Out: cfg.Classes, Samples: cfg.Samples, Options: cfg.Options})
	if err != nil {
		return nil, err
	}
	loss, err := NewSoftmaxCrossEntropy("loss", cfg.Classes, cfg.Samples)
	if err != nil {
		return nil, err
	}
	return NewNet(loss, d1, NewReLU("relu1"), d2), nil
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

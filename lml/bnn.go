package lml

import (
	"fmt"
	"math"

	"github.com/pacpfl/pacpfl/conv"
)

// Network architectures of the BNN client model.
const (
	ArchMLP  = "mlp"  // dense Hidden → ReLU → dense C (pFedBayes's 784-100-10)
	ArchBCNN = "bcnn" // the paper's BCNN (docs/math.md §5.1)
)

// BNN describes the BNN client model of PAC-PFL (docs/math.md §5): a classifier
// h_θ with p(y | x, θ) = softmax(h_θ(x))_y and the prior
// P_φ = Π_w N(θ_w; μ_w, e^{ω_w}) over every weight and bias θ_w of the
// network, φ = (μ, ω), ω = ln σ² (PACOH-NN's mean-field Gaussian prior).
//
// Zero fields take the defaults of WithDefaults. φ is one flat vector: the
// |θ| means μ in the order of WeightLayout, then the |θ| log-variances ω in
// the same order (PhiLayout).
type BNN struct {
	Arch          string // ArchMLP or ArchBCNN
	InC, InH, InW int    // input image; 0 means 1×28×28 (rows of X hold C·H·W pixels, row-major)
	Hidden        int    // MLP hidden width (0: 100) or the BCNN's dense width (0: 512)
	Classes       int    // C; 0 means 10
	Conv1, Conv2  int    // BCNN channels; 0 means 10 and 62
	Kernel        int    // BCNN kernel size; 0 means 5
}

// WithDefaults returns b with every zero field set to its default.
func (b BNN) WithDefaults() BNN {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	if b.Arch == "" {
		b.Arch = ArchMLP
	}
	def(&b.InC, 1)
	def(&b.InH, 28)
	def(&b.InW, 28)
	def(&b.Classes, 10)
	if b.Arch == ArchBCNN {
		def(&b.Hidden, 512)
		def(&b.Conv1, 10)
		def(&b.Conv2, 62)
		def(&b.Kernel, 5)
	} else {
		def(&b.Hidden, 100)
	}
	return b
}

// D is the number of input features, C·H·W.
func (b BNN) D() int { b = b.WithDefaults(); return b.InC * b.InH * b.InW }

// Validate reports a model that cannot be built.
func (b BNN) Validate() error {
	b = b.WithDefaults()
	if b.Arch != ArchMLP && b.Arch != ArchBCNN {
		return fmt.Errorf("bnn: unknown architecture %q (want %s or %s)", b.Arch, ArchMLP, ArchBCNN)
	}
	sizes := []struct {
		name string
		n    int
	}{{"input channels", b.InC}, {"input height", b.InH}, {"input width", b.InW}, {"hidden width", b.Hidden}}
	if b.Arch == ArchBCNN {
		sizes = append(sizes, []struct {
			name string
			n    int
		}{{"conv1 channels", b.Conv1}, {"conv2 channels", b.Conv2}, {"kernel size", b.Kernel}}...)
	}
	for _, v := range sizes {
		if v.n < 1 {
			return fmt.Errorf("bnn: %s %d must be ≥ 1", v.name, v.n)
		}
	}
	if b.Classes < 2 {
		return fmt.Errorf("bnn: %d classes, need at least 2", b.Classes)
	}
	if b.Arch == ArchBCNN {
		h1, w1 := (b.InH-b.Kernel+1)/2, (b.InW-b.Kernel+1)/2
		if b.InH < b.Kernel || b.InW < b.Kernel || h1 < b.Kernel || w1 < b.Kernel || (h1-b.Kernel+1)/2 < 1 ||
			(w1-b.Kernel+1)/2 < 1 {
			return fmt.Errorf("bnn: input %d×%d too small for two %d×%d convolutions each followed by 2×2 pooling",
				b.InH, b.InW, b.Kernel, b.Kernel)
		}
	}
	// Counted in float64 so that absurd sizes fail here, not in make.
	n := 0.0
	for _, bl := range b.weightBlocks() {
		s := 1.0
		for _, d := range bl.Shape {
			s *= float64(d)
		}
		n += s
	}
	if n > math.MaxInt32 {
		return fmt.Errorf("bnn: %.3g network weights, too many", n)
	}
	return nil
}

// weightBlock is one weight array of the network with its fan-in.
type weightBlock struct {
	Block
	fanIn int
}

// weightBlocks lists the network's weight arrays in the order of the conv
// network's Params (offsets filled in by WeightLayout).
func (b BNN) weightBlocks() []weightBlock {
	b = b.WithDefaults()
	var out []weightBlock
	add := func(name string, fanIn int, shape ...int) {
		out = append(out, weightBlock{Block: Block{Name: name, Shape: shape}, fanIn: fanIn})
	}
	dense := func(name string, in, o int) {
		add(name+".weight", in, o, in)
		add(name+".bias", in, o)
	}
	switch b.Arch {
	case ArchBCNN:
		k := b.Kernel
		add("conv1.weight", b.InC*k*k, b.Conv1, b.InC, k, k)
		add("conv1.bias", b.InC*k*k, b.Conv1)
		h, w := (b.InH-k+1)/2, (b.InW-k+1)/2
		add("conv2.weight", b.Conv1*k*k, b.Conv2, b.Conv1, k, k)
		add("conv2.bias", b.Conv1*k*k, b.Conv2)
		h, w = (h-k+1)/2, (w-k+1)/2
		dense("dense1", b.Conv2*h*w, b.Hidden)
		dense("dense2", b.Hidden, b.Classes)
	default:
		dense("dense1", b.InC*b.InH*b.InW, b.Hidden)
		dense("dense2", b.Hidden, b.Classes)
	}
	return out
}

// WeightLayout returns the blocks of a weight vector θ in storage order
// (that of the network's parameters): for the MLP
//
//	dense1.weight [H, D], dense1.bias [H], dense2.weight [C, H], dense2.bias [C]
//
// and for the BCNN
//
//	conv1.weight [C1, C_in, K, K], conv1.bias [C1], conv2.weight [C2, C1, K, K], conv2.bias [C2],
//	dense1.weight [H, C2·h·w], dense1.bias [H], dense2.weight [C, H], dense2.bias [C],
//
// every array row-major: a dense weight [out, in] multiplies input i into
// output o at o·in + i; a convolution filter [out, in, kh, kw]. The BCNN's
// flattened feature index is c·h·w + row·w + col of conv2's pooled output.
func (b BNN) WeightLayout() []Block {
	wb := b.weightBlocks()
	out := make([]Block, len(wb))
	off := 0
	for i, w := range wb {
		out[i] = w.Block
		out[i].Offset = off
		off += w.Size()
	}
	return out
}

// NumWeights is |θ|.
func (b BNN) NumWeights() int {
	n := 0
	for _, w := range b.weightBlocks() {
		n += w.Size()
	}
	return n
}

// NumParams is dφ = 2|θ|.
func (b BNN) NumParams() int { return 2 * b.NumWeights() }

// PhiLayout returns the blocks of φ: "mu.<block>" for each block of
// WeightLayout at the same offset, then "omega.<block>" shifted by |θ|.
func (b BNN) PhiLayout() []Block {
	wl := b.WeightLayout()
	nw := b.NumWeights()
	out := make([]Block, 0, 2*len(wl))
	for _, prefix := range []string{"mu.", "omega."} {
		for _, w := range wl {
			w.Name = prefix + w.Name
			if prefix == "omega." {
				w.Offset += nw
			}
			out = append(out, w)
		}
	}
	return out
}

// HyperPriorMean returns the default hyper-prior mean of φ (our choice, docs/math.md §5.1):
// 0 for every μ and ln(2/fan-in) for every ω, so that a prior at the mean
// has the He-initialisation variance 2/fan-in (a bias takes its layer's
// fan-in).
func (b BNN) HyperPriorMean() []float64 {
	nw := b.NumWeights()
	mean := make([]float64, 2*nw)
	off := nw
	for _, w := range b.weightBlocks() {
		v := math.Log(2 / float64(w.fanIn))
		for i := range w.Size() {
			mean[off+i] = v
		}
		off += w.Size()
	}
	return mean
}

// FanIns returns, per weight of θ, the fan-in of its layer.
func (b BNN) FanIns() []float64 {
	out := make([]float64, 0, b.NumWeights())
	for _, w := range b.weightBlocks() {
		for range w.Size() {
			out = append(out, float64(w.fanIn))
		}
	}
	return out
}

// Build returns the network with samples weight vectors evaluated together
// (zero weights).
func (b BNN) Build(samples int, opt conv.Options) (*conv.Net, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	b = b.WithDefaults()
	if b.Arch == ArchBCNN {
		return conv.NewBCNN(conv.BCNNConfig{InChannels: b.InC, InH: b.InH, InW: b.InW, Conv1: b.Conv1, Conv2: b.Conv2,
			Kernel: b.Kernel, Hidden: b.Hidden, Classes: b.Classes, Samples: samples, Options: opt})
	}
	return conv.NewMLP(
		conv.MLPConfig{In: b.InC * b.InH * b.InW, Hidden: b.Hidden, Classes: b.Classes, Samples: samples, Options: opt})
}

// CheckData validates a classification data set for the model: X holds m
// rows of D finite features, y m class labels 0..C−1 stored as float64.
func (b BNN) CheckData(X, y []float64) error {
	b = b.WithDefaults()
	d := b.D()
	m := len(y)
	if m == 0 {
		return fmt.Errorf("bnn: no data")
	}
	if len(X) != m*d {
		return fmt.Errorf("bnn: %d input values for %d labels, want %d×%d = %d", len(X), m, m, d, m*d)
	}
	for i, v := range X {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("bnn: input %d of row %d is %v; inputs must be finite", i%d, i/d, v)
		}
	}
	for i, v := range y {
		if !(v >= 0 && v < float64(b.Classes)) || v != math.Trunc(v) {
			return fmt.Errorf("bnn: label %v of row %d is not a class 0..%d", v, i, b.Classes-1)
		}
	}
	return nil
}

// String names the architecture, e.g. "mlp 784-100-10".
func (b BNN) String() string {
	b = b.WithDefaults()
	if b.Arch == ArchBCNN {
		return fmt.Sprintf("bcnn %d×%d×%d conv%d conv%d (%d×%d) dense%d-%d", b.InC, b.InH, b.InW, b.Conv1, b.Conv2,
			b.Kernel, b.Kernel, b.Hidden, b.Classes)
	}
	return fmt.Sprintf("mlp %d-%d-%d", b.D(), b.Hidden, b.Classes)
}

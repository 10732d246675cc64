package lml

import (
	"fmt"
	"math"

	"github.com/pacpfl/pacpfl/conv"
)

// Loss is the per-example loss ℓ(θ, z) that an estimate of ln Z^C sums:
// s_j = −scale · Σ_i ℓ(θ_j, z_i).
type Loss struct {
	Kind LossKind
	// PMin is the probability floor of ClippedNLL: ℓ = min(−ln p, ln(1/PMin)).
	PMin float64
}

// LossKind selects a Loss.
type LossKind int

const (
	// NLL is −ln p(y | x, θ), the loss of the LML (38); the only one with a
	// gradient.
	NLL LossKind = iota
	// ClippedNLL is min(−ln p(y | x, θ), ln(1/PMin)) ∈ [0, ln(1/PMin)].
	ClippedNLL
	// ZeroOne is 1 unless the label has the highest probability (the
	// lowest index among ties), in [0, 1].
	ZeroOne
)

// Range returns the interval [a, b] the loss lies in (b = +Inf for NLL).
func (l Loss) Range() (a, b float64) {
	switch l.Kind {
	case ClippedNLL:
		return 0, -math.Log(l.PMin)
	case ZeroOne:
		return 0, 1
	}
	return 0, math.Inf(1)
}

func (l Loss) validate() error {
	switch l.Kind {
	case NLL, ZeroOne:
		return nil
	case ClippedNLL:
		if !(l.PMin > 0 && l.PMin < 1) {
			return fmt.Errorf("bnn: clipped NLL needs a probability floor in (0, 1), got %v", l.PMin)
		}
		return nil
	}
	return fmt.Errorf("bnn: unknown loss kind %d", int(l.Kind))
}

// bnnNet is the network of a BNN model evaluating S weight vectors
// θ_1..θ_S at once (conv's stacked samples): one forward pass gives every
// sample's summed log-likelihood, and one backward pass the gradients of any
// weighted sum Σ_j c_j Σ_i ln p(y_i | x_i, θ_j) with respect to every θ_j.
type bnnNet struct {
	model  BNN
	S, nw  int
	net    *conv.Net
	params []conv.Param // in WeightLayout order, one entry per block
	sizes  []int        // per block, its size in θ
	x      conv.Tensor  // the batch: a view of the caller's rows
	labels []int
	ll     []float64 // S: Σ_i −ℓ(θ_j, z_i) of the last forward
}

func newBNNNet(model BNN, samples int, opt conv.Options) (*bnnNet, error) {
	if samples < 1 {
		return nil, fmt.Errorf("bnn: %d weight samples, want ≥ 1", samples)
	}
	model = model.WithDefaults()
	net, err := model.Build(samples, opt)
	if err != nil {
		return nil, err
	}
	n := &bnnNet{model: model, S: samples, nw: model.NumWeights(), net: net, params: net.Params(),
		ll: make([]float64, samples)}
	wl := model.WeightLayout()
	if len(wl) != len(n.params) {
		return nil, fmt.Errorf("bnn: layout has %d blocks, the network %d parameters", len(wl), len(n.params))
	}
	for i, p := range n.params {
		if len(p.Value) != samples*wl[i].Size() {
			return nil, fmt.Errorf("bnn: parameter %s holds %d values, layout block %s needs %d×%d", p.Name,
				len(p.Value), wl[i].Name, samples, wl[i].Size())
		}
		n.sizes = append(n.sizes, wl[i].Size())
	}
	return n, nil
}

// setWeights writes theta (|θ|) as weight sample j.
func (n *bnnNet) setWeights(j int, theta []float64) {
	off := 0
	for b, p := range n.params {
		sz := n.sizes[b]
		copy(p.Value[j*sz:(j+1)*sz], theta[off:off+sz])
		off += sz
	}
}

// weightGrad adds scale times the gradient of sample j's weights to g (|θ|).
func (n *bnnNet) addWeightGrad(j int, scale float64, g []float64) {
	off := 0
	for b, p := range n.params {
		sz := n.sizes[b]
		dst := g[off : off+sz]
		for i, v := range p.Grad[j*sz : (j+1)*sz] {
			dst[i] += scale * v
		}
		off += sz
	}
}

// load makes the m rows of X (m×D, row-major) and their labels y the batch;
// X is used in place and must stay unchanged until the next load.
func (n *bnnNet) load(X, y []float64) error {
	m, d := len(y), n.model.D()
	if m == 0 {
		return fmt.Errorf("bnn: empty batch")
	}
	if len(X) != m*d {
		return fmt.Errorf("bnn: batch has %d input values for %d labels, want %d", len(X), m, m*d)
	}
	if cap(n.labels) < m {
		n.labels = make([]int, m)
	}
	n.labels = n.labels[:m]
	for i, v := range y {
		if !(v >= 0 && v < float64(n.model.Classes)) || v != math.Trunc(v) {
			return fmt.Errorf("bnn: label %v of row %d is not a class 0..%d", v, i, n.model.Classes-1)
		}
		n.labels[i] = int(v)
	}
	n.x = conv.Tensor{N: m, C: n.model.InC, H: n.model.InH, W: n.model.InW, Data: X[:m*d]}
	return nil
}

// forward runs the batch through the S samples and sets ll[j] = −Σ_i ℓ(θ_j, z_i).
func (n *bnnNet) forward(loss Loss) error {
	if _, err := n.net.Forward(&n.x, n.labels); err != nil {
		return err
	}
	S, c := n.S, n.model.Classes
	ce := n.net.Loss
	clear(n.ll)
	cut := math.Inf(-1)
	if loss.Kind == ClippedNLL {
		cut = math.Log(loss.PMin)
	}
	for i, y := range n.labels {
		for j := range S {
			lp := ce.LogLik[i*S+j]
			switch loss.Kind {
			case NLL:
				n.ll[j] += lp
			case ClippedNLL:
				n.ll[j] += max(lp, cut)
			case ZeroOne:
				row := ce.LogProbs.Data[(i*S+j)*c : (i*S+j+1)*c]
				for k, v := range row {
					if v > lp || (v == lp && k < y) {
						n.ll[j]--
						break
					}
				}
			}
		}
	}
	return nil
}

// backward sets every sample's weight gradients to those of
// Σ_j coef[j] · Σ_i ln p(y_i | x_i, θ_j) for the last forward.
func (n *bnnNet) backward(coef []float64) error {
	// The loss layer's gradient is ∂(mean NLL over N·S pairs)/∂logits
	// = (softmax − onehot)/(N·S); sample j's logits need coef[j]·(onehot −
	// softmax), a factor −coef[j]·N·S.
	g := n.net.Loss.Grad.Data
	S, c, N := n.S, n.model.Classes, len(n.labels)
	for i := range N {
		for j := range S {
			f := -coef[j] * float64(N*S)
			row := g[(i*S+j)*c : (i*S+j+1)*c]
			for k := range row {
				row[k] *= f
			}
		}
	}
	return n.net.Backward()
}

// logProbs runs the batch forward and returns the log class probabilities,
// N×(S·C): row i holds sample j's C values at [j·C, (j+1)·C).
func (n *bnnNet) logProbs() ([]float64, error) {
	if _, err := n.net.Forward(&n.x, n.labels); err != nil {
		return nil, err
	}
	return n.net.Loss.LogProbs.Data, nil
}

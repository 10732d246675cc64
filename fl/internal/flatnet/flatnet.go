// Package flatnet runs a classifier of package conv — lml.BNN's MLP
// (784-100-10 by default) or BCNN — on one flat weight vector θ, laid out
// as lml.BNN.WeightLayout: the mean cross-entropy of a batch with its
// gradient to θ (the native GEMM forward and backward, no per-sample
// loops), and the class probabilities of many rows. The federated
// baselines (pFedBayes, FedAvg, FedProx) move θ, the network only
// evaluates it.
//
// A Net is single-threaded (the methods run one per client goroutine), not
// safe for concurrent use, and does not allocate once its buffers have
// grown to the largest batch.
package flatnet

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"

	"github.com/pacpfl/pacpfl/conv"
	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/linalg"
	"github.com/pacpfl/pacpfl/lml"
)

// EvalChunk is the number of rows Probs evaluates at once.
const EvalChunk = 500

// Net is one worker's network.
type Net struct {
	Model  lml.BNN // defaults filled in
	net    *conv.Net
	params []conv.Param
	nw, d  int
	x      conv.Tensor
	labels []int
}

// New builds the network of model (zero weights, single-threaded native
// BLAS).
func New(model lml.BNN) (*Net, error) {
	if err := model.Validate(); err != nil {
		return nil, err
	}
	model = model.WithDefaults()
	one := func() blas.Float64 { return linalg.NewNative(1) }
	net, err := model.Build(1, conv.Options{BLAS: one(), WorkerBLAS: one, Workers: 1})
	if err != nil {
		return nil, err
	}
	n := &Net{Model: model, net: net, params: net.Params(), nw: model.NumWeights(), d: model.D()}
	total := 0
	for _, p := range n.params {
		total += len(p.Value)
	}
	if total != n.nw {
		return nil, fmt.Errorf("flatnet: the network holds %d weights, its layout %d", total, n.nw)
	}
	return n, nil
}

// NumWeights is |θ|.
func (n *Net) NumWeights() int { return n.nw }

// D is the number of input features of a row.
func (n *Net) D() int { return n.d }

// Classes is the number of classes C.
func (n *Net) Classes() int { return n.Model.Classes }

// InitUniform writes PyTorch's default initialisation of nn.Linear and
// nn.Conv2d into theta: every weight and bias uniform on ±1/√fan-in.
func InitUniform(model lml.BNN, theta []float64, rng *rand.Rand) error {
	fan := model.WithDefaults().FanIns()
	if len(theta) != len(fan) {
		return fmt.Errorf("flatnet: %d weights for a network of %d", len(theta), len(fan))
	}
	for i, f := range fan {
		theta[i] = (2*rng.Float64() - 1) / math.Sqrt(f)
	}
	return nil
}

func (n *Net) set(theta []float64) error {
	if len(theta) != n.nw {
		return fmt.Errorf("flatnet: %d weights for a network of %d", len(theta), n.nw)
	}
	off := 0
	for _, p := range n.params {
		off += copy(p.Value, theta[off:])
	}
	return nil
}

// load makes the rows of x (m×D) the batch, with labels y (class indices
// stored as float64; nil: all zero, for predictions).
func (n *Net) load(x, y []float64, m int) error {
	if m < 1 || len(x) < m*n.d {
		return fmt.Errorf("flatnet: %d inputs are not %d rows of %d features", len(x), m, n.d)
	}
	if cap(n.labels) < m {
		n.labels = make([]int, m)
	}
	n.labels = n.labels[:m]
	clear(n.labels)
	for i, v := range y {
		if !(v >= 0 && v < float64(n.Model.Classes)) || v != math.Trunc(v) {
			return fmt.Errorf("flatnet: label %v of row %d is not a class 0..%d", v, i, n.Model.Classes-1)
		}
		n.labels[i] = int(v)
	}
	n.x = conv.Tensor{N: m, C: n.Model.InC, H: n.Model.InH, W: n.Model.InW, Data: x[:m*n.d]}
	return nil
}

// LossGrad returns the mean cross-entropy −(1/m) Σ_j ln p(y_j | x_j, θ) of
// the m = len(y) rows of x and writes its gradient to θ into grad.
func (n *Net) LossGrad(theta, x, y, grad []float64) (float64, error) {
	if len(x) != len(y)*n.d {
		return 0, fmt.Errorf("flatnet: %d inputs for %d labels of %d features", len(x), len(y), n.d)
	}
	if len(grad) != n.nw {
		return 0, fmt.Errorf("flatnet: gradient of %d for a network of %d weights", len(grad), n.nw)
	}
	if err := n.set(theta); err != nil {
		return 0, err
	}
	if err := n.load(x, y, len(y)); err != nil {
		return 0, err
	}
	loss, err := n.net.Forward(&n.x, n.labels)
	if err != nil {
		return 0, err
	}
	if err := n.net.Backward(); err != nil {
		return 0, err
	}
	off := 0
	for _, p := range n.params {
		off += copy(grad[off:], p.Grad)
	}
	return loss, nil
}

// Probs adds scale·softmax(f_θ(x)) to probs (rows×C) for the rows of x,
// EvalChunk rows at a time (scale 1 on a cleared probs: the predictive of
// θ; 1/S over S weight draws: their Monte Carlo predictive).
func (n *Net) Probs(theta, x []float64, scale float64, probs []float64) error {
	rows := len(x) / n.d
	C := n.Model.Classes
	if len(x) != rows*n.d || len(probs) != rows*C {
		return fmt.Errorf("flatnet: %d inputs and %d probabilities are not rows of %d features and %d classes", len(x),
			len(probs), n.d, C)
	}
	if err := n.set(theta); err != nil {
		return err
	}
	for lo := 0; lo < rows; lo += EvalChunk {
		m := min(EvalChunk, rows-lo)
		if err := n.load(x[lo*n.d:], nil, m); err != nil {
			return err
		}
		if _, err := n.net.Forward(&n.x, n.labels); err != nil {
			return err
		}
		for i, lp := range n.net.Loss.LogProbs.Data[:m*C] {
			probs[lo*C+i] += scale * math.Exp(lp)
		}
	}
	return nil
}

// CheckData checks that ds fits model — its features and classes, at
// least one existing client, each with a training and a test example —
// and returns the existing clients' training-set sizes.
func CheckData(ds *data.Dataset, model lml.BNN) ([]float64, error) {
	model = model.WithDefaults()
	if ds.D != model.D() || ds.Classes != model.Classes {
		return nil, fmt.Errorf("data set %s has %d features and %d classes, the network %s takes %d and %d",
			ds.Name, ds.D, ds.Classes, model, model.D(), model.Classes)
	}
	if len(ds.Existing) < 1 {
		return nil, fmt.Errorf("data set %s has no existing clients", ds.Name)
	}
	sizes := make([]float64, len(ds.Existing))
	for i := range ds.Existing {
		c := &ds.Existing[i]
		if c.M() < 1 || len(c.YTest) < 1 {
			return nil, fmt.Errorf("existing client %d has %d training and %d test examples, needs ≥ 1 of each", i,
				c.M(), len(c.YTest))
		}
		sizes[i] = float64(c.M())
	}
	return sizes, nil
}

// CheckClient checks that one client's data fit model: at least one
// training and one test example, whole rows of its features.
func CheckClient(c *data.ClientData, model lml.BNN) error {
	model = model.WithDefaults()
	d := model.D()
	switch {
	case c == nil:
		return fmt.Errorf("no client data")
	case c.M() < 1 || len(c.YTest) < 1:
		return fmt.Errorf("the client has %d training and %d test examples, needs ≥ 1 of each", c.M(), len(c.YTest))
	case len(c.X) != c.M()*d || len(c.XTest) != len(c.YTest)*d:
		return fmt.Errorf("the client's %d training and %d test values are not rows of %d features for %d and %d "+
			"labels", len(c.X), len(c.XTest), d, c.M(), len(c.YTest))
	}
	return nil
}

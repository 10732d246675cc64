// Package regnet is the small feed-forward regression network of the
// frequentist baselines (MTL, MAML): tanh hidden layers, a linear scalar
// output, the mean squared error and its gradient, with all weights in one
// flat vector so that the baselines can add, average and step them.
package regnet

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pacpfl/pacpfl/data"
)

// Net is the architecture plus the buffers of one evaluation; it is not safe
// for concurrent use (give every client its own, Clone).
type Net struct {
	widths []int       // in, hidden…, 1
	acts   [][]float64 // per layer: m × width
	deltas [][]float64
}

// New returns the network in → hidden… → 1.
func New(in int, hidden []int) (*Net, error) {
	if in < 1 {
		return nil, fmt.Errorf("regnet: input dimension %d", in)
	}
	w := []int{in}
	for _, h := range hidden {
		if h < 1 {
			return nil, fmt.Errorf("regnet: hidden width %d", h)
		}
		w = append(w, h)
	}
	return &Net{widths: append(w, 1)}, nil
}

// Clone returns a network of the same shape with its own buffers.
func (n *Net) Clone() *Net { return &Net{widths: n.widths} }

// NumParams is the length of the weight vector: per layer W (out×in, row
// major) then b (out).
func (n *Net) NumParams() int {
	p := 0
	for l := 0; l+1 < len(n.widths); l++ {
		p += n.widths[l+1]*n.widths[l] + n.widths[l+1]
	}
	return p
}

// Init draws Glorot-uniform weights and zero biases.
func (n *Net) Init(w []float64, rng *rand.Rand) {
	off := 0
	for l := 0; l+1 < len(n.widths); l++ {
		in, out := n.widths[l], n.widths[l+1]
		a := math.Sqrt(6 / float64(in+out))
		for i := 0; i < in*out; i++ {
			w[off+i] = a * (2*rng.Float64() - 1)
		}
		off += in * out
		clear(w[off : off+out])
		off += out
	}
}

func (n *Net) grow(m int) {
	if len(n.acts) == len(n.widths) && len(n.acts[0]) >= m*n.widths[0] {
		return
	}
	n.acts = make([][]float64, len(n.widths))
	n.deltas = make([][]float64, len(n.widths))
	for l, wd := range n.widths {
		n.acts[l] = make([]float64, m*wd)
		n.deltas[l] = make([]float64, m*wd)
	}
}

// forward fills the activations for the m rows of x.
func (n *Net) forward(w, x []float64, m int) {
	n.grow(m)
	copy(n.acts[0], x[:m*n.widths[0]])
	off := 0
	last := len(n.widths) - 2
	for l := 0; l <= last; l++ {
		in, out := n.widths[l], n.widths[l+1]
		W, b := w[off:off+in*out], w[off+in*out:off+in*out+out]
		off += in*out + out
		a, z := n.acts[l], n.acts[l+1]
		for r := 0; r < m; r++ {
			ar := a[r*in : (r+1)*in]
			for o := 0; o < out; o++ {
				s := b[o]
				for i, v := range W[o*in : (o+1)*in] {
					s += v * ar[i]
				}
				if l < last {
					s = math.Tanh(s)
				}
				z[r*out+o] = s
			}
		}
	}
}

// Predict writes the network's output for the m = len(out) rows of x.
func (n *Net) Predict(w, x []float64, out []float64) {
	m := len(out)
	n.forward(w, x, m)
	copy(out, n.acts[len(n.widths)-1][:m])
}

// LossGrad returns the mean squared error (1/m)Σ(f(x_r) − y_r)² on the m =
// len(y) rows of x and writes its gradient with respect to w into grad.
func (n *Net) LossGrad(w, x, y, grad []float64) float64 {
	m := len(y)
	n.forward(w, x, m)
	L := len(n.widths) - 1
	out := n.acts[L]
	var loss float64
	for r := 0; r < m; r++ {
		e := out[r] - y[r]
		loss += e * e
		n.deltas[L][r] = 2 * e / float64(m)
	}
	off := n.NumParams()
	for l := L - 1; l >= 0; l-- {
		in, outW := n.widths[l], n.widths[l+1]
		off -= in*outW + outW
		W := w[off : off+in*outW]
		gW, gb := grad[off:off+in*outW], grad[off+in*outW:off+in*outW+outW]
		clear(gW)
		clear(gb)
		a, d := n.acts[l], n.deltas[l+1]
		for r := 0; r < m; r++ {
			ar, dr := a[r*in:(r+1)*in], d[r*outW:(r+1)*outW]
			for o, dv := range dr {
				gb[o] += dv
				g := gW[o*in : (o+1)*in]
				for i, v := range ar {
					g[i] += dv * v
				}
			}
		}
		if l == 0 {
			break
		}
		// Back through W and the tanh of layer l.
		dl := n.deltas[l]
		for r := 0; r < m; r++ {
			dr := d[r*outW : (r+1)*outW]
			for i := 0; i < in; i++ {
				var s float64
				for o, dv := range dr {
					s += dv * W[o*in+i]
				}
				t := a[r*in+i]
				dl[r*in+i] = s * (1 - t*t)
			}
		}
	}
	return loss / float64(m)
}

// Federation is the start every federated baseline on this network shares
// (MTL, MAML): the network in → hidden… → 1 for ds's features, its initial
// weights w drawn from the stream (seed, tag), and each existing client's
// weight in the server's average, its number of training rows. method
// names the baseline in the errors.
func Federation(method string, ds *data.Dataset, hidden []int, seed,
	tag uint64) (net *Net, w, sizes []float64, err error) {
	if len(ds.Existing) == 0 {
		return nil, nil, nil, fmt.Errorf("%s: no existing clients", method)
	}
	if net, err = New(ds.D, hidden); err != nil {
		return nil, nil, nil, err
	}
	w = make([]float64, net.NumParams())
	net.Init(w, rand.New(rand.NewPCG(seed, data.StreamID(tag))))
	sizes = make([]float64, len(ds.Existing))
	for i := range ds.Existing {
		sizes[i] = float64(ds.Existing[i].M())
	}
	return net, w, sizes, nil
}

package lml

import (
	"math"

	"github.com/pacpfl/pacpfl/asm"
)

// The networks row by row, with one dot product per unit and math.Tanh: the
// independent reference of the GEMM networks (forwardRows, backwardRows)
// the workspaces run.

// forward runs the network on the m rows of x (m×ins[0]) and stores every
// layer's output in acts[l] (m×widths[l]): tanh activations for hidden
// layers, the linear output for the last. acts[L] is the network output.
func (n *mlp) forward(phi, x []float64, m int, acts [][]float64) {
	in := x
	last := n.layers() - 1
	for l := range n.widths {
		ni, w := n.ins[l], n.widths[l]
		W := phi[n.offs[l] : n.offs[l]+w*ni]
		b := phi[n.offs[l]+w*ni : n.offs[l]+w*ni+w]
		out := acts[l][:m*w]
		for j := 0; j < m; j++ {
			row := in[j*ni : j*ni+ni]
			o := out[j*w : j*w+w]
			for k := range o {
				o[k] = b[k] + asm.DotUnitary(W[k*ni:k*ni+ni], row)
			}
			if l < last {
				for k, v := range o {
					o[k] = math.Tanh(v)
				}
			}
		}
		in = out
	}
}

// backward accumulates into grad (laid out like φ) the gradient of a scalar
// whose derivative with respect to the network output at row j is
// seed[j*out:(j+1)*out], given the activations of forward. g1 and g2 are
// scratch of m×maxWidth values each; seed may be either of them's storage
// only if it is not g1 or g2 (it is read once, before they are written).
func (n *mlp) backward(phi, x []float64, m int, acts [][]float64, seed, grad, g1, g2 []float64) {
	ga := seed // ∂/∂(pre-activation) of the current layer; the output is linear
	for l := n.layers() - 1; l >= 0; l-- {
		ni, w := n.ins[l], n.widths[l]
		in := x
		if l > 0 {
			in = acts[l-1]
		}
		W := phi[n.offs[l] : n.offs[l]+w*ni]
		gW := grad[n.offs[l] : n.offs[l]+w*ni]
		gb := grad[n.offs[l]+w*ni : n.offs[l]+w*ni+w]
		for j := 0; j < m; j++ {
			row := in[j*ni : j*ni+ni]
			g := ga[j*w : j*w+w]
			for k, v := range g {
				if v != 0 {
					asm.AxpyUnitary(v, row, gW[k*ni:k*ni+ni])
					gb[k] += v
				}
			}
		}
		if l == 0 {
			break
		}
		// ∂/∂h_{l-1} = W_lᵀ ga, then through tanh: ∘ (1 − h²).
		gh := g1[:m*ni]
		if &gh[0] == &ga[0] {
			gh = g2[:m*ni]
		}
		h := acts[l-1]
		for j := 0; j < m; j++ {
			dst := gh[j*ni : j*ni+ni]
			clear(dst)
			g := ga[j*w : j*w+w]
			for k, v := range g {
				if v != 0 {
					asm.AxpyUnitary(v, W[k*ni:k*ni+ni], dst)
				}
			}
			hr := h[j*ni : j*ni+ni]
			for i, hv := range hr {
				dst[i] *= 1 - hv*hv
			}
		}
		ga = gh
	}
}

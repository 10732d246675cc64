package genfl

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
)

// net evaluates the MLP of an Arch for one weight vector on a batch of rows,
// forward and backward, with its own buffers (no allocation once sized). It
// is not safe for concurrent use; each worker has its own.
type net struct {
	arch      Arch
	ins, outs []int
	offs      []int // W_l at w[offs[l]:], b_l right after it
	bl        blas.Float64
	acts      [][]float64 // per layer, rows×outs[l]: ReLU output (hidden), logits (last)
	masks     [][]float64 // dropout scale per hidden unit and row (nil: no dropout)
	g1, g2    []float64   // backward scratch, rows×max width
	rows      int
}

func newNet(a Arch, bl blas.Float64) *net {
	n := &net{arch: a, bl: bl}
	n.ins, n.outs = a.layers()
	off := 0
	for l := range n.ins {
		n.offs = append(n.offs, off)
		off += n.outs[l]*n.ins[l] + n.outs[l]
	}
	n.acts = make([][]float64, len(n.ins))
	n.masks = make([][]float64, len(n.ins))
	return n
}

func (n *net) maxWidth() int {
	w := n.arch.In
	for _, o := range n.outs {
		w = max(w, o)
	}
	return w
}

// size makes the buffers hold rows rows.
func (n *net) size(rows int) {
	n.rows = rows
	grow := func(b []float64, k int) []float64 {
		if cap(b) < k {
			return make([]float64, k)
		}
		return b[:k]
	}
	for l, o := range n.outs {
		n.acts[l] = grow(n.acts[l], rows*o)
	}
	mw := n.maxWidth()
	n.g1 = grow(n.g1, rows*mw)
	n.g2 = grow(n.g2, rows*mw)
}

// forward runs the network with weights w on the rows of x (rows×In) and
// returns the logits (rows×Classes, owned by n). With dropout p > 0 every
// hidden unit of every row is zeroed with probability p and the survivors
// scaled by 1/(1−p) (inverted dropout, drawn from rng).
func (n *net) forward(w, x []float64, rows int, dropout float64, rng *rand.Rand) []float64 {
	n.size(rows)
	in := x
	last := len(n.ins) - 1
	for l := range n.ins {
		ni, no := n.ins[l], n.outs[l]
		W := w[n.offs[l] : n.offs[l]+no*ni]
		b := w[n.offs[l]+no*ni : n.offs[l]+no*ni+no]
		out := n.acts[l]
		for r := 0; r < rows; r++ {
			copy(out[r*no:(r+1)*no], b)
		}
		n.bl.Dgemm(blas.NoTrans, blas.Trans, rows, no, ni, 1, in, ni, W, ni, 1, out, no)
		if l < last {
			for i, v := range out {
				if v < 0 {
					out[i] = 0
				}
			}
			if dropout > 0 {
				if cap(n.masks[l]) < rows*no {
					n.masks[l] = make([]float64, rows*no)
				}
				m := n.masks[l][:rows*no]
				n.masks[l] = m
				keep := 1 / (1 - dropout)
				for i := range m {
					if rng.Float64() < dropout {
						m[i] = 0
					} else {
						m[i] = keep
					}
					out[i] *= m[i]
				}
			} else {
				n.masks[l] = n.masks[l][:0]
			}
		}
		in = out
	}
	return n.acts[last]
}

// backward writes into grad (laid out like w) the gradient of a scalar
// whose derivative with respect to the logits of the last forward is
// dlogits (rows×Classes; overwritten).
func (n *net) backward(w, x, dlogits, grad []float64) {
	rows := n.rows
	ga := dlogits
	for l := len(n.ins) - 1; l >= 0; l-- {
		ni, no := n.ins[l], n.outs[l]
		in := x
		if l > 0 {
			in = n.acts[l-1]
		}
		gW := grad[n.offs[l] : n.offs[l]+no*ni]
		gb := grad[n.offs[l]+no*ni : n.offs[l]+no*ni+no]
		n.bl.Dgemm(blas.Trans, blas.NoTrans, no, ni, rows, 1, ga, no, in, ni, 0, gW, ni)
		clear(gb)
		for r := 0; r < rows; r++ {
			for k, v := range ga[r*no : (r+1)*no] {
				gb[k] += v
			}
		}
		if l == 0 {
			break
		}
		gh := n.g1[:rows*ni]
		if len(ga) > 0 && &gh[0] == &ga[0] {
			gh = n.g2[:rows*ni]
		}
		W := w[n.offs[l] : n.offs[l]+no*ni]
		n.bl.Dgemm(blas.NoTrans, blas.NoTrans, rows, ni, no, 1, ga, no, W, ni, 0, gh, ni)
		// Through dropout (the mask's scale) and ReLU (zero where the
		// output is zero; a dropped unit's output is zero too).
		h := n.acts[l-1]
		if m := n.masks[l-1]; len(m) > 0 {
			for i, v := range h {
				if v <= 0 {
					gh[i] = 0
				} else {
					gh[i] *= m[i]
				}
			}
		} else {
			for i, v := range h {
				if v <= 0 {
					gh[i] = 0
				}
			}
		}
		ga = gh
	}
}

// boundedCE is the paper's bounded cross-entropy (docs/math.md §7; "sigmoid" in the
// seed is a misprint for softmax): ℓ = ln max(softmax(z)_y, p_min)/ln p_min ∈
// [0, 1]. It returns the mean loss over the rows and the number of 0–1
// errors (the label not strictly the first largest logit), and overwrites
// logits with the gradient of the mean loss (zero for a clipped row).
func boundedCE(logits []float64, y []int, classes int, pMin float64) (loss float64, errs int, err error) {
	rows := len(y)
	lnPMin := math.Log(pMin)
	scale := 1 / (float64(rows) * lnPMin) // < 0
	for r := 0; r < rows; r++ {
		z := logits[r*classes : (r+1)*classes]
		lab := y[r]
		mx, arg := z[0], 0
		for c, v := range z[1:] {
			if v > mx {
				mx, arg = v, c+1
			}
		}
		if math.IsNaN(mx) || math.IsInf(mx, 0) {
			return 0, 0, fmt.Errorf("genfl: logits of row %d are not finite (max %v)", r, mx)
		}
		if arg != lab {
			errs++
		}
		sum := 0.0
		for _, v := range z {
			sum += math.Exp(v - mx)
		}
		lse := mx + math.Log(sum)
		lp := z[lab] - lse
		if lp <= lnPMin {
			loss += 1
			clear(z)
			continue
		}
		loss += lp / lnPMin
		// d(lp/ln p_min)/dz_c = (δ_cy − p_c)/ln p_min, averaged over rows.
		for c, v := range z {
			z[c] = -math.Exp(v-lse) * scale
		}
		z[lab] += scale
	}
	return loss / float64(rows), errs, nil
}

// crossEntropy is the mean softmax cross-entropy (the ERM loss of the
// learnt prior) and the number of 0–1 errors; logits are overwritten with
// the gradient of the mean.
func crossEntropy(logits []float64, y []int, classes int) (loss float64, errs int, err error) {
	rows := len(y)
	inv := 1 / float64(rows)
	for r := 0; r < rows; r++ {
		z := logits[r*classes : (r+1)*classes]
		mx, arg := z[0], 0
		for c, v := range z[1:] {
			if v > mx {
				mx, arg = v, c+1
			}
		}
		if math.IsNaN(mx) || math.IsInf(mx, 0) {
			return 0, 0, fmt.Errorf("genfl: logits of row %d are not finite (max %v)", r, mx)
		}
		if arg != y[r] {
			errs++
		}
		sum := 0.0
		for _, v := range z {
			sum += math.Exp(v - mx)
		}
		lse := mx + math.Log(sum)
		loss += lse - z[y[r]]
		for c, v := range z {
			z[c] = math.Exp(v-lse) * inv
		}
		z[y[r]] -= inv
	}
	return loss * inv, errs, nil
}

// zeroOneErrors counts the rows whose label is not the first largest logit.
func zeroOneErrors(logits []float64, y []int, classes int) int {
	errs := 0
	for r, lab := range y {
		z := logits[r*classes : (r+1)*classes]
		mx, arg := z[0], 0
		for c, v := range z[1:] {
			if v > mx {
				mx, arg = v, c+1
			}
		}
		if arg != lab || math.IsNaN(mx) {
			errs++
		}
	}
	return errs
}

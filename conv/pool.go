package conv

import (
	"fmt"
	"math"
)

// MaxPool2D is max pooling over KH×KW windows with a stride, no padding.
// It acts on every channel alike and accepts any input at least one window
// large; Backward routes each output gradient to its window's argmax (the
// first maximum; a NaN in a window is its maximum, so it propagates).
type MaxPool2D struct {
	Name           string
	KH, KW, Stride int
	x, bwdDy       *Tensor
	out, dx        Tensor
	argmax         []int32 // per output element, the offset of its input in the H×W plane
	split          *splitter
	fwdFn, bwdFn   func(worker, lo, hi int)
	oh, ow         int
}

// NewMaxPool2D makes a max-pooling layer; stride 0 means the window size.
func NewMaxPool2D(name string, kh, kw, stride int, opt Options) (*MaxPool2D, error) {
	if stride == 0 {
		stride = kh
	}
	if kh < 1 || kw < 1 || stride < 1 {
		return nil, fmt.Errorf("maxpool2d %q: window %d×%d, stride %d: all must be ≥ 1", name, kh, kw, stride)
	}
	opt, err := opt.resolve()
	if err != nil {
		return nil, fmt.Errorf("maxpool2d %q: %w", name, err)
	}
	l := &MaxPool2D{Name: name, KH: kh, KW: kw, Stride: stride, split: newSplitter(opt.Workers)}
	l.fwdFn, l.bwdFn = l.forwardChunk, l.backwardChunk
	return l, nil
}

// Forward pools x.
func (l *MaxPool2D) Forward(x *Tensor) (*Tensor, error) {
	if err := check("maxpool2d", l.Name, "input", x); err != nil {
		return nil, err
	}
	if x.H < l.KH || x.W < l.KW {
		return nil, shapeError("maxpool2d", l.Name, "input", x.Shape(),
			fmt.Sprintf("[N C H W] with H ≥ %d and W ≥ %d", l.KH, l.KW))
	}
	l.x = x
	l.oh, l.ow = (x.H-l.KH)/l.Stride+1, (x.W-l.KW)/l.Stride+1
	l.out.resize(x.N, x.C, l.oh, l.ow)
	if cap(l.argmax) < len(l.out.Data) {
		l.argmax = make([]int32, len(l.out.Data))
	}
	l.argmax = l.argmax[:len(l.out.Data)]
	l.split.run(x.N*x.C, l.fwdFn)
	return &l.out, nil
}

func (l *MaxPool2D) forwardChunk(_, lo, hi int) {
	H, W := l.x.H, l.x.W
	po := l.oh * l.ow
	for plane := lo; plane < hi; plane++ {
		in := l.x.Data[plane*H*W : (plane+1)*H*W]
		out := l.out.Data[plane*po : (plane+1)*po]
		arg := l.argmax[plane*po : (plane+1)*po]
		if l.KH == 2 && l.KW == 2 && l.Stride == 2 && pool2x2(in, out, arg, W, l.oh, l.ow) {
			continue
		}
		for oh := 0; oh < l.oh; oh++ {
			for ow := 0; ow < l.ow; ow++ {
				base := oh*l.Stride*W + ow*l.Stride
				best, bi := in[base], base
				for ki := 0; ki < l.KH; ki++ {
					row := base + ki*W
					for kj := 0; kj < l.KW; kj++ {
						if v := in[row+kj]; v > best || (v != v && best == best) {
							best, bi = v, row+kj
						}
					}
				}
				out[oh*l.ow+ow], arg[oh*l.ow+ow] = best, int32(bi)
			}
		}
	}
}

// Backward routes dy to the argmax of every window.
func (l *MaxPool2D) Backward(dy *Tensor) (*Tensor, error) {
	if err := sameShape("maxpool2d", l.Name, dy, &l.out); err != nil {
		return nil, err
	}
	l.dx.resize(l.x.N, l.x.C, l.x.H, l.x.W)
	l.bwdDy = dy
	l.split.run(dy.N*dy.C, l.bwdFn)
	return &l.dx, nil
}

func (l *MaxPool2D) backwardChunk(_, lo, hi int) {
	hw := l.x.H * l.x.W
	po := l.oh * l.ow
	for plane := lo; plane < hi; plane++ {
		dx := l.dx.Data[plane*hw : (plane+1)*hw]
		dy := l.bwdDy.Data[plane*po : (plane+1)*po]
		arg := l.argmax[plane*po : (plane+1)*po]
		if l.KH == 2 && l.KW == 2 && l.Stride == 2 {
			unpool2x2(dx, dy, arg, l.x.H, l.x.W, l.oh, l.ow)
			continue
		}
		clear(dx)
		for i, g := range dy {
			dx[arg[i]] += g
		}
	}
}

// Params returns nil: pooling has no parameters.
func (l *MaxPool2D) Params() []Param { return nil }

// pool2x2 is the 2×2, stride-2 case without data-dependent branches (the
// maxima of random activations are unpredictable). It reports false, having
// written garbage, if the plane holds a NaN; the caller then redoes the
// plane with the general loop, which propagates it.
func pool2x2(in, out []float64, arg []int32, W, oh, ow int) bool {
	ok := true
	for i := 0; i < oh; i++ {
		r0 := in[2*i*W : 2*i*W+2*ow]
		r1 := in[(2*i+1)*W : (2*i+1)*W+2*ow]
		o := out[i*ow : (i+1)*ow]
		a := arg[i*ow : (i+1)*ow]
		base := int32(2 * i * W)
		for j := range o {
			v0, v1, v2, v3 := r0[2*j], r0[2*j+1], r1[2*j], r1[2*j+1]
			m := max(max(v0, v1), max(v2, v3))
			// The first maximum in row-major window order, as the
			// general loop picks it.
			k := int32(W + 1)
			if v2 == m {
				k = int32(W)
			}
			if v1 == m {
				k = 1
			}
			if v0 == m {
				k = 0
			}
			o[j], a[j] = m, base+int32(2*j)+k
			ok = ok && m == m
		}
	}
	return ok
}

// unpool2x2 is the 2×2, stride-2 backward: the windows do not overlap, so
// every input element is written once (its window's gradient or zero)
// instead of clearing the plane and scattering into it.
func unpool2x2(dx, dy []float64, arg []int32, H, W, oh, ow int) {
	for i := 0; i < oh; i++ {
		r0 := dx[2*i*W : 2*i*W+W]
		r1 := dx[(2*i+1)*W : (2*i+1)*W+W]
		g := dy[i*ow : (i+1)*ow]
		a := arg[i*ow : (i+1)*ow]
		base := int32(2 * i * W)
		for j, v := range g {
			// Branch-free: the argmax position is random.
			k := a[j] - base - int32(2*j) // 0, 1, W or W+1
			b := math.Float64bits(v)
			r0[2*j] = math.Float64frombits(b & eqMask(k, 0))
			r0[2*j+1] = math.Float64frombits(b & eqMask(k, 1))
			r1[2*j] = math.Float64frombits(b & eqMask(k, int32(W)))
			r1[2*j+1] = math.Float64frombits(b & eqMask(k, int32(W+1)))
		}
		// An odd width leaves a last column no window covers.
		clear(r0[2*ow:])
		clear(r1[2*ow:])
	}
	// An odd height leaves a last row.
	clear(dx[2*oh*W : H*W])
}

// eqMask is all ones if a == b, else zero, without a branch.
func eqMask(a, b int32) uint64 {
	d := uint64(uint32(a ^ b)) // zero iff equal
	return (d - 1) >> 63 * ^uint64(0)
}

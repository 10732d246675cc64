package conv

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/blas"
)

// naiveConv is the definition of the (multi-sample) convolution as direct
// loops: out[n, s·Cout+o, oh, ow] = b[s,o] + Σ w[s,o,c,ki,kj]·x[n, c', ih, iw]
// with c' = c for a shared input and s·Cin+c otherwise.
func naiveConv(x *Tensor, w, b []float64, S, cin, cout, kh, kw, stride, pad int) *Tensor {
	oh := (x.H+2*pad-kh)/stride + 1
	ow := (x.W+2*pad-kw)/stride + 1
	out := NewTensor(x.N, S*cout, oh, ow)
	for n := 0; n < x.N; n++ {
		for s := 0; s < S; s++ {
			for o := 0; o < cout; o++ {
				for i := 0; i < oh; i++ {
					for j := 0; j < ow; j++ {
						sum := b[s*cout+o]
						for c := 0; c < cin; c++ {
							xc := c
							if x.C != cin {
								xc = s*cin + c
							}
							for ki := 0; ki < kh; ki++ {
								for kj := 0; kj < kw; kj++ {
									ih, iw := i*stride+ki-pad, j*stride+kj-pad
									if ih < 0 || ih >= x.H || iw < 0 || iw >= x.W {
										continue
									}
									sum += w[(((s*cout+o)*cin+c)*kh+ki)*kw+kj] * x.Data[((n*x.C+xc)*x.H+ih)*x.W+iw]
								}
							}
						}
						out.Data[((n*S*cout+s*cout+o)*oh+i)*ow+j] = sum
					}
				}
			}
		}
	}
	return out
}

type convCase struct {
	n, cin, h, w, cout, kh, kw, stride, pad, S int
	shared                                     bool
}

func (c convCase) String() string {
	return fmt.Sprintf("N%d_C%d_%dx%d_out%d_k%dx%d_s%d_p%d_S%d_sh%v", c.n, c.cin, c.h, c.w, c.cout, c.kh, c.kw,
		c.stride, c.pad, c.S, c.shared)
}

func convCases(rng *rand.Rand) []convCase {
	cases := []convCase{
		// paper conv1, batch 1
		{n: 1, cin: 1, h: 28, w: 28, cout: 10, kh: 5, kw: 5, stride: 1, pad: 0, S: 1, shared: true},
		{n: 3, cin: 10, h: 12, w: 12, cout: 62, kh: 5, kw: 5, stride: 1, pad: 0, S: 1, shared: true}, // paper conv2
		{n: 2, cin: 3, h: 7, w: 9, cout: 4, kh: 1, kw: 1, stride: 1, pad: 0, S: 1, shared: true},     // 1×1, non-square
		{n: 2, cin: 2, h: 9, w: 6, cout: 3, kh: 3, kw: 3, stride: 2, pad: 1, S: 1, shared: true},     // stride 2
		// pad 2, odd kernel
		{n: 2, cin: 1, h: 5, w: 8, cout: 2, kh: 3, kw: 2, stride: 2, pad: 2, S: 1, shared: true},
		{n: 3, cin: 1, h: 10, w: 10, cout: 3, kh: 5, kw: 5, stride: 1, pad: 0, S: 4, shared: true}, // stacked samples
		// per-sample inputs
		{n: 2, cin: 2, h: 8, w: 7, cout: 3, kh: 3, kw: 3, stride: 1, pad: 1, S: 3, shared: false},
		{n: 1, cin: 2, h: 4, w: 4, cout: 2, kh: 4, kw: 4, stride: 1, pad: 0, S: 2, shared: true},   // kernel = image
		{n: 5, cin: 3, h: 6, w: 11, cout: 2, kh: 2, kw: 3, stride: 3, pad: 1, S: 2, shared: false}, // stride 3
	}
	for range 12 {
		c := convCase{n: 1 + rng.IntN(4), cin: 1 + rng.IntN(4), h: 1 + rng.IntN(12), w: 1 + rng.IntN(12),
			cout: 1 + rng.IntN(5), kh: 1 + rng.IntN(5), kw: 1 + rng.IntN(5), stride: 1 + rng.IntN(2), pad: rng.IntN(3),
			S: 1 + rng.IntN(3), shared: rng.IntN(2) == 0}
		if c.kh > c.h+2*c.pad || c.kw > c.w+2*c.pad {
			continue
		}
		cases = append(cases, c)
	}
	return cases
}

func newConvCase(t *testing.T, rng *rand.Rand, c convCase, opt Options) (*Conv2D, *Tensor) {
	t.Helper()
	l, err := NewConv2D(Conv2DConfig{Name: "c", InChannels: c.cin, InH: c.h, InW: c.w, OutChannels: c.cout,
		KernelH: c.kh, KernelW: c.kw, Stride: c.stride, Pad: c.pad, Samples: c.S, Options: opt})
	if err != nil {
		t.Fatal(err)
	}
	fill(rng, l.Weight)
	fill(rng, l.Bias)
	xc := c.cin
	if !c.shared {
		xc *= c.S
	}
	return l, randTensor(rng, c.n, xc, c.h, c.w)
}

func TestConv2DForwardMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range convCases(rng) {
		for _, bk := range []struct {
			name string
			opt  Options
		}{{"default", Options{}}, {"naive", naiveOptions()}, {"1worker", Options{Workers: 1}}} {
			l, x := newConvCase(t, rng, c, bk.opt)
			got, err := l.Forward(x)
			if err != nil {
				t.Fatalf("%v: %v", c, err)
			}
			want := naiveConv(x, l.Weight, l.Bias, c.S, c.cin, c.cout, c.kh, c.kw, c.stride, c.pad)
			if got.Shape() != want.Shape() {
				t.Fatalf("%v %s: shape %v, want %v", c, bk.name, got.Shape(), want.Shape())
			}
			if d := maxAbsDiff(got.Data, want.Data); d > 1e-12 {
				t.Errorf("%v %s: max |diff| %g", c, bk.name, d)
			}
		}
	}
}

// convLoss is Σ r⊙conv(x): its gradient with respect to the output is r.
func convLoss(t *testing.T, l *Conv2D, x *Tensor, r []float64) float64 {
	y, err := l.Forward(x)
	if err != nil {
		t.Fatal(err)
	}
	return dot(y.Data, r)
}

func TestConv2DBackwardFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range convCases(rng) {
		if underEmulation() && c.n*c.S*c.cin*c.cout*c.h*c.w > 20000 {
			continue // the paper-size cases: minutes under qemu, and the forward test covers them
		}
		l, x := newConvCase(t, rng, c, Options{})
		y, err := l.Forward(x)
		if err != nil {
			t.Fatal(err)
		}
		r := make([]float64, len(y.Data))
		fill(rng, r)
		dx, err := l.Backward(&Tensor{N: y.N, C: y.C, H: y.H, W: y.W, Data: r})
		if err != nil {
			t.Fatal(err)
		}
		dxc := append([]float64(nil), dx.Data...)
		gw := append([]float64(nil), l.GradWeight...)
		gb := append([]float64(nil), l.GradBias...)
		loss := func() float64 { return convLoss(t, l, x, r) }
		fdCheck(t, c.String()+" dx", 1e-3, rng, x.Data, dxc, loss)
		fdCheck(t, c.String()+" dW", 1e-3, rng, l.Weight, gw, loss)
		fdCheck(t, c.String()+" db", 1e-3, rng, l.Bias, gb, loss)
	}
}

// Stacked evaluation of S samples on a shared input must equal S separate
// single-sample layers, forward and backward.
func TestConv2DStackedEqualsSeparate(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, shared := range []bool{true, false} {
		const S, n, cin, h, w, cout, k = 4, 3, 3, 11, 9, 5, 3
		cfg := Conv2DConfig{Name: "stack", InChannels: cin, InH: h, InW: w, OutChannels: cout, KernelH: k, KernelW: k,
			Pad: 1, Samples: S}
		st, err := NewConv2D(cfg)
		if err != nil {
			t.Fatal(err)
		}
		fill(rng, st.Weight)
		fill(rng, st.Bias)
		xc := cin
		if !shared {
			xc = S * cin
		}
		x := randTensor(rng, n, xc, h, w)
		y, err := st.Forward(x)
		if err != nil {
			t.Fatal(err)
		}
		dy := randTensor(rng, y.N, y.C, y.H, y.W)
		dx, err := st.Backward(dy)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Samples = 1
		one, err := NewConv2D(cfg)
		if err != nil {
			t.Fatal(err)
		}
		kw := cout * cin * k * k
		dxSum := make([]float64, n*cin*h*w)
		for s := 0; s < S; s++ {
			copy(one.Weight, st.Weight[s*kw:(s+1)*kw])
			copy(one.Bias, st.Bias[s*cout:(s+1)*cout])
			xs := x
			if !shared {
				xs = sliceChannels(x, s*cin, cin)
			}
			ys, err := one.Forward(xs)
			if err != nil {
				t.Fatal(err)
			}
			if d := maxAbsDiff(ys.Data, sliceChannels(y, s*cout, cout).Data); d > 1e-12 {
				t.Errorf("shared=%v sample %d: forward differs by %g", shared, s, d)
			}
			dxs, err := one.Backward(sliceChannels(dy, s*cout, cout))
			if err != nil {
				t.Fatal(err)
			}
			if d := maxAbsDiff(one.GradWeight, st.GradWeight[s*kw:(s+1)*kw]); d > 1e-12 {
				t.Errorf("shared=%v sample %d: dW differs by %g", shared, s, d)
			}
			if d := maxAbsDiff(one.GradBias, st.GradBias[s*cout:(s+1)*cout]); d > 1e-12 {
				t.Errorf("shared=%v sample %d: db differs by %g", shared, s, d)
			}
			if shared {
				for i, v := range dxs.Data {
					dxSum[i] += v
				}
			} else if d := maxAbsDiff(dxs.Data, sliceChannels(dx, s*cin, cin).Data); d > 1e-12 {
				t.Errorf("per-sample sample %d: dx differs by %g", s, d)
			}
		}
		if shared {
			if d := maxAbsDiff(dxSum, dx.Data); d > 1e-12 {
				t.Errorf("shared: dx differs from the sum over samples by %g", d)
			}
		}
	}
}

// sliceChannels copies channels [c0, c0+nc) of every image.
func sliceChannels(x *Tensor, c0, nc int) *Tensor {
	out := NewTensor(x.N, nc, x.H, x.W)
	hw := x.H * x.W
	for n := 0; n < x.N; n++ {
		copy(out.Data[n*nc*hw:(n+1)*nc*hw], x.Data[(n*x.C+c0)*hw:(n*x.C+c0+nc)*hw])
	}
	return out
}

func TestConv2DErrors(t *testing.T) {
	_, err := NewConv2D(
		Conv2DConfig{Name: "bad", InChannels: 1, InH: 3, InW: 3, OutChannels: 2, KernelH: 5, KernelW: 5})
	if err == nil || !strings.Contains(err.Error(), `conv2d "bad"`) {
		t.Errorf("kernel larger than input: %v", err)
	}
	_, err = NewConv2D(Conv2DConfig{Name: "bad", InChannels: 0, InH: 3, InW: 3, OutChannels: 2, KernelH: 1, KernelW: 1})
	if err == nil {
		t.Error("zero channels accepted")
	}
	_, err = NewConv2D(
		Conv2DConfig{Name: "bad", InChannels: 1, InH: 3, InW: 3, OutChannels: 2, KernelH: 1, KernelW: 1, Pad: -1})
	if err == nil {
		t.Error("negative pad accepted")
	}
	l, err := NewConv2D(
		Conv2DConfig{Name: "conv2", InChannels: 10, InH: 12, InW: 12, OutChannels: 62, KernelH: 5, KernelW: 5})
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.Forward(NewTensor(64, 3, 12, 12))
	if err == nil || err.Error() != `conv2d "conv2": input shape [64 3 12 12], want [64 10 12 12]` {
		t.Errorf("wrong channels: %v", err)
	}
	_, err = l.Forward(NewTensor(2, 10, 12, 11))
	if err == nil || !strings.Contains(err.Error(), "[2 10 12 11], want [2 10 12 12]") {
		t.Errorf("wrong width: %v", err)
	}
	_, err = l.Forward(&Tensor{N: 2, C: 10, H: 12, W: 12, Data: make([]float64, 5)})
	if err == nil || !strings.Contains(err.Error(), "needs 2880 values, data has 5") {
		t.Errorf("short data: %v", err)
	}
	if _, err = l.Forward(nil); err == nil {
		t.Error("nil input accepted")
	}
	if _, err = l.Backward(NewTensor(2, 62, 8, 8)); err == nil || !strings.Contains(err.Error(), "before Forward") {
		t.Errorf("backward before forward: %v", err)
	}
	if _, err = l.Forward(NewTensor(2, 10, 12, 12)); err != nil {
		t.Fatal(err)
	}
	_, err = l.Backward(NewTensor(2, 62, 8, 7))
	if err == nil ||
		!strings.Contains(err.Error(), `conv2d "conv2": output gradient shape [2 62 8 7], want [2 62 8 8]`) {
		t.Errorf("wrong gradient shape: %v", err)
	}
	st, err := NewConv2D(
		Conv2DConfig{Name: "st", InChannels: 2, InH: 5, InW: 5, OutChannels: 1, KernelH: 3, KernelW: 3, Samples: 3})
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Forward(NewTensor(1, 4, 5, 5))
	if err == nil || !strings.Contains(err.Error(), "or [1 6 5 5]") {
		t.Errorf("stacked wrong channels: %v", err)
	}
}

var _ blas.Float64 = naiveBLAS{}

package conv

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// checkLayerGrad compares a parameter-free layer's input gradient with
// central differences of Σ r⊙layer(x).
func checkLayerGrad(t *testing.T, what string, h float64, rng *rand.Rand, l Layer, x *Tensor) {
	t.Helper()
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
	an := append([]float64(nil), dx.Data...)
	fdCheck(t, what, h, rng, x.Data, an, func() float64 {
		y, err := l.Forward(x)
		if err != nil {
			t.Fatal(err)
		}
		return dot(y.Data, r)
	})
}

func TestMaxPool2D(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, c := range []struct{ n, ch, h, w, kh, kw, stride int }{
		{2, 3, 8, 8, 2, 2, 2}, {2, 2, 7, 9, 2, 2, 2}, {1, 1, 7, 5, 3, 2, 2}, {3, 2, 5, 5, 3, 3, 1},
		{1, 4, 24, 24, 2, 2, 0},
	} {
		l, err := NewMaxPool2D("pool", c.kh, c.kw, c.stride, Options{})
		if err != nil {
			t.Fatal(err)
		}
		x := randTensor(rng, c.n, c.ch, c.h, c.w)
		y, err := l.Forward(x)
		if err != nil {
			t.Fatal(err)
		}
		// Reference: the maximum of every window by direct loops.
		st := l.Stride
		oh, ow := (c.h-c.kh)/st+1, (c.w-c.kw)/st+1
		if y.Shape() != [4]int{c.n, c.ch, oh, ow} {
			t.Fatalf("shape %v", y.Shape())
		}
		for p := 0; p < c.n*c.ch; p++ {
			for i := 0; i < oh; i++ {
				for j := 0; j < ow; j++ {
					m := math.Inf(-1)
					for a := 0; a < c.kh; a++ {
						for b := 0; b < c.kw; b++ {
							m = math.Max(m, x.Data[(p*c.h+i*st+a)*c.w+j*st+b])
						}
					}
					if got := y.Data[(p*oh+i)*ow+j]; got != m {
						t.Fatalf("%+v: out[%d,%d,%d] = %g, want %g", c, p, i, j, got, m)
					}
				}
			}
		}
		checkLayerGrad(t, "maxpool dx", 1e-5, rng, l, x)
	}
	l, _ := NewMaxPool2D("pool1", 2, 2, 2, Options{})
	x := NewTensor(1, 1, 2, 2)
	x.Data[3] = math.NaN()
	y, err := l.Forward(x)
	if err != nil || !math.IsNaN(y.Data[0]) {
		t.Errorf("NaN in a window: %v, %v", y.Data, err)
	}
	if _, err := l.Forward(NewTensor(1, 1, 1, 4)); err == nil ||
		!strings.Contains(err.Error(), `maxpool2d "pool1": input shape [1 1 1 4]`) {
		t.Errorf("too small input: %v", err)
	}
	if _, err := NewMaxPool2D("p", 0, 2, 2, Options{}); err == nil {
		t.Error("zero window accepted")
	}
}

func TestActivations(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	x := randTensor(rng, 3, 4, 5, 2)
	checkLayerGrad(t, "relu dx", 1e-5, rng, NewReLU("r"), x)
	checkLayerGrad(t, "tanh dx", 1e-5, rng, NewTanh("t"), x)
	y, err := NewReLU("r").Forward(&Tensor{N: 1, C: 4, H: 1, W: 1, Data: []float64{-1, 0, 2, math.NaN()}})
	if err != nil || y.Data[0] != 0 || y.Data[1] != 0 || y.Data[2] != 2 || !math.IsNaN(y.Data[3]) {
		t.Errorf("relu values %v, %v", y.Data, err)
	}
	th := NewTanh("t")
	y, _ = th.Forward(&Tensor{N: 1, C: 2, H: 1, W: 1, Data: []float64{0.5, -800}})
	if y.Data[0] != math.Tanh(0.5) || y.Data[1] != -1 {
		t.Errorf("tanh values %v", y.Data)
	}
	if _, err := th.Backward(NewTensor(1, 3, 1, 1)); err == nil ||
		!strings.Contains(err.Error(), `tanh "t": output gradient shape [1 3 1 1], want [1 2 1 1]`) {
		t.Errorf("tanh backward shape: %v", err)
	}
	if _, err := NewReLU("r").Backward(NewTensor(1, 1, 1, 1)); err == nil {
		t.Error("relu backward before forward accepted")
	}
	f := NewFlatten("f")
	y, _ = f.Forward(x)
	if y.Shape() != [4]int{3, 40, 1, 1} {
		t.Errorf("flatten shape %v", y.Shape())
	}
	dx, _ := f.Backward(y)
	if dx.Shape() != x.Shape() {
		t.Errorf("flatten backward shape %v", dx.Shape())
	}
}

// naiveDense is y[n, s·O+o] = b[s,o] + Σ_i W[s,o,i]·x[n, s'·In+i].
func naiveDense(x []float64, n, f int, w, b []float64, S, in, out int) []float64 {
	y := make([]float64, n*S*out)
	for i := 0; i < n; i++ {
		for s := 0; s < S; s++ {
			off := i * f
			if f != in {
				off += s * in
			}
			for o := 0; o < out; o++ {
				sum := b[s*out+o]
				for k := 0; k < in; k++ {
					sum += w[(s*out+o)*in+k] * x[off+k]
				}
				y[(i*S+s)*out+o] = sum
			}
		}
	}
	return y
}

func TestDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, c := range []struct {
		n, in, out, S int
		shared        bool
	}{{4, 7, 3, 1, true}, {1, 5, 6, 1, true}, {3, 6, 4, 3, true}, {5, 4, 2, 3, false}, {64, 80, 33, 2, false}} {
		l, err := NewDense(DenseConfig{Name: "d", In: c.in, Out: c.out, Samples: c.S})
		if err != nil {
			t.Fatal(err)
		}
		fill(rng, l.Weight)
		fill(rng, l.Bias)
		f := c.in
		if !c.shared {
			f *= c.S
		}
		// A 4-D input is flattened: f = C·H·W.
		x := randTensor(rng, c.n, f, 1, 1)
		y, err := l.Forward(x)
		if err != nil {
			t.Fatal(err)
		}
		if d := maxAbsDiff(y.Data, naiveDense(x.Data, c.n, f, l.Weight, l.Bias, c.S, c.in, c.out)); d > 1e-12 {
			t.Errorf("%+v: forward differs by %g", c, d)
		}
		r := make([]float64, len(y.Data))
		fill(rng, r)
		dx, err := l.Backward(&Tensor{N: y.N, C: y.C, H: 1, W: 1, Data: r})
		if err != nil {
			t.Fatal(err)
		}
		dxc := append([]float64(nil), dx.Data...)
		gw := append([]float64(nil), l.GradWeight...)
		gb := append([]float64(nil), l.GradBias...)
		loss := func() float64 {
			y, err := l.Forward(x)
			if err != nil {
				t.Fatal(err)
			}
			return dot(y.Data, r)
		}
		fdCheck(t, "dense dx", 1e-3, rng, x.Data, dxc, loss)
		fdCheck(t, "dense dW", 1e-3, rng, l.Weight, gw, loss)
		fdCheck(t, "dense db", 1e-3, rng, l.Bias, gb, loss)
	}
	l, _ := NewDense(DenseConfig{Name: "dense1", In: 992, Out: 128})
	if _, err := l.Forward(NewTensor(64, 62, 4, 3)); err == nil ||
		err.Error() != `dense "dense1": input shape [64 62 4 3], want N×992 features` {
		t.Errorf("dense shape error: %v", err)
	}
	if _, err := NewDense(DenseConfig{Name: "d", In: 0, Out: 1}); err == nil {
		t.Error("zero inputs accepted")
	}
}

func TestSoftmaxCrossEntropy(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, S := range []int{1, 3} {
		const n, c = 5, 4
		l, err := NewSoftmaxCrossEntropy("ce", c, S)
		if err != nil {
			t.Fatal(err)
		}
		z := randTensor(rng, n, S*c, 1, 1)
		labels := []int{0, 3, 1, 2, 3}
		loss, err := l.Forward(z, labels)
		if err != nil {
			t.Fatal(err)
		}
		// Reference: the textbook formula, fine for small logits.
		want := 0.0
		for i := 0; i < n; i++ {
			for s := 0; s < S; s++ {
				row := z.Data[(i*S+s)*c : (i*S+s+1)*c]
				sum := 0.0
				for _, v := range row {
					sum += math.Exp(v)
				}
				lp := math.Log(math.Exp(row[labels[i]]) / sum)
				if d := math.Abs(l.LogLik[i*S+s] - lp); d > 1e-14 {
					t.Errorf("LogLik[%d,%d] off by %g", i, s, d)
				}
				want -= lp
			}
		}
		want /= float64(n * S)
		if math.Abs(loss-want) > 1e-14 {
			t.Errorf("S=%d: loss %.17g, want %.17g", S, loss, want)
		}
		g, _ := l.Backward()
		an := append([]float64(nil), g.Data...)
		fdCheck(t, "softmax-ce dz", 1e-5, rng, z.Data, an, func() float64 {
			v, err := l.Forward(z, labels)
			if err != nil {
				t.Fatal(err)
			}
			return v
		})
	}

	// Logits of magnitude 1e3: exp would overflow without the shift.
	l, _ := NewSoftmaxCrossEntropy("ce", 3, 1)
	z := &Tensor{N: 2, C: 3, H: 1, W: 1, Data: []float64{1000, 999, -1000, -1000, 1000, 1000}}
	loss, err := l.Forward(z, []int{1, 0})
	if err != nil {
		t.Fatal(err)
	}
	l1 := 1 + math.Log1p(math.Exp(-1)) // −log softmax(1000, 999, −1000)[1]
	l2 := 2000 + math.Log(2)           // −log softmax(−1000, 1000, 1000)[0]
	if math.Abs(loss-(l1+l2)/2) > 1e-12 {
		t.Errorf("large logits: loss %.17g, want %.17g", loss, (l1+l2)/2)
	}
	for i, v := range l.Grad.Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Errorf("large logits: grad[%d] = %v", i, v)
		}
	}
	p0 := 1 / (1 + math.Exp(-1)) // softmax(1000, 999, −1000)[0]
	wantG := []float64{p0, -p0, 0, -1, 0.5, 0.5}
	for i := range wantG {
		if math.Abs(l.Grad.Data[i]-wantG[i]/2) > 1e-12 { // logits near 1e3 carry ulps of 1e-13
			t.Errorf("large logits: grad[%d] = %g, want %g", i, l.Grad.Data[i], wantG[i]/2)
		}
	}
	if _, err := l.Forward(z, []int{1, 3}); err == nil ||
		!strings.Contains(err.Error(), "label 3 of image 1 outside [0, 3)") {
		t.Errorf("bad label: %v", err)
	}
	if _, err := l.Forward(z, []int{1}); err == nil {
		t.Error("short labels accepted")
	}
	if _, err := l.Forward(NewTensor(2, 4, 1, 1), []int{0, 0}); err == nil ||
		!strings.Contains(err.Error(), `softmax-ce "ce": logits shape [2 4 1 1], want [2 3 1 1]`) {
		t.Errorf("bad logits shape: %v", err)
	}
	z.Data[4] = math.NaN()
	if _, err := l.Forward(z, []int{0, 0}); err == nil || !strings.Contains(err.Error(), "not finite") {
		t.Errorf("NaN logits: %v", err)
	}
}

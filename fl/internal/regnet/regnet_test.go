package regnet

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pacpfl/pacpfl/data"
)

func TestLossGradMatchesFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, hidden := range [][]int{nil, {5}, {4, 3}} {
		n, err := New(3, hidden)
		if err != nil {
			t.Fatal(err)
		}
		w := make([]float64, n.NumParams())
		n.Init(w, rng)
		for i := range w {
			w[i] += 0.1 * rng.NormFloat64() // non-zero biases too
		}
		m := 7
		x, y := make([]float64, m*3), make([]float64, m)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		for i := range y {
			y[i] = rng.NormFloat64()
		}
		g := make([]float64, len(w))
		n.LossGrad(w, x, y, g)
		scratch := make([]float64, len(w))
		for i := range w {
			const h = 1e-6
			w[i] += h
			fp := n.LossGrad(w, x, y, scratch)
			w[i] -= 2 * h
			fm := n.LossGrad(w, x, y, scratch)
			w[i] += h
			if fd := (fp - fm) / (2 * h); math.Abs(fd-g[i]) > 1e-6*math.Max(1, math.Abs(fd)) {
				t.Errorf("hidden %v: ∂/∂w[%d] = %.9g, finite differences %.9g", hidden, i, g[i], fd)
			}
		}
		// Predict agrees with the loss's forward pass.
		out := make([]float64, m)
		n.Predict(w, x, out)
		var mse float64
		for r := range out {
			mse += (out[r] - y[r]) * (out[r] - y[r]) / float64(m)
		}
		if l := n.LossGrad(w, x, y, g); math.Abs(l-mse) > 1e-12 {
			t.Errorf("loss %v, mean squared error of Predict %v", l, mse)
		}
	}
	if _, err := New(0, nil); err == nil {
		t.Error("input dimension 0 accepted")
	}
	if _, err := New(2, []int{3, 0}); err == nil {
		t.Error("hidden width 0 accepted")
	}
}

func TestFederation(t *testing.T) {
	ds := &data.Dataset{D: 3, Existing: []data.ClientData{
		{X: make([]float64, 3*4), Y: make([]float64, 4)},
		{X: make([]float64, 3*7), Y: make([]float64, 7)},
	}}
	net, w, sizes, err := Federation("mtl", ds, []int{5}, 9, 0x1234)
	if err != nil {
		t.Fatal(err)
	}
	if len(w) != net.NumParams() || len(w) != 3*5+5+5+1 {
		t.Fatalf("%d weights for a 3-5-1 network (NumParams %d)", len(w), net.NumParams())
	}
	if sizes[0] != 4 || sizes[1] != 7 {
		t.Fatalf("client weights %v, want their row counts 4, 7", sizes)
	}
	// The initial weights are Init's draws from the stream (seed, tag).
	want := make([]float64, len(w))
	net.Init(want, rand.New(rand.NewPCG(9, data.StreamID(0x1234))))
	_, other, _, _ := Federation("mtl", ds, []int{5}, 9, 0x1235)
	for i := range w {
		if w[i] != want[i] {
			t.Fatalf("weight %d: %v, want Init's %v", i, w[i], want[i])
		}
	}
	if other[0] == w[0] && other[1] == w[1] {
		t.Fatal("another tag drew the same weights")
	}
	if _, _, _, err := Federation("maml", &data.Dataset{D: 3}, nil, 1, 1); err == nil ||
		err.Error() != "maml: no existing clients" {
		t.Fatalf("no clients: %v", err)
	}
	if _, _, _, err := Federation("maml", ds, []int{0}, 1, 1); err == nil {
		t.Fatal("a hidden width 0 accepted")
	}
}

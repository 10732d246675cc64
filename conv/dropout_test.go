package conv

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestDropoutBackwardFixedMask(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, rate := range []float64{0.25, 0.5} {
		l, err := NewDropout("drop", rate, rand.New(rand.NewPCG(5, 6)))
		if err != nil {
			t.Fatal(err)
		}
		l.Fixed = true
		x := randTensor(rng, 3, 4, 5, 5)
		// The loss is linear in x for a fixed mask: a large step.
		checkLayerGrad(t, "dropout dx", 1e-3, rng, l, x)
		// The mask really is reused: the same input gives the same output.
		y1, _ := l.Forward(x)
		a := append([]float64(nil), y1.Data...)
		y2, _ := l.Forward(x)
		if maxAbsDiff(a, y2.Data) != 0 {
			t.Errorf("rate %v: Fixed drew a new mask", rate)
		}
	}
}

func TestDropoutScalingAndMask(t *testing.T) {
	const rate = 0.25
	l, err := NewDropout("drop", rate, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	n := 200000
	x := NewTensor(1, n, 1, 1)
	for i := range x.Data {
		x.Data[i] = 1 + float64(i%7)
	}
	y, err := l.Forward(x)
	if err != nil {
		t.Fatal(err)
	}
	kept, sumX, sumY := 0, 0.0, 0.0
	for i, v := range y.Data {
		switch {
		case v == 0:
		case math.Abs(v-x.Data[i]/(1-rate)) <= 1e-15*v:
			kept++
		default:
			t.Fatalf("output %d is %v for input %v: neither 0 nor x/(1−p) = %v", i, v, x.Data[i], x.Data[i]/(1-rate))
		}
		sumX += x.Data[i]
		sumY += v
	}
	// Kept fraction ~ Binomial(n, 0.75)/n: sd √(0.75·0.25/n) ≈ 0.001.
	if f := float64(kept) / float64(n); math.Abs(f-(1-rate)) > 0.005 {
		t.Errorf("kept fraction %v, want %v", f, 1-rate)
	}
	// Inverted dropout keeps the mean: E[y] = x.
	if r := sumY / sumX; math.Abs(r-1) > 0.01 {
		t.Errorf("mean output / mean input = %v, want 1", r)
	}
	// Backward uses the same mask: zero where the output was dropped,
	// 1/(1−p) elsewhere.
	dy := NewTensor(1, n, 1, 1)
	for i := range dy.Data {
		dy.Data[i] = 1
	}
	dx, err := l.Backward(dy)
	if err != nil {
		t.Fatal(err)
	}
	for i, g := range dx.Data {
		if want := y.Data[i] / x.Data[i]; math.Abs(g-want) > 1e-15 {
			t.Fatalf("dx[%d] = %v, want the mask %v", i, g, want)
		}
	}
	// A new Forward draws a new mask.
	first := append([]float64(nil), y.Data...)
	y2, _ := l.Forward(x)
	if maxAbsDiff(first, y2.Data) == 0 {
		t.Error("two training passes drew the same mask")
	}
}

func TestDropoutEvalIsIdentity(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	l, err := NewDropout("drop", 0.5, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	x := randTensor(rng, 2, 3, 4, 4)
	if _, err := l.Forward(x); err != nil { // a training pass first
		t.Fatal(err)
	}
	l.Train = false
	y, err := l.Forward(x)
	if err != nil {
		t.Fatal(err)
	}
	if maxAbsDiff(y.Data, x.Data) != 0 {
		t.Error("evaluation mode changed the input")
	}
	dy := randTensor(rng, 2, 3, 4, 4)
	dx, err := l.Backward(dy)
	if err != nil {
		t.Fatal(err)
	}
	if maxAbsDiff(dx.Data, dy.Data) != 0 {
		t.Error("evaluation mode changed the gradient")
	}
	// Rate 0 is the identity in training too.
	l0, _ := NewDropout("drop0", 0, rand.New(rand.NewPCG(1, 1)))
	y, _ = l0.Forward(x)
	if maxAbsDiff(y.Data, x.Data) != 0 {
		t.Error("rate 0 changed the input")
	}
}

func TestDropoutErrors(t *testing.T) {
	for _, r := range []float64{-0.1, 1, 1.5, math.NaN()} {
		if _, err := NewDropout("d", r, rand.New(rand.NewPCG(1, 1))); err == nil ||
			!strings.Contains(err.Error(), `dropout "d": rate`) {
			t.Errorf("rate %v: %v", r, err)
		}
	}
	if _, err := NewDropout("d", 0.5, nil); err == nil {
		t.Error("nil stream accepted")
	}
	l, _ := NewDropout("d", 0.5, rand.New(rand.NewPCG(1, 1)))
	if _, err := l.Backward(NewTensor(1, 1, 1, 1)); err == nil || !strings.Contains(err.Error(), "before Forward") {
		t.Errorf("Backward before Forward: %v", err)
	}
	if _, err := l.Forward(nil); err == nil {
		t.Error("nil input accepted")
	}
	x := NewTensor(1, 2, 1, 1)
	l.Forward(x)
	if _, err := l.Backward(NewTensor(1, 3, 1, 1)); err == nil ||
		!strings.Contains(err.Error(), "output gradient shape") {
		t.Errorf("wrong gradient shape: %v", err)
	}
}

func TestDropoutNoAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	l, _ := NewDropout("d", 0.5, rand.New(rand.NewPCG(1, 1)))
	x := randTensor(rng, 4, 8, 3, 3)
	dy := randTensor(rng, 4, 8, 3, 3)
	l.Forward(x)
	l.Backward(dy)
	if a := testing.AllocsPerRun(20, func() {
		l.Forward(x)
		l.Backward(dy)
	}); a != 0 {
		t.Errorf("%v allocations per forward+backward", a)
	}
}

package conv

import (
	"math"
	"math/rand/v2"
	"testing"
)

// smallBCNN is the paper's architecture shrunk so that finite differences
// over it stay fast.
func smallBCNN(opt Options) BCNNConfig {
	return BCNNConfig{InChannels: 1, InH: 14, InW: 13, Conv1: 3, Conv2: 4, Kernel: 3, Hidden: 6, Classes: 5,
		Options: opt}
}

func newBayesInit(t *testing.T, cfg BCNNConfig, S int, stacked bool, seed uint64) *Bayes {
	t.Helper()
	b, err := NewBayes(cfg, S, stacked)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	for j := range b.Mu {
		for i := range b.Mu[j] {
			b.Mu[j][i] = 0.5 * rng.NormFloat64()
			b.Rho[j][i] = -2 + 0.5*rng.NormFloat64()
		}
	}
	return b
}

func batch(rng *rand.Rand, n, c, h, w, classes int) (*Tensor, []int) {
	x := randTensor(rng, n, c, h, w)
	labels := make([]int, n)
	for i := range labels {
		labels[i] = rng.IntN(classes)
	}
	return x, labels
}

func TestBayesStackedEqualsSeparate(t *testing.T) {
	for _, cfg := range []BCNNConfig{smallBCNN(Options{}), {Samples: 0}} {
		const S = 3
		n := 4
		if cfg.InH == 0 && (testing.Short() || underEmulation()) {
			n = 2
		}
		st := newBayesInit(t, cfg, S, true, 7)
		sep := newBayesInit(t, cfg, S, false, 7)
		c := cfg
		c.defaults()
		x, labels := batch(rand.New(rand.NewPCG(8, 9)), n, c.InChannels, c.InH, c.InW, c.Classes)
		l1, err := st.Step(x, labels, rand.New(rand.NewPCG(10, 11)))
		if err != nil {
			t.Fatal(err)
		}
		l2, err := sep.Step(x, labels, rand.New(rand.NewPCG(10, 11)))
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(l1-l2) > 1e-12 {
			t.Errorf("%dx%d: loss stacked %.17g, separate %.17g", c.InH, c.InW, l1, l2)
		}
		for j := range st.GradMu {
			if d := maxAbsDiff(st.GradMu[j], sep.GradMu[j]); d > 1e-12 {
				t.Errorf("%dx%d param %d: dμ differs by %g", c.InH, c.InW, j, d)
			}
			if d := maxAbsDiff(st.GradRho[j], sep.GradRho[j]); d > 1e-12 {
				t.Errorf("%dx%d param %d: dρ differs by %g", c.InH, c.InW, j, d)
			}
		}
	}
}

// The whole network's gradients (through conv, ReLU, pooling, dense and the
// loss) and the reparameterisation's chain rule, against finite differences
// of the loss with the noise held fixed.
func TestBayesFiniteDifferences(t *testing.T) {
	for _, stacked := range []bool{true, false} {
		b := newBayesInit(t, smallBCNN(Options{}), 2, stacked, 3)
		rng := rand.New(rand.NewPCG(4, 5))
		x, labels := batch(rng, 3, 1, 14, 13, 5)
		if _, err := b.Step(x, labels, rng); err != nil {
			t.Fatal(err)
		}
		loss := func() float64 {
			v, err := b.Evaluate(x, labels)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		gm := make([][]float64, len(b.Mu))
		gr := make([][]float64, len(b.Mu))
		for j := range b.Mu {
			gm[j] = append([]float64(nil), b.GradMu[j]...)
			gr[j] = append([]float64(nil), b.GradRho[j]...)
		}
		params := b.Net.Params()
		for j := range b.Mu {
			name := params[j].Name
			fdCheck(t, name+" dμ", 1e-5, rng, b.Mu[j], gm[j], loss)
			fdCheck(t, name+" dρ", 1e-5, rng, b.Rho[j], gr[j], loss)
		}
	}
}

func TestNetErrors(t *testing.T) {
	net, err := NewBCNN(BCNNConfig{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = net.Forward(NewTensor(2, 1, 28, 27), []int{0, 1})
	if err == nil || err.Error() != `conv2d "conv1": input shape [2 1 28 27], want [2 1 28 28]` {
		t.Errorf("wrong input: %v", err)
	}
	if err := net.Backward(); err == nil {
		t.Error("Backward before Forward accepted")
	}
	if _, err := NewBCNN(BCNNConfig{InH: 10, InW: 10}); err == nil {
		t.Error("10×10 input accepted for two 5×5 convolutions and poolings")
	}
	if _, err := NewBayes(BCNNConfig{}, 0, true); err == nil {
		t.Error("zero samples accepted")
	}
}

func TestSoftplus(t *testing.T) {
	for _, u := range []float64{-800, -30, -1, 0, 1, 29, 31, 800} {
		want := math.Log1p(math.Exp(u))
		if u > 700 {
			want = u
		}
		if got := softplus(u); math.Abs(got-want) > 1e-15*math.Max(1, want) {
			t.Errorf("softplus(%g) = %g, want %g", u, got, want)
		}
		if got, want := sigmoid(u), 1/(1+math.Exp(-u)); math.Abs(got-want) > 1e-16 {
			t.Errorf("sigmoid(%g) = %g, want %g", u, got, want)
		}
	}
}

// Steady state: forward+backward of the whole network and a stacked
// Bayesian step allocate nothing (the naive BLAS keeps the BLAS out of the
// count; the pool's goroutines count, AllocsPerRun reads global stats).
func TestNoAllocsSteadyState(t *testing.T) {
	t.Run("naive", func(t *testing.T) { testNoAllocs(t, smallBCNN(naiveOptions()), 4) })
	// The project's native BLAS promises no allocations either.
	t.Run("native", func(t *testing.T) { testNoAllocs(t, smallBCNN(Options{}), 4) })
	t.Run("native-batch1", func(t *testing.T) { testNoAllocs(t, smallBCNN(Options{}), 1) })
	t.Run("native-paper", func(t *testing.T) {
		if testing.Short() || underEmulation() {
			t.Skip("paper-size network: skipped in short mode and under emulation")
		}
		testNoAllocs(t, BCNNConfig{}, 64)
	})
}

func testNoAllocs(t *testing.T, cfg BCNNConfig, n int) {
	rng := rand.New(rand.NewPCG(1, 1))
	net, err := NewBCNN(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range net.Params() {
		fill(rng, p.Value)
	}
	cfg.defaults()
	x, labels := batch(rng, n, cfg.InChannels, cfg.InH, cfg.InW, cfg.Classes)
	run := func() {
		if _, err := net.Forward(x, labels); err != nil {
			t.Fatal(err)
		}
		if err := net.Backward(); err != nil {
			t.Fatal(err)
		}
	}
	if a := testing.AllocsPerRun(10, run); a != 0 {
		t.Errorf("network forward+backward: %v allocations per run", a)
	}
	b := newBayesInit(t, cfg, 3, true, 2)
	if a := testing.AllocsPerRun(5, func() {
		if _, err := b.Step(x, labels, rng); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("stacked Bayesian step: %v allocations per run", a)
	}
}

// The noise depends on the caller's seed only, not on how many workers
// draw it.
func TestBayesNoiseIndependentOfWorkers(t *testing.T) {
	var eps [2][][]float64
	var loss [2]float64
	for k, workers := range []int{1, 3} {
		cfg := smallBCNN(Options{Workers: workers})
		b := newBayesInit(t, cfg, 2, true, 5)
		x, labels := batch(rand.New(rand.NewPCG(6, 7)), 3, 1, 14, 13, 5)
		var err error
		if loss[k], err = b.Step(x, labels, rand.New(rand.NewPCG(8, 9))); err != nil {
			t.Fatal(err)
		}
		eps[k] = b.Eps
	}
	for j := range eps[0] {
		if d := maxAbsDiff(eps[0][j], eps[1][j]); d != 0 {
			t.Errorf("param %d: noise differs by %g between 1 and 3 workers", j, d)
		}
	}
	if math.Abs(loss[0]-loss[1]) > 1e-12 {
		t.Errorf("loss %v with 1 worker, %v with 3", loss[0], loss[1])
	}
}

// Distinct networks may run at once (the FL clients do): the shared worker
// pool then runs some chunks inline, and the results must not change.
func TestConcurrentNetworks(t *testing.T) {
	const nets = 4
	rng := rand.New(rand.NewPCG(21, 22))
	x, labels := batch(rng, 5, 1, 14, 13, 5)
	var bs [nets]*Bayes
	var want [nets]float64
	for i := range bs {
		bs[i] = newBayesInit(t, smallBCNN(Options{}), 2, i%2 == 0, uint64(i))
		var err error
		if want[i], err = bs[i].Step(x, labels, rand.New(rand.NewPCG(uint64(i), 1))); err != nil {
			t.Fatal(err)
		}
	}
	var got [nets]float64
	var errs [nets]error
	done := make(chan int)
	for i := range bs {
		go func() {
			for range 5 {
				got[i], errs[i] = bs[i].Step(x, labels, rand.New(rand.NewPCG(uint64(i), 1)))
			}
			done <- i
		}()
	}
	for range bs {
		<-done
	}
	for i := range bs {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if got[i] != want[i] {
			t.Errorf("network %d: loss %v concurrently, %v alone", i, got[i], want[i])
		}
	}
}

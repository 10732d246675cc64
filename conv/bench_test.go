package conv

import (
	"math/rand/v2"
	"testing"
)

// The paper's network at batch 64; `pacpfl bench conv` reports the same
// figures alternated and as minima.

func benchNet(b *testing.B, S int, stacked bool) {
	rng := rand.New(rand.NewPCG(1, 2))
	bay, err := NewBayes(BCNNConfig{}, S, stacked)
	if err != nil {
		b.Fatal(err)
	}
	for j := range bay.Mu {
		for i := range bay.Mu[j] {
			bay.Mu[j][i] = 0.05 * rng.NormFloat64()
			bay.Rho[j][i] = -5
		}
	}
	x, labels := batch(rng, 64, 1, 28, 28, 10)
	b.ResetTimer()
	for range b.N {
		if _, err := bay.Step(x, labels, rng); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBCNNFwdBwd(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	net, err := NewBCNN(BCNNConfig{})
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range net.Params() {
		for i := range p.Value {
			p.Value[i] = 0.05 * rng.NormFloat64()
		}
	}
	x, labels := batch(rng, 64, 1, 28, 28, 10)
	b.ResetTimer()
	for range b.N {
		if _, err := net.Forward(x, labels); err != nil {
			b.Fatal(err)
		}
		if err := net.Backward(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBayesL5Stacked(b *testing.B)  { benchNet(b, 5, true) }
func BenchmarkBayesL5Separate(b *testing.B) { benchNet(b, 5, false) }

func BenchmarkConv2FwdBwd(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	l, err := NewConv2D(
		Conv2DConfig{Name: "conv2", InChannels: 10, InH: 12, InW: 12, OutChannels: 62, KernelH: 5, KernelW: 5})
	if err != nil {
		b.Fatal(err)
	}
	fill(rng, l.Weight)
	x := randTensor(rng, 64, 10, 12, 12)
	dy := randTensor(rng, 64, 62, 8, 8)
	b.ResetTimer()
	for range b.N {
		if _, err := l.Forward(x); err != nil {
			b.Fatal(err)
		}
		if _, err := l.Backward(dy); err != nil {
			b.Fatal(err)
		}
	}
}

// The paper's first layer (shared 1×28×28 input) for 5 weight samples: one
// stacked layer (one im2col, one GEMM with 50 filters) against five
// single-sample calls.
func benchConv1Samples(b *testing.B, stacked bool) {
	const S = 5
	rng := rand.New(rand.NewPCG(1, 2))
	samples := 1
	if stacked {
		samples = S
	}
	l, err := NewConv2D(
		Conv2DConfig{Name: "conv1", InChannels: 1, InH: 28, InW: 28, OutChannels: 10, KernelH: 5, KernelW: 5,
			Samples: samples, SkipInputGrad: true})
	if err != nil {
		b.Fatal(err)
	}
	fill(rng, l.Weight)
	x := randTensor(rng, 64, 1, 28, 28)
	dy := randTensor(rng, 64, samples*10, 24, 24)
	b.ResetTimer()
	for range b.N {
		for range S / samples {
			if _, err := l.Forward(x); err != nil {
				b.Fatal(err)
			}
			if _, err := l.Backward(dy); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkConv1L5Stacked(b *testing.B)  { benchConv1Samples(b, true) }
func BenchmarkConv1L5Separate(b *testing.B) { benchConv1Samples(b, false) }

package fedvi

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkClientStep is one client-SGD step of the paper's network on a
// mini-batch of 256 28×28 images (128 support + 128 query), one thread.
func BenchmarkClientStep(b *testing.B) {
	m, err := NewModel(Paper(10), nil)
	if err != nil {
		b.Fatal(err)
	}
	theta := make([]float64, m.NumParams())
	rng := rand.New(rand.NewPCG(1, 2))
	m.Init(theta, rng)
	x := make([]float64, 256*784)
	y := make([]float64, 256)
	for i := range x {
		x[i] = rng.Float64()
	}
	for i := range y {
		y[i] = float64(i % 10)
	}
	o := DefaultOptions()
	out := make([]float64, len(theta))
	b.ResetTimer()
	for range b.N {
		if _, err := m.ClientUpdate(theta, out, x, y, &o, rng); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Seconds())/float64(b.N)/256*1e3, "ms/image")
}

// BenchmarkEvalImage is E's forward pass in evaluation, per 256 images.
func BenchmarkEvalImage(b *testing.B) {
	m, err := NewModel(Paper(10), nil)
	if err != nil {
		b.Fatal(err)
	}
	theta := make([]float64, m.NumParams())
	rng := rand.New(rand.NewPCG(1, 2))
	m.Init(theta, rng)
	x := make([]float64, 256*784)
	for i := range x {
		x[i] = rng.Float64()
	}
	if err := m.Personalise(theta, x[:784*10]); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := m.Predict(x, 10, rng); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Seconds())/float64(b.N)/256*1e3, "ms/image")
}

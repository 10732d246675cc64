package pfedbayes

import (
	"math/rand/v2"
	"testing"

	"github.com/pacpfl/pacpfl/fl/internal/meanfield"
	"github.com/pacpfl/pacpfl/lml"
)

// benchSetup is the benchmarks' worker on MLP 784-100-10 with a batch of
// 100 random images, and the client's and server's (μ, ρ) with μ drawn
// from N(0, 0.1²) and ρ = rho0.
func benchSetup(b *testing.B, rho0 float64) (w *worker, vi, vw, x, y []float64, r *rand.Rand) {
	w, err := newWorker(lml.BNN{Arch: lml.ArchMLP})
	if err != nil {
		b.Fatal(err)
	}
	nw := w.net.NumWeights()
	r = rand.New(rand.NewPCG(1, 1))
	vi, vw = make([]float64, 2*nw), make([]float64, 2*nw)
	for j := 0; j < nw; j++ {
		vi[j], vw[j] = 0.1*r.NormFloat64(), 0.1*r.NormFloat64()
		vi[nw+j], vw[nw+j] = rho0, rho0
	}
	x, y = make([]float64, 100*784), make([]float64, 100)
	for i := range x {
		x[i] = r.Float64()
	}
	for i := range y {
		y[i] = float64(i % 10)
	}
	return w, vi, vw, x, y, r
}

// BenchmarkStep is one client iteration of the paper's setting: MLP
// 784-100-10, b = 100, K = 1 (a batch of random pixels).
func BenchmarkStep(b *testing.B) {
	w, vi, vw, x, y, r := benchSetup(b, -2.5)
	o := DefaultOptions()
	w.begin(vi, vw)
	w.nrm = meanfield.NewNormals(r)
	b.ResetTimer()
	for range b.N {
		if _, err := w.step(x, y, 250, &o); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCodeStep is one local iteration of the Code variant (5
// personalised Adam steps and one global one) on the same network and batch.
func BenchmarkCodeStep(b *testing.B) {
	w, vi, vw, x, y, r := benchSetup(b, -3)
	nw := w.net.NumWeights()
	o := CodeOptions()
	w.beginCode(vi, vw)
	z := func() *adamState { return &adamState{m: make([]float64, 2*nw), s: make([]float64, 2*nw)} }
	w.adamQ, w.adamW = z(), z()
	w.nrm = meanfield.NewNormals(r)
	b.ResetTimer()
	for range b.N {
		if _, err := w.codeStep(x, y, &o); err != nil {
			b.Fatal(err)
		}
	}
}

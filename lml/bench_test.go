package lml

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/pacpfl/pacpfl/conv"
	"github.com/pacpfl/pacpfl/linalg"
)

// BenchmarkWorkspaceLML times one particle's LML + gradient on one thread,
// the unit of work of the particle-parallel split.
func BenchmarkWorkspaceLML(b *testing.B) {
	md := DefaultModel(15)
	for _, m := range []int{150, 610, 2000} {
		rng := rand.New(rand.NewPCG(1, uint64(m)))
		phi, X, y := testProblem(rng, md, m, 0.5)
		ws, _ := NewWorkspace(md, linalg.NewNative(1))
		g := make([]float64, md.NumParams())
		b.Run(fmt.Sprintf("m=%d", m), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := ws.LML(phi, X, y, g); err != nil {
					b.Fatal(err)
				}
			}
			fm := float64(m)
			b.ReportMetric(fm*fm*fm/1e9/(b.Elapsed().Seconds()/float64(b.N)), "GFLOP/s")
		})
	}
}

// BenchmarkEvaluator times a client update of k = 4 particles per split.
func BenchmarkEvaluator(b *testing.B) {
	md := DefaultModel(15)
	np := md.NumParams()
	const k = 4
	for _, m := range []int{150, 610, 2000} {
		rng := rand.New(rand.NewPCG(2, uint64(m)))
		_, X, y := testProblem(rng, md, m, 0.5)
		phis := make([]float64, k*np)
		for κ := 0; κ < k; κ++ {
			p, _, _ := testProblem(rng, md, 1, 0.5)
			copy(phis[κ*np:], p)
		}
		lmls := make([]float64, k)
		grads := make([]float64, k*np)
		for _, split := range []Split{SplitParticles, SplitBLAS} {
			ev, _ := NewEvaluator(md, EvaluatorOptions{Split: split})
			b.Run(fmt.Sprintf("m=%d/%v", m, split), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if err := ev.Evaluate(lmls, grads, phis, X, y); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// One particle's LML (38) and gradient, L = 5, batch 64 (`pacpfl bench bnn`
// reports the client update and its parts side by side).
func benchBNN(b *testing.B, m BNN) {
	rng := rand.New(rand.NewPCG(1, 2))
	e, err := NewBNNEstimator(m, DefaultBNNSamples, conv.Options{})
	if err != nil {
		b.Fatal(err)
	}
	phi := m.HyperPriorMean()
	X, y := randomBatch(m, rng, 64)
	grad := make([]float64, len(phi))
	b.ResetTimer()
	for range b.N {
		if _, err := e.LML(phi, X, y, 4, rng, grad); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBNNLMLMLP(b *testing.B)  { benchBNN(b, BNN{Arch: ArchMLP}) }
func BenchmarkBNNLMLBCNN(b *testing.B) { benchBNN(b, BNN{Arch: ArchBCNN}) }

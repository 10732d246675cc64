package fedavg

import (
	"math/rand/v2"
	"testing"

	"github.com/pacpfl/pacpfl/fl/internal/flatnet"
	"github.com/pacpfl/pacpfl/lml"
)

// BenchmarkStep is one local FedProx step of the paper's setting: MLP
// 784-100-10, b = 100 (a batch of random pixels).
func BenchmarkStep(b *testing.B) {
	a := lml.BNN{Arch: lml.ArchMLP}
	k, err := newWorker(a)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 1))
	w := make([]float64, k.net.NumWeights())
	if err := flatnet.InitUniform(a, w, r); err != nil {
		b.Fatal(err)
	}
	start := append([]float64(nil), w...)
	x, y := make([]float64, 100*784), make([]float64, 100)
	for i := range x {
		x[i] = r.Float64()
	}
	for i := range y {
		y[i] = float64(i % 10)
	}
	o := FedProxOptions()
	b.ResetTimer()
	for range b.N {
		if _, err := k.step(w, start, x, y, o.LR, o.Mu); err != nil {
			b.Fatal(err)
		}
	}
}

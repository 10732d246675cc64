package fl

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pacpfl/pacpfl/lml"
)

// priorNetsRowwise is the prior networks' forward pass a data row at a
// time, the reference for priorMoments' layer-at-a-time pass: it returns
// the mean network's outputs (m) and the kernel network's features (m×DF).
func priorNetsRowwise(md lml.Model, phi, X []float64) (mean, F []float64) {
	m := len(X) / md.D
	blocks := md.Layout()
	bi := 0
	forward := func(hidden []int, out int) []float64 {
		res := make([]float64, m*out)
		for r := 0; r < m; r++ {
			h := X[r*md.D : (r+1)*md.D]
			for l := 0; l <= len(hidden); l++ {
				wb, bb := blocks[bi+2*l], blocks[bi+2*l+1]
				o, in := wb.Shape[0], wb.Shape[1]
				a := make([]float64, o)
				for i := range a {
					s := phi[bb.Offset+i]
					for j, wv := range phi[wb.Offset+i*in : wb.Offset+i*in+in] {
						s += wv * h[j]
					}
					if l < len(hidden) {
						s = math.Tanh(s)
					}
					a[i] = s
				}
				h = a
			}
			copy(res[r*out:], h)
		}
		bi += 2 * (len(hidden) + 1)
		return res
	}
	mean = forward(md.MeanHidden, 1)
	F = forward(md.KernelHidden, md.DF)
	return mean, F
}

// The four-rows-at-a-time prior networks give the row-at-a-time pass's
// values to the bit: the mean, and the kernel matrix of the features.
func TestPriorMomentsMatchRowwise(t *testing.T) {
	models := []lml.Model{
		smallGP().Model,
		lml.DefaultModel(3),
		{D: 2, DF: 3, MeanHidden: []int{5, 7, 3}, KernelHidden: []int{6}},
		{D: 4, DF: 1, MeanHidden: nil, KernelHidden: []int{9, 2}},
	}
	for mi, md := range models {
		g := &GPModel{Model: md}
		phi := randPhi(g, 1, uint64(10+mi))
		for _, m := range []int{0, 1, 3, 10, 37} {
			rng := rand.New(rand.NewPCG(uint64(m), uint64(mi)))
			X := make([]float64, m*md.D)
			for i := range X {
				X[i] = rng.NormFloat64() * 2
			}
			mean, K, _ := g.priorMoments(phi, X)
			wantMean, F := priorNetsRowwise(md, phi, X)
			for i := range wantMean {
				if math.Float64bits(mean[i]) != math.Float64bits(wantMean[i]) {
					t.Fatalf("model %d, m=%d: mean[%d] = %v, row at a time %v", mi, m, i, mean[i], wantMean[i])
				}
			}
			wantK := seKernel(F, m, md.DF)
			for i := range wantK {
				if math.Float64bits(K[i]) != math.Float64bits(wantK[i]) {
					t.Fatalf("model %d, m=%d: K[%d][%d] = %v, row at a time %v", mi, m, i/m, i%m, K[i], wantK[i])
				}
			}
		}
	}
}

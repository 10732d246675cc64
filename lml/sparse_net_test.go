package lml

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/pacpfl/pacpfl/linalg"
)

// The tile networks compute what mlp.forward and mlp.backward compute (up
// to rounding: GEMMs instead of per-row dot products), at any offset.
func TestTileNetworksMatchRowNetworks(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 41))
	bl := linalg.NewNative(1)
	for mi, md := range append(testModels, DefaultModel(15)) {
		np := md.NumParams()
		mean := newMLP(md.D, md.MeanHidden, 1, 0)
		kern := newMLP(md.D, md.KernelHidden, md.DF, mean.end)
		for _, nt := range []int{1, 2, 7, 40} {
			phi, X, _ := testProblem(rng, md, nt, 0.5)
			for _, n := range []*mlp{&mean, &kern} {
				const off = 3
				acts := func(rows int) [][]float64 {
					a := make([][]float64, n.layers())
					for l, w := range n.widths {
						a[l] = make([]float64, rows*w)
					}
					return a
				}
				want, got := acts(nt), acts(nt+off)
				n.forward(phi, X, nt, want)
				n.forwardRows(bl, phi, X, nt, off, got)
				for l := range want {
					assert.LessOrEqual(t, relErr(got[l][off*n.widths[l]:], want[l]), 1e-14, "model %d nt %d layer %d",
						mi, nt, l)
				}
				seed := make([]float64, nt*n.out())
				for i := range seed {
					seed[i] = rng.NormFloat64()
				}
				mw := n.maxWidth()
				gw, gg := make([]float64, np), make([]float64, np)
				gw[0], gg[0] = 0.5, 0.5 // accumulates, does not overwrite
				n.backward(phi, X, nt, want, seed, gw, make([]float64, nt*mw), make([]float64, nt*mw))
				n.backwardRows(bl, phi, X, nt, off, got, seed, gg, make([]float64, nt*mw), make([]float64, nt*mw))
				assert.LessOrEqual(t, relErr(gg, gw), 1e-13, "model %d nt %d gradient", mi, nt)
			}
		}
	}
}

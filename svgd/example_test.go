package svgd_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pacpfl/pacpfl/svgd"
)

// SVGD moves 50 particles onto the 2-D Gaussian N((3, −1), diag(0.5², 2²)):
// each step needs only the score ∇ ln p at every particle.
func Example() {
	const k, d = 50, 2
	target, _ := svgd.NewGaussian([]float64{3, -1}, []float64{0.5, 2})
	s, _ := svgd.New(k, d)
	phi := make([]float64, k*d)
	start, _ := svgd.Isotropic([]float64{0, 0}, 1)
	_ = start.SampleRows(phi, rand.New(rand.NewPCG(1, 2)))
	scores := make([]float64, k*d)
	opt := &svgd.Ascent{LR: 0.1}
	for step := 0; step < 2000; step++ {
		clear(scores)
		_ = target.AddGradRows(scores, phi) // ∇ ln p(φ_κ) for every row κ
		if err := s.Step(phi, scores, opt); err != nil {
			fmt.Println(err)
			return
		}
	}
	// The particles recover the mean; with 50 particles in 2-D the median
	// heuristic's bandwidth leaves the spread a little short of the target's.
	for j := 0; j < d; j++ {
		var mean, sq float64
		for r := 0; r < k; r++ {
			mean += phi[r*d+j] / k
		}
		for r := 0; r < k; r++ {
			sq += (phi[r*d+j] - mean) * (phi[r*d+j] - mean) / (k - 1)
		}
		fmt.Printf("coordinate %d: mean %.1f, std %.2f\n", j, mean, math.Sqrt(sq))
	}
	// Output:
	// coordinate 0: mean 3.0, std 0.48
	// coordinate 1: mean -1.0, std 1.91
}

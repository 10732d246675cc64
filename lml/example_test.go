package lml_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pacpfl/pacpfl/linalg"
	"github.com/pacpfl/pacpfl/lml"
)

// The log marginal likelihood of a GP prior with a deep mean and a deep
// kernel on five points, its gradient with respect to every prior
// parameter (checked here against a finite difference), and the predictive
// of two prior particles conditioned on the points.
func Example() {
	model := lml.Model{D: 1, DF: 2, MeanHidden: []int{4}, KernelHidden: []int{4}}
	fmt.Println("prior parameters dφ =", model.NumParams())

	// Two particles φ₁, φ₂ drawn around the hyper-prior mean.
	rng := rand.New(rand.NewPCG(1, 2))
	dphi := model.NumParams()
	phis := make([]float64, 2*dphi)
	for r := 0; r < 2; r++ {
		copy(phis[r*dphi:], model.HyperPriorMean())
		for j := 0; j < dphi; j++ {
			phis[r*dphi+j] += 0.5 * rng.NormFloat64()
		}
	}
	X := []float64{-1, -0.5, 0, 0.5, 1}
	y := []float64{-0.8, -0.4, 0.1, 0.5, 0.9}

	ws, err := lml.NewWorkspace(model, linalg.NewNative(1))
	if err != nil {
		fmt.Println(err)
		return
	}
	grad := make([]float64, dphi)
	phi := phis[:dphi]
	l, err := ws.LML(phi, X, y, grad)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("ln p(y | X, φ₁) = %.4f\n", l)
	const h = 1e-6
	phi[0] += h
	lp, _ := ws.LML(phi, X, y, nil)
	phi[0] -= 2 * h
	lm, _ := ws.LML(phi, X, y, nil)
	phi[0] += h
	fd := (lp - lm) / (2 * h)
	fmt.Println("∂/∂φ[0] matches a finite difference:", math.Abs(grad[0]-fd) < 1e-6*math.Max(1, math.Abs(fd)))

	// Personalisation and prediction (eqs. 35–37): each particle's GP
	// posterior, mixed with weights ∝ its marginal likelihood.
	p, _ := lml.NewPredictor(model, linalg.NewNative(1))
	if err := p.Fit(phis, X, y); err != nil {
		fmt.Println(err)
		return
	}
	var mix lml.Mixture
	if err := p.Predict([]float64{0.25}, &mix); err != nil {
		fmt.Println(err)
		return
	}
	w := p.Weights()
	fmt.Printf("mixture weights sum to %.1f\n", w[0]+w[1])
	fmt.Printf("prediction at x = 0.25: mean %.2f, std %.2f\n", mix.Mean(0), math.Sqrt(mix.Variance(0)))
	// Output:
	// prior parameters dφ = 32
	// ln p(y | X, φ₁) = -4.7244
	// ∂/∂φ[0] matches a finite difference: true
	// mixture weights sum to 1.0
	// prediction at x = 0.25: mean 0.26, std 0.55
}

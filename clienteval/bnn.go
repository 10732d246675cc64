package clienteval

import (
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/pacpfl/pacpfl/conv"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/lml"
)

// BNNFormula is the estimate BNNResult holds, in the names of its fields.
const BNNFormula = "lml = LSE_j(s_j) − ln L, s_j = Σ_i ln softmax(h_{θ_j}(x_i))_{y_i}, θ_j = μ + exp(ω/2)·eps[j]; " +
	"μ = phi[:num_weights], ω = phi[num_weights:]"

// BNNResult is one BNN evaluation, as pacpfl bnn eval --json prints it.
// The estimate is
//
//	lml = LSE_j(s_j) − ln L,  s_j = Σ_i ln softmax(h_{θ_j}(x_i))_{y_i},  θ_j = μ + e^{ω/2} ∘ ε_j,
//
// on all m rows (β = m), φ = (μ, ω) laid out as Layout says, Eps[j] the
// draws of sample j in the order of θ (the μ blocks of Layout without the
// "mu." prefix), and Grad = ∂lml/∂φ in the layout of φ.
type BNNResult struct {
	LML        float64     `json:"lml"`
	M          int         `json:"m"`
	D          int         `json:"d"`
	Classes    int         `json:"classes"`
	Arch       string      `json:"arch"`
	Samples    int         `json:"samples"`
	NumWeights int         `json:"num_weights"`
	NumParams  int         `json:"num_params"`
	SigmaMu    float64     `json:"sigma_mu"`
	SigmaOmega float64     `json:"sigma_omega"`
	Phi        []float64   `json:"phi"`
	Eps        [][]float64 `json:"eps"`
	Grad       []float64   `json:"grad"`
	Layout     []lml.Block `json:"layout"`
	Formula    string      `json:"formula"`
}

// BNNConfig is one BNN evaluation: the network, L weight samples, the
// hyper-prior's standard deviations and the seed of φ's draw from it (the
// same stream then draws ε).
type BNNConfig struct {
	Model               lml.BNN
	Samples             int
	SigmaMu, SigmaOmega float64
	Seed                uint64
}

// MemoryBytes is a lower bound on the memory of c on m rows: φ, its
// gradient, L×|θ| draws and the network of L samples (weights, gradients
// and the activations of all m rows), counted in float64.
func (c BNNConfig) MemoryBytes(m int) float64 {
	nw := float64(c.Model.NumWeights())
	L := float64(c.Samples)
	acts := float64(m) * L * float64(c.Model.WithDefaults().Hidden+c.Model.Classes) * 4
	if c.Model.Arch == lml.ArchBCNN {
		acts = float64(m) * L * 10 * 24 * 24 * 4
	}
	return 8 * (4*nw + 3*L*nw + acts)
}

// BNN draws φ from the hyper-prior and evaluates the LML estimate (38) at
// it on the rows X (features) and class labels y, on one core.
func BNN(c BNNConfig, X, y []float64) (*BNNResult, error) {
	model := c.Model
	prior, err := fl.BNNHyperPrior(model, c.SigmaMu, c.SigmaOmega)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(c.Seed, initStream))
	phi := make([]float64, model.NumParams())
	prior.Sample(phi, rng)
	e, err := lml.NewBNNEstimator(model, c.Samples, conv.Options{Workers: 1})
	if err != nil {
		return nil, err
	}
	grad := make([]float64, len(phi))
	v, err := e.LML(phi, X, y, 1, rng, grad)
	if err == nil {
		err = finite(v, grad)
	}
	if err != nil {
		return nil, err
	}
	n := model.NumWeights()
	eps := make([][]float64, c.Samples)
	for j := range eps {
		eps[j] = e.Noise()[j*n : (j+1)*n]
	}
	return &BNNResult{
		LML: v, M: len(y), D: len(X) / max(1, len(y)), Classes: model.Classes, Arch: model.String(),
		Samples:    c.Samples,
		NumWeights: n, NumParams: len(phi), SigmaMu: c.SigmaMu, SigmaOmega: c.SigmaOmega,
		Phi: phi, Eps: eps, Grad: grad, Layout: model.PhiLayout(), Formula: BNNFormula,
	}, nil
}

// WriteText prints r as two lines: the estimate to full precision, then
// the network, the sizes and the gradient's norm.
func (r *BNNResult) WriteText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "lml %.17g\n%s: m %d  d %d  L %d  |θ| %d  dφ %d  |grad| %.6g\n",
		r.LML, r.Arch, r.M, r.D, r.Samples, r.NumWeights, r.NumParams, Norm2(r.Grad))
	return err
}

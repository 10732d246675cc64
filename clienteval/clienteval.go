// Package clienteval evaluates one client model's log marginal likelihood
// for one prior φ on one data set, with its gradient: the GP's exact LML
// (eq. 33) or its sparse Titsias lower bound, and the BNN's LML estimate
// (38) with the standard-normal draws it used. Each result carries what
// another tool needs to recompute the figure (the layout of φ, the
// inducing inputs, ε), and a non-finite LML or gradient is an error, never
// a result.
package clienteval

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/lml"
	"github.com/pacpfl/pacpfl/option"
	"github.com/pacpfl/pacpfl/svgd"
)

// initStream is the PCG stream of the prior draws of InitSeed.
const initStream = 0x9e3779b97f4a7c15

// GPResult is one GP evaluation, as pacpfl gp eval --json prints it.
type GPResult struct {
	// LML is the log marginal likelihood (exact) or the Titsias lower
	// bound F on it (sparse); Grad its gradient with respect to φ (Z
	// held fixed).
	LML       float64     `json:"lml"`
	M         int         `json:"m"`
	D         int         `json:"d"`
	NumParams int         `json:"num_params"`
	NoiseStd  float64     `json:"noise_std"`
	Jitter    float64     `json:"jitter"` // exact: added to K + σ²I; sparse: added to K_uu
	Grad      []float64   `json:"grad"`
	Layout    []lml.Block `json:"layout"`
	// GPInference is what was computed: "exact" or "sparse" (auto
	// resolved).
	GPInference string `json:"gp_inference"`
	// Sparse: M, the seed of their choice and the M inducing inputs (rows
	// of D numbers, in the data's units: nothing is standardised), so
	// that another tool can recompute the bound from φ, the data and Z.
	Inducing       int         `json:"inducing,omitempty"`
	InducingSeed   *uint64     `json:"inducing_seed,omitempty"`
	InducingInputs [][]float64 `json:"inducing_inputs,omitempty"`
}

// GPMemoryBytes is a lower bound on the memory of a GP evaluation of model
// on m rows: φ and its gradient, and the m×m kernel matrix and its factor
// (exact) or the M×M matrices and the row blocks' (M+1)² sums (sparse),
// counted in float64 so that an absurd model does not overflow the count.
func GPMemoryBytes(model lml.Model, m int, sparse bool, M int) float64 {
	weights := func(hidden []int, out float64) float64 {
		w, in := 0.0, float64(model.D)
		for _, h := range hidden {
			w += (in + 1) * float64(h)
			in = float64(h)
		}
		return w + (in+1)*out
	}
	need := 2 * float64(m) * float64(m)
	if sparse {
		need = 24 * float64(M+1) * float64(M+1)
	}
	return 8 * (2*(weights(model.MeanHidden, 1)+weights(model.KernelHidden, float64(model.DF))) + need)
}

// GPPrior draws φ from model's default hyper-prior, an isotropic Gaussian
// of standard deviation sigmaP, with seed.
func GPPrior(model lml.Model, sigmaP float64, seed uint64) ([]float64, error) {
	prior, err := svgd.Isotropic(model.HyperPriorMean(), sigmaP)
	if err != nil {
		return nil, err
	}
	phi := make([]float64, model.NumParams())
	prior.Sample(phi, rand.New(rand.NewPCG(seed, initStream)))
	return phi, nil
}

// CheckParams refuses a φ read from path whose length is not model's, with
// an *option.FieldError naming the sizes of GPFile that set it (Hidden, DF).
func CheckParams(path string, phi []float64, model lml.Model) error {
	if len(phi) != model.NumParams() {
		return option.Format("", []string{"Hidden", "DF"}, "%[3]s: %[4]d parameters, but this model (see %[1]s, "+
			"%[2]s and the data's feature count) has %[5]d", path, len(phi), model.NumParams())
	}
	return nil
}

// GP evaluates model's LML at φ on the rows X (m×model.D) and targets y,
// exactly or, as inf plans it for m rows, its sparse lower bound with
// inducing inputs chosen from X; the computation uses every core, its
// result does not depend on their number.
func GP(model lml.Model, inf fl.GPInference, X, y, phi []float64) (*GPResult, error) {
	sparse, M, err := inf.Plan(len(y))
	if err != nil {
		return nil, err
	}
	d := model.D
	res := &GPResult{M: len(y), D: d, NumParams: model.NumParams(), NoiseStd: lml.NoiseStd(phi[model.NoiseIndex()]),
		Grad: make([]float64, model.NumParams()), Layout: model.Layout(), GPInference: fl.InferenceExact}
	var v float64
	if sparse {
		Z, zerr := inf.InducingFor(X, d, M)
		if zerr != nil {
			return nil, zerr
		}
		v, err = sparseLML(model, res, X, y, Z, phi)
		seed := inf.Seed
		res.GPInference, res.Inducing, res.InducingSeed = fl.InferenceSparse, M, &seed
		res.InducingInputs = make([][]float64, M)
		for i := range res.InducingInputs {
			res.InducingInputs[i] = Z[i*d : (i+1)*d : (i+1)*d]
		}
	} else {
		ws, werr := lml.NewWorkspace(model, nil)
		if werr != nil {
			return nil, werr
		}
		v, err = ws.LML(phi, X, y, res.Grad)
		res.Jitter = ws.Jitter()
	}
	if err == nil {
		err = finite(v, res.Grad)
	}
	if err != nil {
		return nil, fmt.Errorf("%w; %s", err, scaleHint(X, y))
	}
	res.LML = v
	return res, nil
}

// sparseLML evaluates the Titsias bound with inducing inputs Z and its
// gradient (into res.Grad).
func sparseLML(model lml.Model, res *GPResult, X, y, Z, phi []float64) (float64, error) {
	ws, err := lml.NewSparseWorkspace(model, lml.SparseOptions{})
	if err != nil {
		return 0, err
	}
	defer ws.Close()
	v, err := ws.Bound(phi, X, y, Z, res.Grad)
	res.Jitter = ws.Jitter()
	return v, err
}

// WriteText prints r as two lines: the LML (or bound) to full precision,
// then the sizes, the noise, the jitter and the gradient's norm.
func (r *GPResult) WriteText(w io.Writer) error {
	var err error
	if r.GPInference == fl.InferenceSparse {
		_, err = fmt.Fprintf(w, "bound %.17g (sparse, M = %d: the Titsias lower bound on the LML; "+
			"--json prints the inducing inputs)\n", r.LML, r.Inducing)
	} else {
		_, err = fmt.Fprintf(w, "lml %.17g\n", r.LML)
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "m %d  d %d  dφ %d  noise std %.6g  jitter %g  |grad| %.6g\n",
		r.M, r.D, r.NumParams, r.NoiseStd, r.Jitter, Norm2(r.Grad))
	return err
}

// Norm2 is the Euclidean norm, scaled so that it does not overflow while
// the norm itself is finite (a gradient of 1e200s has a finite norm).
func Norm2(x []float64) float64 { return floats.Norm(x, 2) }

// finite refuses a non-finite LML or gradient: printed, it would be a NaN
// "result".
func finite(lml float64, grad []float64) error {
	if math.IsNaN(lml) || math.IsInf(lml, 0) {
		return fmt.Errorf("the LML is %v", lml)
	}
	bad, first := 0, -1
	for i, g := range grad {
		if math.IsNaN(g) || math.IsInf(g, 0) {
			if bad++; first < 0 {
				first = i
			}
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d of the %d gradient components are not finite (the first, φ[%d], is %v)",
			bad, len(grad), first, grad[first])
	}
	return nil
}

// scaleHint says how large the data are and what to do about it: the usual
// cause of a non-finite LML is data far from order 1.
func scaleHint(X, y []float64) string {
	maxAbs := func(xs []float64) float64 {
		m := 0.0
		for _, v := range xs {
			m = math.Max(m, math.Abs(v))
		}
		return m
	}
	return fmt.Sprintf("the data reach |y| = %.3g and |x| = %.3g; the GP model expects values of order 1 "+
		"(and float64 squares overflow above about 1e154): standardise the features and the targets "+
		"(subtract the mean, divide by the standard deviation)", maxAbs(y), maxAbs(X))
}

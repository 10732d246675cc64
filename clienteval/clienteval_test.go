package clienteval

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/lml"
	"github.com/pacpfl/pacpfl/option"
)

func TestNorm2DoesNotOverflow(t *testing.T) {
	assert.Equal(t, 5.0, Norm2([]float64{3e300, 4e300})/1e300)
}

func TestFiniteRefusesNaNAndInf(t *testing.T) {
	require.NoError(t, finite(1, []float64{0, 1}))
	assert.ErrorContains(t, finite(math.NaN(), nil), "the LML is NaN")
	assert.ErrorContains(t, finite(0, []float64{0, math.Inf(1), math.NaN()}),
		"2 of the 3 gradient components are not finite (the first, φ[1], is +Inf)")
}

// The exact evaluation is the workspace's LML at the same φ; the sparse
// one with as many inducing inputs as rows is a lower bound on it.
func TestGPExactAndSparse(t *testing.T) {
	X := []float64{0.1, -0.4, 0.7, 1.0, -1.2, 0.3}
	y := []float64{0.2, -0.1, 0.5, 0.8, -0.9, 0.1}
	model := lml.Model{D: 1, DF: 2, MeanHidden: []int{3}, KernelHidden: []int{3}}
	phi, err := GPPrior(model, 0.5, 7)
	require.NoError(t, err)
	ex, err := GP(model, fl.GPInference{Mode: fl.InferenceExact}, X, y, phi)
	require.NoError(t, err)
	ws, err := lml.NewWorkspace(model, nil)
	require.NoError(t, err)
	want, err := ws.LML(phi, X, y, make([]float64, model.NumParams()))
	require.NoError(t, err)
	assert.Equal(t, want, ex.LML)
	assert.Equal(t, fl.InferenceExact, ex.GPInference)
	sp, err := GP(model, fl.GPInference{Mode: fl.InferenceSparse, Inducing: 6, Seed: 1}, X, y, phi)
	require.NoError(t, err)
	assert.Equal(t, fl.InferenceSparse, sp.GPInference)
	assert.Len(t, sp.InducingInputs, 6)
	assert.LessOrEqual(t, sp.LML, ex.LML+1e-9)
	assert.Greater(t, GPMemoryBytes(model, 6, false, 0), 0.0)
	var fe *option.FieldError
	require.ErrorAs(t, CheckParams("p", phi[1:], model), &fe)
	assert.Equal(t, []string{"Hidden", "DF"}, fe.Fields)
}

func TestBNNDeterministic(t *testing.T) {
	X := []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6}
	y := []float64{0, 1, 1}
	c := BNNConfig{Model: lml.BNN{Arch: lml.ArchMLP, InC: 1, InH: 1, InW: 2, Hidden: 3, Classes: 2}, Samples: 2,
		SigmaMu: 3, SigmaOmega: 1, Seed: 1}
	a, err := BNN(c, X, y)
	require.NoError(t, err)
	b, err := BNN(c, X, y)
	require.NoError(t, err)
	assert.Equal(t, a.LML, b.LML)
	assert.Equal(t, 2, a.D)
	assert.Len(t, a.Eps, 2)
	assert.Len(t, a.Eps[0], a.NumWeights)
	assert.Greater(t, c.MemoryBytes(3), 0.0)
}

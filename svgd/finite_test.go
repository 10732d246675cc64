package svgd

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 33: a direction that is not finite, or whose square overflows,
// would make Adam's second moment +Inf (or NaN) in that coordinate and
// freeze it for the rest of the run. Adam refuses it before changing
// anything: parameters, moments and step count are as before the call,
// both before the first step (no buffers yet) and after some steps.
func TestAdamRefusesNonFiniteStep(t *testing.T) {
	for _, bad := range []struct {
		v    float64
		want string
	}{
		{math.Inf(1), "not finite"},
		{math.Inf(-1), "not finite"},
		{math.NaN(), "not finite"},
		{1e300, "square that overflows"},
		{-2e154, "square that overflows"},
	} {
		for _, warm := range []int{0, 3} {
			a := NewAdam(0.01)
			x := []float64{1, -2, 0.5, 4}
			for s := 0; s < warm; s++ {
				require.NoError(t, a.Ascend(x, []float64{1, -1, 0.5, 2}))
			}
			x0, st0 := slices.Clone(x), a.State()
			dir := []float64{0.1, 0.2, bad.v, 0.3}
			err := a.Ascend(x, dir)
			require.Error(t, err, "%v accepted after %d steps", bad.v, warm)
			assert.ErrorContains(t, err, "direction[2]")
			assert.ErrorContains(t, err, bad.want)
			assert.Equal(t, x0, x, "parameters changed")
			assert.Equal(t, st0, a.State(), "Adam's state changed")
		}
	}
	// A huge but squarable direction is a legal step: v stays finite.
	a := NewAdam(0.01)
	x := []float64{0, 0}
	require.NoError(t, a.Ascend(x, []float64{1e150, -1e150}))
	for _, v := range a.State().V {
		assert.False(t, math.IsInf(v, 0) || math.IsNaN(v))
	}
	// Plain ascent refuses non-finite directions (a square is harmless there).
	x = []float64{1, 2}
	require.ErrorContains(t, (&Ascent{LR: 1}).Ascend(x, []float64{0, math.NaN()}), "direction[1]")
	assert.Equal(t, []float64{1, 2}, x)
	require.NoError(t, (&Ascent{LR: 1}).Ascend(x, []float64{0, 1e200}))
}

// Step with finite particles and scores whose kernel-weighted sum
// overflows: the error is returned before the optimiser runs.
func TestStepRefusesNonFiniteDirection(t *testing.T) {
	s, _ := New(2, 2)
	phi := []float64{0, 0, 1e-9, 0}
	sc := []float64{1.5e308, 1, 1.5e308, 1}
	a := NewAdam(0)
	require.NoError(t, a.Ascend(slices.Clone(phi), []float64{1, 1, 1, 1}))
	st0, phi0 := a.State(), slices.Clone(phi)
	err := s.Step(phi, sc, a)
	require.ErrorContains(t, err, "direction[0,0] = +Inf is not finite")
	assert.Equal(t, phi0, phi)
	assert.Equal(t, st0, a.State())
	// Finite direction whose squares overflow: Adam's own refusal.
	sc = []float64{1e160, 1, 1e160, 1}
	err = s.Step(phi, sc, a)
	require.ErrorContains(t, err, "square that overflows")
	assert.Equal(t, phi0, phi)
	assert.Equal(t, st0, a.State())
	// A good step after the refusals continues from the old state.
	b := NewAdam(0)
	require.NoError(t, b.SetState(st0))
	p2 := slices.Clone(phi)
	require.NoError(t, s.Step(phi, []float64{1, 2, 3, 4}, a))
	require.NoError(t, s.Step(p2, []float64{1, 2, 3, 4}, b))
	assert.Equal(t, p2, phi)
}

// SetState refuses moments no run of Adam produces; a refused state leaves
// the optimiser as it was.
func TestAdamSetStateRefusesPoison(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	a := NewAdam(0)
	x := randMatrix(rng, 1, 5, 1)
	for range 4 {
		require.NoError(t, a.Ascend(x, randMatrix(rng, 1, 5, 1)))
	}
	good := a.State()
	require.NoError(t, CheckAdamState(good))
	for name, c := range map[string]struct {
		mod  func(*AdamState)
		want string
	}{
		"v +Inf":  {func(s *AdamState) { s.V[3] = math.Inf(1) }, "v[3] = +Inf"},
		"v NaN":   {func(s *AdamState) { s.V[0] = math.NaN() }, "v[0] = NaN"},
		"v < 0":   {func(s *AdamState) { s.V[1] = -1e-12 }, "v[1] = -1e-12"},
		"m -Inf":  {func(s *AdamState) { s.M[2] = math.Inf(-1) }, "m[2] = -Inf"},
		"m NaN":   {func(s *AdamState) { s.M[4] = math.NaN() }, "m[4] = NaN"},
		"β1ᵗ = 1": {func(s *AdamState) { s.B1t = 1 }, "β1ᵗ = 1"},
		"β2ᵗ NaN": {func(s *AdamState) { s.B2t = math.NaN() }, "β2ᵗ = NaN"},
		"β2ᵗ < 0": {func(s *AdamState) { s.B2t = -0.5 }, "β2ᵗ = -0.5"},
	} {
		st := a.State()
		c.mod(&st)
		b := NewAdam(0)
		require.NoError(t, b.SetState(good))
		err := b.SetState(st)
		assert.ErrorContains(t, err, c.want, name)
		assert.Equal(t, good, b.State(), name+": state changed by a refused SetState")
	}
	// Before the first step the powers are not used.
	require.NoError(t, NewAdam(0).SetState(AdamState{B1t: 7}))
}

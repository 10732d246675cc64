package report

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacpfl/pacpfl/fl"
)

// A Float survives the file both ways: NaN and ±Inf are written as null
// (encoding/json alone refuses them) and null comes back as NaN, not as 0.
func TestFloatRoundTrip(t *testing.T) {
	in := []float64{1.5, math.NaN(), -2e-300, math.Inf(1), 0, math.Inf(-1)}
	b, err := json.Marshal(Floats(in))
	require.NoError(t, err)
	assert.Equal(t, `[1.5,null,-2e-300,null,0,null]`, string(b))
	var back []Float
	require.NoError(t, json.Unmarshal(b, &back))
	got := Float64s(back)
	require.Len(t, got, len(in))
	for i, x := range in {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			assert.True(t, math.IsNaN(got[i]), "element %d: %v", i, got[i])
		} else {
			assert.Equal(t, x, got[i], "element %d", i)
		}
	}
	var s struct{ X, Y Float }
	require.NoError(t, json.Unmarshal([]byte(`{"X":null,"Y":3}`), &s))
	assert.True(t, math.IsNaN(float64(s.X)))
	assert.Equal(t, Float(3), s.Y)
	assert.Error(t, json.Unmarshal([]byte(`{"X":"3"}`), &s), "a string is not a figure")
}

// Summarise keeps fl.Summarise's conventions: no interval for one seed,
// nothing for none, written as null.
func TestSummarise(t *testing.T) {
	xs := []float64{1, 2, 4}
	want := fl.Summarise(xs)
	got := Summarise(xs)
	assert.Equal(t, want.Mean, float64(got.Mean))
	assert.Equal(t, want.CI95, float64(got.CI95))
	b, err := json.Marshal(Summarise([]float64{7}))
	require.NoError(t, err)
	assert.JSONEq(t, `{"mean":7,"ci95":null}`, string(b))
	b, err = json.Marshal(Summarise(nil))
	require.NoError(t, err)
	assert.JSONEq(t, `{"mean":null,"ci95":null}`, string(b))
}

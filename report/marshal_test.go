package report

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacpfl/pacpfl/fl"
)

type embeddedPart struct {
	Inner float64 `json:"inner"`
	Skip  string  `json:"-"`
}

type reportLike struct {
	embeddedPart
	Name     string             `json:"name"`
	Value    float64            `json:"value"`
	Empty    string             `json:"empty,omitempty"`
	Opt      *fl.Bounds         `json:"opt,omitempty"`
	Bounds   *fl.Bounds         `json:"bounds"`
	Wrapped  Float              `json:"wrapped"`
	PerSeed  map[string]any     `json:"per_seed"`
	Arr      [2]float32         `json:"arr"`
	IntKeys  map[int]float64    `json:"int_keys"`
	Raw      json.RawMessage    `json:"raw"`
	Bytes    []byte             `json:"bytes"`
	NilSlice []float64          `json:"nil_slice"`
	Group    Summary            `json:"group"`
	Summ     map[string]float64 `json:"summ,omitempty"`
	private  float64
	NoTag    int
}

func sampleReport(x float64) reportLike {
	return reportLike{
		embeddedPart: embeddedPart{Inner: x, Skip: "no"},
		Name:         "r<&>", Value: x, Bounds: &fl.Bounds{Server: x, NewClient: 2, Description: "d"},
		Wrapped: Float(x), PerSeed: map[string]any{"b": []float64{1, x}, "a": map[string]float64{"z": x}},
		Arr: [2]float32{0.1, float32(x)}, IntKeys: map[int]float64{3: x, -1: 1}, Raw: json.RawMessage(`{"k":[1,2]}`),
		Bytes: []byte("hi"), Group: Summary{Mean: Float(x), CI95: 1}, private: x, NoTag: 7,
	}
}

// On finite data the report encoder writes exactly what encoding/json does
// (field names, order, omitempty, embedding, Marshalers, map key order).
func TestMarshalMatchesEncodingJSON(t *testing.T) {
	for _, x := range []float64{0, 1.5, -3e-30, 1e30} {
		v := sampleReport(x)
		want, err := json.MarshalIndent(v, "", "  ")
		require.NoError(t, err)
		got, err := Marshal(v, true)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got))
		want, _ = json.Marshal(&v)
		got, err = Marshal(&v, false)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got))
	}
}

// NaN and ±Inf become null at every depth, where encoding/json would fail
// and lose a finished run.
func TestMarshalNonFiniteIsNull(t *testing.T) {
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		v := sampleReport(x)
		_, err := json.Marshal(v)
		require.Error(t, err, "encoding/json refuses %v", x)
		got, err := Marshal(v, true)
		require.NoError(t, err)
		var back map[string]any
		require.NoError(t, json.Unmarshal(got, &back), "%s", got)
		assert.Nil(t, back["value"])
		assert.Nil(t, back["inner"])
		assert.Nil(t, back["bounds"].(map[string]any)["server"])
		assert.Equal(t, 2.0, back["bounds"].(map[string]any)["new_client"])
		assert.Nil(t, back["per_seed"].(map[string]any)["b"].([]any)[1])
		assert.Nil(t, back["per_seed"].(map[string]any)["a"].(map[string]any)["z"])
		assert.Nil(t, back["int_keys"].(map[string]any)["3"])
		assert.Nil(t, back["arr"].([]any)[1])
		assert.False(t, strings.Contains(string(got), "NaN") || strings.Contains(string(got), "Inf"))
	}
}

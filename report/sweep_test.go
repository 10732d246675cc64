package report

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/harness"
)

// A k-sweep built from a harness run writes one row per k with the groups'
// summaries and reads back the same; its table shows them.
func TestKSweepReadsBack(t *testing.T) {
	k1 := fixed{"k=1", []*fl.MethodResult{regression([]float64{0.5, 0.7}, []float64{0.1, 0.2}),
		regression([]float64{0.6, 0.8}, []float64{0.3, 0.4})}}
	k3 := fixed{"k=3", []*fl.MethodResult{regression([]float64{0.4, 0.6}, []float64{0.1, 0.1}),
		regression([]float64{0.5, 0.7}, []float64{0.2, 0.2})}}
	exp := harness.Experiment{Data: func(uint64) (*data.Dataset, error) { return &data.Dataset{}, nil },
		Methods: []harness.Method{k1, k3}, Seeds: []uint64{1, 2}}
	hr, err := harness.Run(context.Background(), exp, nil)
	require.NoError(t, err)
	_, err = NewKSweep("polynomial", 2, []int{1}, hr)
	assert.Error(t, err, "one k for two runs")
	s, err := NewKSweep("polynomial", 2, []int{1, 3}, hr)
	require.NoError(t, err)

	var back Sweep
	text := writeRead(t, s, &back)
	assert.NotContains(t, text, "dp_sweep")
	assert.Nil(t, back.DP)
	require.Len(t, back.K, 2)
	assert.Equal(t, []int{1, 3}, []int{back.K[0].K, back.K[1].K})
	assert.InDelta(t, 0.55, float64(back.K[1].Existing.RSMSE.Mean), 1e-12)
	assert.True(t, math.IsNaN(float64(back.K[0].New.RSMSE.Mean)), "no new clients: null, read as NaN")

	var b strings.Builder
	s.WriteKTable(&b, func(i int) string { return []string{"", "modes"}[i] })
	out := b.String()
	assert.Contains(t, out, "Polynomial, 2 existing clients, mean ± 95% CI over 2 seeds")
	assert.Contains(t, out, "| 3 | 0.55 ± ")
	assert.Contains(t, out, "| – | ")
	assert.Contains(t, out, "k = 3: modes\n")
	assert.NotContains(t, out, "k = 1:")
}

// WriteText is a k-sweep's table with each level's mode line from its
// per-seed values and the wall time, or a DP sweep's table with its
// private levels' mechanism.
func TestSweepWriteText(t *testing.T) {
	modes := map[string][]Float{harness.ExistingModePurity: {0.9, 0.7}, harness.ExistingModeChance: {0.5, 0.5},
		harness.NewModePurity: {0.8, 0.8}, harness.NewModeChance: {0.5, 0.5}}
	k := &Sweep{Dataset: "polynomial", Seeds: []uint64{1, 2}, Clients: 3, Seconds: 42,
		K: []KLevel{{K: 1, PerSeed: map[string][]Float{}}, {K: 2, PerSeed: modes}}}
	var want, got strings.Builder
	k.WriteKTable(&want, func(i int) string { return []string{"", ModeLine(float64Map(modes))}[i] })
	want.WriteString("wall time 42s\n")
	k.WriteText(&got)
	assert.Equal(t, want.String(), got.String())

	dp := &Sweep{Dataset: "polynomial", Seeds: []uint64{1}, Clients: 3,
		DP: []DPLevel{{Epsilon: Float(math.Inf(1))}, {Epsilon: 1, Mechanism: "gaussian", Delta: 1e-5}}}
	want.Reset()
	got.Reset()
	dp.WriteDPTable(&want, "gaussian")
	dp.WriteText(&got)
	assert.Equal(t, want.String(), got.String())
}

// float64Map is a per-seed map as plain numbers.
func float64Map(v map[string][]Float) map[string][]float64 {
	out := map[string][]float64{}
	for key, xs := range v {
		out[key] = Float64s(xs)
	}
	return out
}

// A level leaving out a group, a figure or ε reads them as undefined (NaN;
// for ε the non-private run), never as 0.
func TestSweepLevelMissingIsNaN(t *testing.T) {
	var s Sweep
	require.NoError(t, json.Unmarshal([]byte(`{"k_sweep":[{"k":2,"existing":{"rsmse":{"mean":0.4}}}],`+
		`"dp_sweep":[{"epsilon":null},{"new":{"ce":{"mean":null,"ci95":0.1}}}]}`), &s))
	require.Len(t, s.K, 1)
	l := s.K[0]
	assert.Equal(t, Float(0.4), l.Existing.RSMSE.Mean)
	for _, f := range []Float{l.Existing.RSMSE.CI95, l.Existing.CE.Mean, l.New.RSMSE.Mean, l.New.CE.CI95} {
		assert.True(t, math.IsNaN(float64(f)))
	}
	require.Len(t, s.DP, 2)
	assert.True(t, math.IsNaN(float64(s.DP[0].Epsilon)) && math.IsNaN(float64(s.DP[1].Epsilon)))
	assert.Equal(t, Float(0.1), s.DP[1].New.CE.CI95)
	assert.True(t, math.IsNaN(float64(s.DP[1].New.CE.Mean)))
	assert.Error(t, json.Unmarshal([]byte(`{"k_sweep":[{"k":"two"}]}`), &s))
	assert.Error(t, json.Unmarshal([]byte(`{"dp_sweep":[{"epsilon":"x"}]}`), &s))
}

func TestDatasetTitle(t *testing.T) {
	assert.Equal(t, "PV-EW(150)", DatasetTitle("pv-ew-150"))
	assert.Equal(t, "Polynomial", DatasetTitle("polynomial"))
	assert.Equal(t, "sites.csv", DatasetTitle("sites.csv"))
}

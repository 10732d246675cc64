package report

import (
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/harness"
)

// fixed is a method whose result on seed s is results[s-1].
type fixed struct {
	name    string
	results []*fl.MethodResult
}

func (f fixed) Name() string { return f.name }

func (f fixed) Run(_ context.Context, _ *data.Dataset, seed uint64, _ harness.Observer) (*fl.MethodResult, error) {
	return f.results[seed-1], nil
}

func regression(rsmse, ce []float64) *fl.MethodResult {
	return &fl.MethodResult{
		Existing: fl.GroupMetrics{RSMSE: rsmse, CE: ce, MeanRSMSE: fl.Mean(rsmse), MeanCE: fl.Mean(ce)},
		New:      fl.GroupMetrics{RSMSE: []float64{}, CE: []float64{}, MeanRSMSE: math.NaN(), MeanCE: math.NaN()},
	}
}

// assertSame checks that got holds want's values, NaN where want has NaN.
func assertSame(t *testing.T, want []float64, got []Float, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i, w := range want {
		if math.IsNaN(w) {
			assert.True(t, math.IsNaN(float64(got[i])), "%s[%d]: null must read back as NaN, got %v", what, i, got[i])
		} else {
			assert.Equal(t, w, float64(got[i]), "%s[%d]", what, i)
		}
	}
}

// The regression experiment report, built from a harness run, reads back
// through Results with every per-client value in place: an undefined one
// (a point predictor's CE) goes out as null and comes back as NaN.
func TestExperimentReadsAsResults(t *testing.T) {
	nan := math.NaN()
	gp := fixed{"pacpfl", []*fl.MethodResult{regression([]float64{0.5, 0.7}, []float64{0.1, 0.2}),
		regression([]float64{0.6, 0.8}, []float64{0.3, 0.4})}}
	mtl := fixed{"mtl", []*fl.MethodResult{regression([]float64{0.9, 1.1}, []float64{nan, nan}),
		regression([]float64{1.0, 1.2}, []float64{nan, nan})}}
	exp := harness.Experiment{Data: func(uint64) (*data.Dataset, error) { return &data.Dataset{}, nil },
		Methods: []harness.Method{gp, mtl}, Seeds: []uint64{1, 2}}
	hr, err := harness.Run(context.Background(), exp, nil)
	require.NoError(t, err)
	rep := NewExperiment("polynomial", hr)

	var res Results
	text := writeRead(t, rep, &res)
	assert.NotContains(t, text, "NaN")
	assert.Equal(t, "polynomial", res.Dataset)
	assert.Equal(t, []uint64{1, 2}, res.Seeds)
	require.Len(t, res.Methods, 2)
	for _, m := range []fixed{gp, mtl} {
		pc := res.Methods[m.name].PerClient
		require.Len(t, pc[harness.ExistingRSMSE], 2, m.name)
		for s, r := range m.results {
			assertSame(t, r.Existing.RSMSE, pc[harness.ExistingRSMSE][s], m.name+" existing_rsmse")
			assertSame(t, r.Existing.CE, pc[harness.ExistingCE][s], m.name+" existing_ce")
			assert.Empty(t, pc[harness.NewRSMSE][s], "no new clients")
		}
	}
	// The summaries: a point predictor has no CE, and no group is NaN in
	// the file.
	var back Experiment
	writeRead(t, rep, &back)
	assert.InDelta(t, 0.65, float64(back.Methods["pacpfl"].Existing.RSMSE.Mean), 1e-12)
	assert.True(t, math.IsNaN(float64(back.Methods["mtl"].Existing.CE.Mean)))
	assert.True(t, math.IsNaN(float64(back.Methods["pacpfl"].New.RSMSE.Mean)))
	assert.Equal(t, []Float{0.6, 0.7}, back.Methods["pacpfl"].PerSeed[harness.ExistingRSMSE])
}

func classification(acc, ce []float64, withNew bool) *fl.MethodResult {
	res := &fl.MethodResult{
		ExistingClass: &fl.ClassGroupMetrics{Accuracy: acc, CE: ce, MeanAccuracy: fl.Mean(acc), MeanCE: fl.Mean(ce)}}
	if withNew {
		res.NewClass = &fl.ClassGroupMetrics{Accuracy: []float64{50}, CE: []float64{0.5}, MeanAccuracy: 50, MeanCE: 0.5}
	}
	return res
}

// The Fashion-MNIST report reads back through the same Results.
func TestFMNISTReadsAsResults(t *testing.T) {
	results := []*fl.MethodResult{classification([]float64{80, 90}, []float64{0.1, math.NaN()}, true),
		classification([]float64{70, 60}, []float64{0.2, 0.3}, false)}
	var pc PerClient
	perSeed := map[string][]float64{}
	for _, r := range results {
		pc = pc.Add(r)
		for k, v := range harness.SeedValues(r) {
			perSeed[k] = append(perSeed[k], v)
		}
	}
	m := NewClassMethod(perSeed, pc)
	m.Weighted = &WeightedGroups{Existing: Weighted{Final: Summarise([]float64{85, 65}), LastRoundsNum: 1},
		History: [][]FedVIRound{{{Round: 1, Existing: 80, New: Float(math.NaN())}}}}
	rep := &FMNIST{Dataset: "fmnist", Partition: "labels5", Split: "small", Seeds: []uint64{3, 4},
		Methods: map[string]*ClassMethod{"pacpfl": m}}

	var res Results
	text := writeRead(t, rep, &res)
	assert.NotContains(t, text, "NaN")
	assert.Equal(t, "fmnist", res.Dataset)
	assert.Equal(t, []uint64{3, 4}, res.Seeds)
	got := res.Methods["pacpfl"].PerClient
	for s, r := range results {
		assertSame(t, r.ExistingClass.Accuracy, got[harness.ExistingAccuracy][s], "existing_accuracy")
		assertSame(t, r.ExistingClass.CE, got[harness.ExistingCE][s], "existing_ce")
	}
	assertSame(t, []float64{50}, got[harness.NewAccuracy][0], "new_accuracy")
	assert.Empty(t, got[harness.NewAccuracy][1], "the second seed has no new clients")

	var back FMNIST
	writeRead(t, rep, &back)
	assert.Equal(t, Float(75), back.Methods["pacpfl"].Existing.Accuracy.Mean)
	assert.Nil(t, back.Methods["pacpfl"].Global, "no global model")
	assert.True(t, math.IsNaN(float64(back.Methods["pacpfl"].Weighted.History[0][0].New)))
}

// The summary types are NaN-safe on their own, without Marshal: a report
// encoded by encoding/json, as a test or another tool may, writes the same
// bytes.
func TestSummariesNaNSafeWithoutMarshal(t *testing.T) {
	nan := Summarise(nil)
	for _, v := range []any{
		Group{RSMSE: nan, CE: Summarise([]float64{1})},
		ClassGroup{Accuracy: nan, CE: nan, Best: &nan},
		Weighted{Final: nan, LastRounds: Summarise([]float64{1, 2}), LastRoundsNum: 2},
		FedVIRound{Round: 1, Existing: Float(math.NaN())},
	} {
		want, err := json.MarshalIndent(v, "", "  ")
		require.NoError(t, err, "%T", v)
		got, err := Marshal(v, true)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got), "%T", v)
	}
}

package report

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/harness"
)

// AddOnce weights each client's accuracy by its test-set size, and takes
// the global model where a method has no personalised one.
func TestWeightedAddOnce(t *testing.T) {
	ds := &data.Dataset{
		Existing: []data.ClientData{{YTest: make([]float64, 1)}, {YTest: make([]float64, 3)}},
		New:      []data.ClientData{{YTest: make([]float64, 2)}, {YTest: make([]float64, 2)}},
	}
	var w WeightedRuns
	require.NoError(t, w.AddOnce(&fl.MethodResult{
		ExistingClass: &fl.ClassGroupMetrics{Accuracy: []float64{100, 0}},
		NewClass:      &fl.ClassGroupMetrics{Accuracy: []float64{50, 100}},
	}, ds))
	assert.Equal(t, []float64{25}, w.ExFinal) // 1 of 4 test images
	assert.Equal(t, []float64{75}, w.NewFinal)
	assert.False(t, w.Global)
	var g WeightedRuns
	require.NoError(t, g.AddOnce(&fl.MethodResult{GlobalClass: &fl.ClassGroupMetrics{Accuracy: []float64{0, 100}}}, ds))
	assert.Equal(t, []float64{75}, g.ExFinal)
	assert.True(t, g.Global)
	assert.True(t, math.IsNaN(g.NewFinal[0]), "no new clients' figure")
	err := g.AddOnce(&fl.MethodResult{Method: "x"}, ds)
	assert.ErrorContains(t, err, "x: no accuracies of the participating clients")
	err = g.AddOnce(&fl.MethodResult{ExistingClass: &fl.ClassGroupMetrics{Accuracy: []float64{1}}}, ds)
	assert.ErrorContains(t, err, "participating clients: weighted mean: 1 values, 2 weights")
}

// ClassRuns keeps each method's per-seed figures from the Done events and
// builds its row: accuracies and CE, the global model's, the best window,
// the times, and the weighted accuracies on FedVI's partition.
func TestClassRuns(t *testing.T) {
	ds := &data.Dataset{
		Existing: []data.ClientData{{YTest: make([]float64, 1)}, {YTest: make([]float64, 3)}},
		New:      []data.ClientData{{YTest: make([]float64, 2)}},
	}
	a := NewClassRuns(2, true)
	best := 90.0
	for seed := uint64(1); seed <= 2; seed++ {
		a.Observe(harness.Event{Kind: harness.Round, Method: "x"})
		a.Observe(harness.Event{Kind: harness.Done, Method: "fedavg", Seed: seed, Data: ds, Result: &fl.MethodResult{
			GlobalClass: &fl.ClassGroupMetrics{Accuracy: []float64{100, 0}, MeanAccuracy: 50, MeanCE: 0.1},
			NewClass:    &fl.ClassGroupMetrics{Accuracy: []float64{80}, MeanAccuracy: 80, MeanCE: 0.2},
			Best:        &fl.BestAccuracy{From: 3, To: 4, Global: &best}, Seconds: 2, RoundSeconds: 0.5,
		}})
	}
	require.NoError(t, a.Err())
	m := a.Method("fedavg")
	assert.Equal(t, "3-4", m.BestRounds)
	assert.Equal(t, 4.0, m.Seconds)
	assert.Equal(t, 0.5, m.RoundSeconds)
	require.NotNil(t, m.Global)
	assert.Equal(t, Float(50), m.Global.Accuracy.Mean)
	assert.Equal(t, Float(90), m.Global.Best.Mean)
	assert.Equal(t, Float(80), m.New.Accuracy.Mean)
	require.NotNil(t, m.Weighted)
	assert.True(t, m.Weighted.GlobalModel)
	assert.Equal(t, Float(25), m.Weighted.Existing.Final.Mean)
	assert.Len(t, m.PerClient["new_accuracy"], 2)
	rows := a.Methods([]string{"fedavg"})
	require.Len(t, rows, 1)
	assert.Equal(t, m.Seconds, rows["fedavg"].Seconds)

	a.Observe(harness.Event{Kind: harness.Done, Method: "bad", Data: ds, Result: &fl.MethodResult{Method: "bad"}})
	assert.ErrorContains(t, a.Err(), "no accuracies of the participating clients")
}

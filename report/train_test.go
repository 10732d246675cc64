package report

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacpfl/pacpfl/fl"
)

// writeRead writes v with Marshal as a --json file would be and reads it back
// into out with ReadFile; it returns the written text.
func writeRead(t *testing.T, v, out any) string {
	t.Helper()
	b, err := Marshal(v, true)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "report.json")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	require.NoError(t, ReadFile(path, out))
	return string(b)
}

func gpResult(history []float64, privacy fl.Privacy) *fl.MethodResult {
	return &fl.MethodResult{
		Existing: fl.GroupMetrics{RSMSE: []float64{0.5, 0.7}, CE: []float64{0.1, 0.2}, MeanRSMSE: 0.6, MeanCE: 0.15},
		New:      fl.GroupMetrics{MeanRSMSE: math.NaN(), MeanCE: math.NaN()},
		Train:    &fl.Result{MeanLML: history, Elapsed: 1500 * time.Millisecond, Privacy: privacy},
	}
}

// A train report carries the run's figures, reads back as the same type
// (an undefined figure as NaN, not 0), and a differentially private run
// releases no client LMLs.
func TestTrainReportRoundTrip(t *testing.T) {
	history := make([]float64, 60)
	for i := range history {
		history[i] = float64(i)
	}
	history[3] = math.NaN() // a round without a finite mean
	noDP := fl.Privacy{Epsilon: math.Inf(1), NominalEpsilon: math.Inf(1), Statement: "none"}
	rep := NewTrain(gpResult(history, noDP), false)
	assert.Equal(t, 1.5, rep.TrainSeconds)
	assert.Nil(t, rep.Epsilon)
	assert.Equal(t, fl.Mean(history[10:]), float64(rep.FinalLML), "the last 50 rounds")

	var back Train
	text := writeRead(t, rep, &back)
	assert.Contains(t, text, `"epsilon": null`)
	require.Len(t, back.LMLHistory, len(history))
	assert.True(t, math.IsNaN(float64(back.LMLHistory[3])), "null comes back as NaN")
	assert.Equal(t, Float(59), back.LMLHistory[59])
	assert.Equal(t, Float(0.6), back.Existing.RSMSE)
	assert.True(t, math.IsNaN(float64(back.New.RSMSE)), "a group without clients")
	assert.True(t, math.IsNaN(float64(back.Privacy.Epsilon)), "no guarantee: +Inf written as null")

	dp := fl.Privacy{Mechanism: fl.DPLaplace, Epsilon: 2, NominalEpsilon: 2, Statement: "ε = 2"}
	rep = NewTrain(gpResult(history, dp), true)
	var priv Train
	text = writeRead(t, rep, &priv)
	assert.Contains(t, text, `"lml_history": null`)
	assert.Nil(t, priv.LMLHistory)
	assert.True(t, math.IsNaN(float64(priv.FinalLML)))
	require.NotNil(t, priv.Epsilon)
	assert.Equal(t, 2.0, *priv.Epsilon)
	assert.Equal(t, "laplace", priv.Privacy.Mechanism)
}

// A BNN train report has a null group where the method evaluated none, and
// per-client values only of the groups it has.
func TestBNNTrainReport(t *testing.T) {
	res := &fl.MethodResult{
		ExistingClass: &fl.ClassGroupMetrics{Accuracy: []float64{80, 90}, CE: []float64{0.1, math.NaN()},
			MeanAccuracy: 85, MeanCE: 0.1},
		Train: &fl.Result{Privacy: fl.Privacy{Epsilon: math.Inf(1)}},
	}
	rep := NewBNNTrain(res, false)
	var back BNNTrain
	text := writeRead(t, rep, &back)
	assert.Contains(t, text, `"lml_history": []`, "a run without rounds has an empty history, not none")
	assert.Equal(t, Float(85), back.Existing.Accuracy)
	assert.True(t, math.IsNaN(float64(back.New.Accuracy)))
	assert.Contains(t, back.PerClient, "existing_ce")
	assert.NotContains(t, back.PerClient, "new_accuracy")
	assert.Equal(t, []any{0.1, nil}, back.PerClient["existing_ce"])
}

package plot

import (
	"bytes"
	"encoding/json"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/report"
)

func TestFormat(t *testing.T) {
	for path, want := range map[string]string{"a.png": "png", "b.SVG": "svg", "dir.x/c.svg": "svg"} {
		got, err := Format(path)
		require.NoError(t, err, path)
		assert.Equal(t, want, got, path)
	}
	_, err := Format("fig")
	assert.ErrorContains(t, err, "fig: no extension")
	_, err = Format("fig.jpg")
	assert.ErrorContains(t, err, `unsupported image format ".jpg"`)
}

func TestMovingAverage(t *testing.T) {
	got := movingAverage([]float64{1, 3, math.NaN(), 5, 7}, 2)
	assert.Equal(t, []float64{1, 2, 3, 5, 6}, got)
	got = movingAverage([]float64{math.NaN(), 4}, 3)
	assert.True(t, math.IsNaN(got[0]))
	assert.Equal(t, 4.0, got[1])
}

func TestTraining(t *testing.T) {
	tr := &report.Train{Dataset: "data/sites.csv", LMLHistory: report.Floats([]float64{-3, math.NaN(), -2, -1})}
	img, rounds, err := Training(tr, "png")
	require.NoError(t, err)
	assert.Equal(t, 4, rounds)
	cfg, err := png.DecodeConfig(bytes.NewReader(img))
	require.NoError(t, err)
	assert.Equal(t, [2]int{WidthPx, HeightPx}, [2]int{cfg.Width, cfg.Height})

	eps := 2.0
	for _, c := range []struct {
		tr   report.Train
		want string
	}{
		{report.Train{Epsilon: &eps}, "differentially private"},
		{report.Train{}, `no "lml_history"`},
		{report.Train{LMLHistory: []report.Float{}}, "no rounds"},
		{report.Train{LMLHistory: report.Floats([]float64{math.NaN()})}, "no round has a finite"},
	} {
		_, _, err := Training(&c.tr, "svg")
		assert.ErrorContains(t, err, c.want)
	}
	dir := t.TempDir()
	exp := filepath.Join(dir, "exp.json")
	require.NoError(t, os.WriteFile(exp, []byte(`{"methods":{},"lml_history":[1]}`), 0o644))
	_, err = ReadTrain(exp)
	assert.ErrorContains(t, err, "exp.json is an experiment report")
}

// report.PerClient.Add records a classification result's accuracy and CE,
// and an empty group of a method without new clients (GenFL); Experiment
// draws its accuracy.
func TestExperimentClassification(t *testing.T) {
	var p report.PerClient
	p = p.Add(&fl.MethodResult{
		ExistingClass: &fl.ClassGroupMetrics{Accuracy: []float64{50, 75}, CE: []float64{0.1, 0.2}}})
	p = p.Add(&fl.MethodResult{
		ExistingClass: &fl.ClassGroupMetrics{Accuracy: []float64{60, 70}, CE: []float64{0.3, math.NaN()}},
		NewClass:      &fl.ClassGroupMetrics{Accuracy: []float64{80}, CE: []float64{0.05}}})
	assert.Equal(t, [][]report.Float{{50, 75}, {60, 70}}, p["existing_accuracy"])
	assert.Equal(t, [][]report.Float{{}, {80}}, p["new_accuracy"])
	b, err := json.Marshal(p)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"existing_ce":[[0.1,0.2],[0.3,null]]`)
	assert.NotContains(t, string(b), "rsmse")
	ef := report.Results{Dataset: "fmnist", Seeds: []uint64{1, 2}}
	require.NoError(t, json.Unmarshal([]byte(`{"methods":{"pacpfl":{"per_client":`+string(b)+`}}}`), &ef))
	metrics := ExperimentMetrics(&ef)
	assert.Equal(t, []string{"accuracy", "ce"}, metrics)
	assert.Equal(t, "accuracy", DefaultMetric(metrics))
	fig, skipped, err := experimentFigure(&ef, "accuracy")
	require.NoError(t, err)
	assert.Empty(t, skipped)
	assert.Equal(t, "accuracy per client (%)", fig.Y.Label.Text)
	_, _, err = Experiment(&ef, "rsmse", "svg")
	assert.ErrorContains(t, err, "no method has per-client values of rsmse")
}

// The order of the methods on the x axis is the tables': regression
// methods, then the others by name.
func TestExperimentMethods(t *testing.T) {
	r := &report.Results{Methods: map[string]report.MethodResults{"zeta": {}, "pooled": {}, "pacpfl": {}, "alpha": {}}}
	assert.Equal(t, []string{"pacpfl", "pooled", "alpha", "zeta"}, experimentMethods(r))
	assert.Equal(t, "rsmse", DefaultMetric([]string{"ce", "rsmse"}))
	assert.Equal(t, "ce", DefaultMetric([]string{"ce"}))
	assert.Equal(t, "", DefaultMetric(nil))
}

// oneSeedSweep is a k-sweep of one seed: no intervals, a null mean.
const oneSeedSweep = `{"dataset":"pv-ew-150","seeds":[11],"k_sweep":[
	{"k":1,"existing":{"rsmse":{"mean":0.42,"ci95":null},"ce":{"mean":0.09,"ci95":null}},
	       "new":{"rsmse":{"mean":0.43,"ci95":null},"ce":{"mean":null,"ci95":null}}},
	{"k":2,"existing":{"rsmse":{"mean":0.40,"ci95":null},"ce":{"mean":0.08,"ci95":null}},
	       "new":{"rsmse":{"mean":0.41,"ci95":null},"ce":{"mean":0.1,"ci95":null}}}]}`

// The values drawn are the report's, including a level whose group has no
// interval (one seed: ci95 null).
func TestSweepSeries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "one.json")
	require.NoError(t, os.WriteFile(path, []byte(oneSeedSweep), 0o644))
	s, err := ReadSweep(path)
	require.NoError(t, err)
	d, err := sweepSeries(s, "ce")
	require.NoError(t, err)
	assert.Equal(t, "k", d.kind)
	assert.Equal(t, 0.09, d.points[0].mean[0])
	assert.True(t, math.IsNaN(d.points[0].mean[1]) && math.IsNaN(d.points[0].ci[0]))
	xy, anyCI := d.series(1, func(x float64) float64 { return x })
	assert.False(t, anyCI)
	require.Len(t, xy.XYs, 1, "the null mean is left out")
	assert.Equal(t, 2.0, xy.XYs[0].X)
	_, info, err := Sweep(s, "ce", "svg")
	require.NoError(t, err)
	assert.Equal(t, SweepInfo{Param: "k", Levels: 2}, info)
	_, _, err = Sweep(s, "nll", "svg")
	assert.ErrorContains(t, err, `metric "nll"`)
}

// A DP sweep: the non-private run (ε null) is the reference, not a level;
// the mechanism and δ name the axis.
func TestSweepSeriesDP(t *testing.T) {
	g := func(m float64) report.Group {
		return report.Group{RSMSE: report.Summary{Mean: report.Float(m), CI95: 0.1},
			CE: report.Summary{Mean: 0.1, CI95: 0.01}}
	}
	s := &report.Sweep{Seeds: []uint64{1, 2}, DP: []report.DPLevel{
		{Epsilon: report.Float(math.NaN()), Existing: g(0.3), New: g(0.35)},
		{Epsilon: 2, Mechanism: "gaussian", Delta: 1e-5, Existing: g(0.5), New: g(0.6)},
		{Epsilon: 8, Mechanism: "gaussian", Delta: 1e-5, Existing: g(0.4), New: g(0.45)},
	}}
	d, err := sweepSeries(s, "rsmse")
	require.NoError(t, err)
	assert.Equal(t, "dp", d.kind)
	require.NotNil(t, d.ref)
	assert.Equal(t, [2]float64{0.3, 0.35}, d.ref.mean)
	require.Len(t, d.points, 2)
	assert.Equal(t, []float64{2, 8}, []float64{d.points[0].x, d.points[1].x})
	assert.Equal(t, "gaussian mechanism, δ = 1e-05", d.mech)
	fig, err := sweepFigure(s, d, "rsmse")
	require.NoError(t, err)
	assert.Contains(t, fig.Title.Text, "against the guaranteed ε, gaussian mechanism")

	s.DP[2].Epsilon = report.Float(math.Inf(1))
	_, err = sweepSeries(s, "rsmse")
	assert.ErrorContains(t, err, "row 3 of \"dp_sweep\": ε = +Inf")
	s.DP[2].Epsilon = report.Float(math.NaN())
	_, err = sweepSeries(s, "rsmse")
	assert.ErrorContains(t, err, "two non-private rows")
}

func TestReadSweepKinds(t *testing.T) {
	dir := t.TempDir()
	for body, want := range map[string]string{
		`{"methods":{"pacpfl":{}}}`:        "is an experiment report",
		`{"lml_history":[1,2]}`:            "is a train report",
		`{"x":1}`:                          `has no "k_sweep" or "dp_sweep"`,
		`{"k_sweep":[],"dp_sweep":[]}`:     "has both",
		`{"k_sweep":[{"k":1,"new":{}}]}`:   "",
		`{"dp_sweep":[{"existing":null}]}`: "",
	} {
		path := filepath.Join(dir, "r.json")
		require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
		_, err := ReadSweep(path)
		if want == "" {
			assert.NoError(t, err, body)
		} else {
			assert.ErrorContains(t, err, want, body)
		}
	}
}

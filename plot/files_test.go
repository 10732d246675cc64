package plot

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
	return path
}

func TestTrainingFile(t *testing.T) {
	img, d, err := TrainingFile(writeFile(t, "t.json", `{"dataset":"polynomial","lml_history":[-3,null,-1]}`), "svg")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(img), "<?xml"), "an SVG")
	assert.Equal(t, Drawn{What: "mean client LML of 3 rounds"}, d)
	_, _, err = TrainingFile(writeFile(t, "z.json", `{"lml_history":[]}`), "svg")
	assert.ErrorContains(t, err, "z.json: the run had no rounds")
}

func TestExperimentFile(t *testing.T) {
	path := writeFile(t, "e.json", `{"dataset":"polynomial","seeds":[1],"methods":{
		"pacpfl":{"per_client":{"existing_rsmse":[[0.5,0.6]],"existing_ce":[[0.1,0.2]]}},
		"mtl":{"per_client":{"existing_rsmse":[[0.7,0.8]],"existing_ce":[[null,null]]}}}}`)
	_, d, err := ExperimentFile(path, "", "svg")
	require.NoError(t, err)
	assert.Equal(t, Drawn{What: "per-client rsmse of 2 method(s)"}, d)
	_, d, err = ExperimentFile(path, "ce", "svg")
	require.NoError(t, err)
	assert.Equal(t, "per-client ce of 1 method(s)", d.What)
	require.Len(t, d.Notes, 1)
	assert.Contains(t, d.Notes[0], "mtl has no per-client ce")
	_, _, err = ExperimentFile(path, "accuracy", "svg")
	var me *MetricError
	require.True(t, errors.As(err, &me), "%v", err)
	assert.Equal(t, []string{"ce", "rsmse"}, me.Have)
	assert.Equal(t, `"accuracy": `+path+` has per-client values of ce, rsmse`, err.Error())
	_, _, err = ExperimentFile(writeFile(t, "old.json", `{"methods":{"pooled":{"per_seed":{}}}}`), "", "svg")
	assert.ErrorContains(t, err, "no per-client values")
}

func TestSweepFile(t *testing.T) {
	path := writeFile(t, "k.json", oneSeedSweep)
	_, d, err := SweepFile(path, "rsmse", "png")
	require.NoError(t, err)
	assert.Equal(t, Drawn{What: "rsmse at 2 values of k"}, d)
	_, _, err = SweepFile(writeFile(t, "bad.json", `{"k_sweep":[{"k":0}]}`), "rsmse", "svg")
	assert.ErrorContains(t, err, `bad.json: row 1 of "k_sweep" has no k ≥ 1`)
	_, _, err = SweepFile("missing.json", "accuracy", "svg")
	var me *MetricError
	require.True(t, errors.As(err, &me), "a bad metric before the file is read: %v", err)
	assert.Equal(t, `"accuracy": want rsmse or ce`, err.Error())
}

// Every report figure draws; sweep's and experiment's have a --metric.
func TestReportFigures(t *testing.T) {
	figs := ReportFigures()
	require.Len(t, figs, 3)
	for name, f := range figs {
		assert.NotNil(t, f.Draw, name)
	}
	assert.Empty(t, figs["training"].MetricHelp)
	assert.Equal(t, "rsmse", figs["sweep"].Metric)
	assert.NotEmpty(t, figs["experiment"].MetricHelp)
}

func TestUnknownClientError(t *testing.T) {
	var clients []string
	for i := range 14 {
		clients = append(clients, "s"+string(rune('a'+i)))
	}
	e := &UnknownClientError{Client: "x", Source: "d.csv", Column: "site", Clients: clients}
	assert.Equal(t, `"x": no row of d.csv has it in column "site" `+
		`(clients: "sa", "sb", "sc", "sd", "se", "sf", "sg", "sh", `+
		`"si", "sj", "sk", "sl" and 2 more)`, e.Error())
	e.Clients = nil
	assert.Equal(t, `"x": no row of d.csv has it in column "site" (clients: )`, e.Error())
	_, _, err := Predictive(nil, nil, "x", 10, "svg")
	assert.Error(t, err)
}

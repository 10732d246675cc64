package main

import (
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/modelfile"
	"github.com/pacpfl/pacpfl/predict"
)

// A sparse model (train --data --gp-inference sparse --save) records its
// inference; reloaded, it predicts bit-identically to the in-memory run,
// and both are fl's sparse predictive (inducing inputs chosen from each
// client's conditioning rows by fl.GPInference.InducingFor).
func TestTrainCSVSparseSaveReload(t *testing.T) {
	dir := t.TempDir()
	path := writeUserCSV(t, dir, 5, 14, false)
	run := trainCSVForTest(t, "--data", path, "--client-column", "site", "--target-column", "y", "--new-clients", "s4",
		"-T", "15", "--k", "2", "--bound-samples", "0", "--bound-trained-samples", "0", "--test-fraction", "0.3",
		"--gp-inference", "sparse", "--inducing", "4", "--seed", "6")
	assert.Equal(t, &modelfile.GPInference{Mode: "sparse", Inducing: 4, Seed: 6}, run.Model.GP.Inference)
	b, err := modelfile.Encode(run.Model)
	require.NoError(t, err)
	mf, err := modelfile.Decode(b)
	require.NoError(t, err)
	pr, err := predict.New(mf)
	require.NoError(t, err)
	assert.Equal(t, fl.GPInference{Mode: "sparse", Inducing: 4, Seed: 6}, pr.Inference())
	ds := run.Data.Dataset
	outs, err := pr.PredictClients(predictClients(run.Data.ExistingIDs, ds.Existing))
	require.NoError(t, err)
	gp, beta := gpOf(t, mf)
	g := &fl.GPModel{Model: gp, Beta: beta, Inference: pr.Inference()}
	preds, err := g.PredictGroup(run.Train.Particles, ds.Existing)
	require.NoError(t, err)
	exact := &fl.GPModel{Model: gp, Beta: beta, Inference: fl.GPInference{Mode: fl.InferenceExact}}
	epreds, err := exact.PredictGroup(run.Train.Particles, ds.Existing)
	require.NoError(t, err)
	differs := false
	for i := range outs {
		bitsEqual(t, "means", run.Existing[i].Mixture.Means, outs[i].Mixture.Means)
		bitsEqual(t, "vars", run.Existing[i].Mixture.Vars, outs[i].Mixture.Vars)
		for j := range preds[i].Mean {
			require.Equal(t, preds[i].Mean[j], outs[i].Mixture.Mean(j), "client %d row %d", i, j)
			differs = differs || preds[i].Mean[j] != epreds[i].Mean[j]
		}
	}
	assert.True(t, differs, "the sparse predictive with M = 4 equals the exact one")
}

// readPredictions reads predict's CSV output: the header and the rows.
func readPredictions(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	return rows
}

// Through the CLI: train --save records the inference, predict follows it
// unless --gp-inference or --inducing say otherwise (each flag given wins
// over its part of the file's inference), and M above a client's
// conditioning rows is refused.
func TestPredictFollowsRecordedInference(t *testing.T) {
	dir := t.TempDir()
	path := writeUserCSV(t, dir, 4, 12, false)
	model := filepath.Join(dir, "m.pacpfl")
	code, _, errOut := runCLI("train", "--data", path, "--client-column", "site", "--target-column", "y", "-T", "3",
		"--k", "2",
		"--quiet", "--bound-samples", "0", "--bound-trained-samples", "0", "--gp-inference", "sparse", "--inducing",
		"3", "--save", model)
	require.Equal(t, exitOK, code, errOut)
	predict := func(name string, args ...string) string {
		t.Helper()
		out := filepath.Join(dir, name+".csv")
		code, _, errOut := runCLI(
			append([]string{"predict", "--model", model, "--data", path, "--out", out}, args...)...)
		require.Equal(t, exitOK, code, "%s: %s", name, errOut)
		b, err := os.ReadFile(out)
		require.NoError(t, err)
		return string(b)
	}
	recorded := predict("recorded")
	assert.Equal(t, recorded, predict("same", "--gp-inference", "sparse", "--inducing", "3"),
		"the file's inference is sparse, M = 3")
	assert.Equal(t, recorded, predict("mode", "--gp-inference", "sparse"), "--gp-inference alone keeps the file's M")
	exact := predict("exact", "--gp-inference", "exact")
	assert.NotEqual(t, recorded, exact)
	assert.Equal(t, exact, predict("auto", "--gp-inference", "auto"), "auto is exact for clients of up to 4,096 rows")
	assert.NotEqual(t, recorded, predict("m5", "--inducing", "5"), "--inducing alone keeps the file's mode")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--gp-inference", "fast"}, exitUsage, `--gp-inference "fast": want exact, sparse or auto`},
		{[]string{"--gp-inference", ""}, exitUsage, `--gp-inference "": want exact, sparse or auto`},
		{[]string{"--inducing", "-1"}, exitUsage, "--inducing -1: want at least 1"},
		{[]string{"--inducing", "50"}, exitUsage, "--inducing 50: the client is conditioned on only"},
	} {
		out := filepath.Join(dir, "bad.csv")
		code, _, errOut := runCLI(
			append([]string{"predict", "--model", model, "--data", path, "--out", out}, c.args...)...)
		assert.Equal(t, c.code, code, "%v: %s", c.args, errOut)
		assert.Contains(t, errOut, c.want, c.args)
		_, err := os.Stat(out)
		assert.True(t, os.IsNotExist(err), "%v: no output on error", c.args)
	}
	// The recorded M above a new client's context rows: exit 1, naming the
	// model's inference and the way out.
	ctx := filepath.Join(dir, "ctx.csv")
	require.NoError(t,
		os.WriteFile(ctx, []byte("site,x,z,y,ctx\nnew,0.1,0.2,10,1\nnew,0.3,-0.1,11,1\nnew,0.5,0,,0\n"), 0o644))
	code, _, errOut = runCLI("predict", "--model", model, "--data", ctx, "--context-column", "ctx", "--out",
		filepath.Join(dir, "ctx-out.csv"))
	assert.Equal(t, exitError, code, errOut)
	assert.Contains(t, errOut, `client "new": the model's GP inference is sparse, M = 3, but the client is `+
		`conditioned on only 2 rows (give --inducing 2 or fewer, or --gp-inference exact)`)
	code, _, errOut = runCLI("predict", "--model", model, "--data", ctx, "--context-column", "ctx", "--out",
		filepath.Join(dir, "ctx-out.csv"), "--inducing", "2")
	assert.Equal(t, exitOK, code, errOut)
}

// The version 1 model file in modelfile/testdata (written before the GP
// inference was recorded) means the exact GP: predict gives what the
// pacpfl that wrote it gave (modelfile/testdata/v1_gp_sites_predictions.csv,
// made by that pacpfl: bit for bit on the machine that made it, to 1e-9
// elsewhere), the same as --gp-inference exact to the bit; a sparse
// override applies.
func TestPredictOldModelFile(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join("..", "..", "modelfile", "testdata", "v1_gp_sites.model")
	sites := filepath.Join("..", "..", "examples", "sites.csv")
	predict := func(name string, args ...string) string {
		t.Helper()
		out := filepath.Join(dir, name+".csv")
		code, _, errOut := runCLI(append([]string{"predict", "--model", model, "--data", sites, "--context-column",
			"split", "--out", out}, args...)...)
		require.Equal(t, exitOK, code, "%s: %s", name, errOut)
		return out
	}
	got := readPredictions(t, predict("default"))
	want := readPredictions(t, filepath.Join("..", "..", "modelfile", "testdata", "v1_gp_sites_predictions.csv"))
	require.Equal(t, len(want), len(got))
	require.Equal(t, want[0], got[0])
	for i := 1; i < len(want); i++ {
		require.Equal(t, want[i][:3], got[i][:3], "row %d", i)
		for j := 3; j < len(want[i]); j++ {
			w, err := strconv.ParseFloat(want[i][j], 64)
			require.NoError(t, err)
			g, err := strconv.ParseFloat(got[i][j], 64)
			require.NoError(t, err)
			assert.InDelta(t, w, g, 1e-9*math.Max(1, math.Abs(w)), "row %d column %s", i, want[0][j])
		}
	}
	read := func(p string) string {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		return string(b)
	}
	def := read(predict("default"))
	assert.Equal(t, def, read(predict("exact", "--gp-inference", "exact")))
	sparse := read(predict("sparse", "--gp-inference", "sparse", "--inducing", "5"))
	assert.NotEqual(t, def, sparse)
	assert.Equal(t, strings.Count(def, "\n"), strings.Count(sparse, "\n"))
}

// train --data with sparse clients and the bounds left on: the run ends
// with its model and metrics, and says which bounds it could not compute
// and why (as the built-in data sets do) instead of failing after the
// training; with a loss range starting below the smallest Gaussian NLL the
// bound at 𝒬* is computed.
func TestTrainCSVSparseBoundsUnavailable(t *testing.T) {
	dir := t.TempDir()
	path := writeUserCSV(t, dir, 4, 14, false)
	args := []string{"--data", path, "--client-column", "site", "--target-column", "y", "--new-clients", "s3",
		"-T", "5", "--k", "2", "--bound-samples", "8", "--test-fraction", "0.3", "--gp-inference", "sparse",
		"--inducing", "4"}
	run := trainCSVForTest(t, args...)
	assert.Nil(t, run.Bounds.Bounds)
	assert.Contains(t, run.Bounds.BoundsUnavailable, "the loss range must start at or below the smallest Gaussian NLL")
	assert.Nil(t, run.Bounds.Learned)
	assert.Contains(t, run.Bounds.LearnedUnavailable, "not confined to [a, b]")
	assert.NotEmpty(t, run.Existing)

	run = trainCSVForTest(t, append(args, "--loss-range=-6,2")...)
	require.NotNil(t, run.Bounds.Bounds)
	assert.Empty(t, run.Bounds.BoundsUnavailable)
	assert.False(t, math.IsNaN(run.Bounds.Bounds.Server), "server bound")
	assert.Contains(t, run.Bounds.Bounds.Description, "sparse variational posterior")
	assert.Contains(t, run.Bounds.LearnedUnavailable, "not confined to [a, b]")
}

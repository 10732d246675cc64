package main

import (
	"context"
	"encoding/binary"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/lml"
	"github.com/pacpfl/pacpfl/modelfile"
	"github.com/pacpfl/pacpfl/predict"
	"github.com/pacpfl/pacpfl/train"
)

// writeUserCSV writes a small federated regression (classify: labels) data
// set: clients s0..s{n-1}, rows each, features x and z, target y; site k's
// curve is shifted and scaled.
func writeUserCSV(t *testing.T, dir string, clients, rows int, classify bool) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	var b strings.Builder
	b.WriteString("site,x,z,y\n")
	for c := range clients {
		a, s := 1+0.3*rng.NormFloat64(), 0.5*rng.NormFloat64()
		for range rows {
			x, z := 4*rng.Float64()-2, rng.NormFloat64()
			y := a*math.Sin(2*x) + s + 0.3*z + 0.1*rng.NormFloat64()
			target := strconv.FormatFloat(10+3*y, 'f', 4, 64)
			if classify {
				target = map[bool]string{true: "high", false: "low"}[y > s]
			}
			fmt.Fprintf(&b, "s%d,%.4f,%.4f,%s\n", c, x, z, target)
		}
	}
	path := filepath.Join(dir, "data.csv")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	return path
}

// trainCSVForTest parses train flags and runs the training in-process.
func trainCSVForTest(t *testing.T, args ...string) *train.Result {
	t.Helper()
	fs := newFlagSet("train", io.Discard)
	var p fedParse
	p.flags(fs, args, true)
	fs.Bool("quiet", false, "")
	st, ok := parseFlags(fs, args, false)
	require.True(t, ok, "status %d", st)
	require.NoError(t, p.check(fs, ""))
	job, err := p.job(io.Discard)
	require.NoError(t, err)
	out, err := job.Run(context.Background(), nil)
	require.NoError(t, err)
	return out.CSV
}

func bitsEqual(t *testing.T, what string, a, b []float64) {
	t.Helper()
	require.Equal(t, len(a), len(b), what)
	for i := range a {
		require.Equal(t, math.Float64bits(a[i]), math.Float64bits(b[i]), "%s[%d]: %v vs %v", what, i, a[i], b[i])
	}
}

// predictClients is a group of the federated data set as the predictor's
// clients: conditioned on their training rows, predicting their test rows.
func predictClients(ids []string, group []data.ClientData) []predict.Client {
	clients := make([]predict.Client, len(group))
	for i := range group {
		clients[i] = predict.Client{ID: ids[i], X: group[i].X, Y: group[i].Y, XTest: group[i].XTest}
	}
	return clients
}

// gpOf is the GP client model and temperature a GP model file describes.
func gpOf(t *testing.T, mf *modelfile.Model) (lml.Model, fl.Temperature) {
	t.Helper()
	g := mf.GP
	beta, err := fl.ParseTemperature(g.Beta)
	require.NoError(t, err)
	return lml.Model{D: g.D, DF: g.DF, MeanHidden: g.MeanHidden, KernelHidden: g.KernelHidden}, beta
}

// The saved and reloaded model predicts bit-identically to the in-memory
// one, and the in-memory predictions are the library's predictive (fl).
func TestTrainCSVSaveReloadBitIdentical(t *testing.T) {
	dir := t.TempDir()
	path := writeUserCSV(t, dir, 5, 14, false)
	run := trainCSVForTest(t, "--data", path, "--client-column", "site", "--target-column", "y", "--new-clients", "s4",
		"-T", "15", "--k", "2", "--bound-samples", "0", "--bound-trained-samples", "0", "--test-fraction", "0.3")
	b, err := modelfile.Encode(run.Model)
	require.NoError(t, err)
	mf, err := modelfile.Decode(b)
	require.NoError(t, err)
	pr, err := predict.New(mf)
	require.NoError(t, err)
	ds := run.Data.Dataset
	for g, group := range [][]predict.Output{run.Existing, run.New} {
		clients, ids := ds.Existing, run.Data.ExistingIDs
		if g == 1 {
			clients, ids = ds.New, run.Data.NewIDs
		}
		outs, err := pr.PredictClients(predictClients(ids, clients))
		require.NoError(t, err)
		for i := range outs {
			bitsEqual(t, "weights", group[i].Mixture.Weights, outs[i].Mixture.Weights)
			bitsEqual(t, "means", group[i].Mixture.Means, outs[i].Mixture.Means)
			bitsEqual(t, "vars", group[i].Mixture.Vars, outs[i].Mixture.Vars)
		}
	}
	// The library's evaluation of the same particles: the same means.
	gp, beta := gpOf(t, mf)
	g := &fl.GPModel{Model: gp, Beta: beta}
	preds, err := g.PredictGroup(run.Train.Particles, ds.Existing)
	require.NoError(t, err)
	for i, p := range preds {
		for j := range p.Mean {
			require.Equal(t, p.Mean[j], run.Existing[i].Mixture.Mean(j), "client %d row %d", i, j)
		}
	}
	m, err := fl.Evaluate(preds, ds.Existing)
	require.NoError(t, err)
	um, _ := run.Metrics()
	assert.InDelta(t, m.MeanRSMSE, um.MeanFirst, 1e-12)
	assert.InDelta(t, m.MeanCE, um.MeanSecond, 1e-12)
}

func TestTrainCSVClassificationReloadBitIdentical(t *testing.T) {
	dir := t.TempDir()
	path := writeUserCSV(t, dir, 4, 16, true)
	run := trainCSVForTest(t, "--data", path, "--client-column", "site", "--target-column", "y", "--new-clients", "s3",
		"--task", "classification", "-T", "5", "--k", "2", "--hidden", "8", "--posterior-particles", "2",
		"--posterior-steps", "5",
		"--bound-samples", "0")
	assert.Equal(t, []string{"high", "low"}, run.Model.Classes)
	b, err := modelfile.Encode(run.Model)
	require.NoError(t, err)
	mf, err := modelfile.Decode(b)
	require.NoError(t, err)
	pr, err := predict.New(mf)
	require.NoError(t, err)
	ds := run.Data.Dataset
	outs, err := pr.PredictClients(predictClients(run.Data.NewIDs, ds.New))
	require.NoError(t, err)
	bitsEqual(t, "probs", run.New[0].Probs, outs[0].Probs)
	require.NotEmpty(t, outs[0].Probs)
}

// End to end through the binary's entry point: train --save, predict
// --out, and predict's CSV holds the in-memory predictive of the same run
// (a training run is deterministic for its seed).
func TestTrainCSVPredictCLI(t *testing.T) {
	dir := t.TempDir()
	path := writeUserCSV(t, dir, 4, 12, false)
	model := filepath.Join(dir, "m.pacpfl")
	args := []string{"--data", path, "--client-column", "site", "--target-column", "y", "--new-clients", "s3",
		"-T", "10", "--k", "2", "--bound-samples", "0", "--bound-trained-samples", "0"}
	code, out, errOut := runCLI(
		append([]string{"train", "--quiet", "--save", model, "--json", filepath.Join(dir, "t.json")}, args...)...)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "3 existing clients")
	assert.Contains(t, out, "model saved to "+model)
	run := trainCSVForTest(t, args...)

	// The test rows of s0 (existing) and all of s3's rows (a new client,
	// context: its training rows) go through predict.
	rec := readCSVRows(t, path)
	var b strings.Builder
	b.WriteString("site,x,z,y,own\n")
	for _, r := range run.Data.ExistingRows[0].Test {
		fmt.Fprintf(&b, "%s,0\n", strings.Join(rec[r], ","))
	}
	for _, r := range run.Data.NewRows[0].Train {
		fmt.Fprintf(&b, "%s,1\n", strings.Join(rec[r], ","))
	}
	for _, r := range run.Data.NewRows[0].Test {
		fmt.Fprintf(&b, "%s,no\n", strings.Join(rec[r], ","))
	}
	in := filepath.Join(dir, "in.csv")
	require.NoError(t, os.WriteFile(in, []byte(b.String()), 0o644))
	preds := filepath.Join(dir, "p.csv")
	code, _, errOut = runCLI("predict", "--model", model, "--data", in, "--context-column", "own", "--out", preds)
	require.Equal(t, exitOK, code, errOut)
	got := readCSVRows(t, preds)
	pr, err := predict.New(run.Model)
	require.NoError(t, err)
	nTest0, nTest3 := len(run.Data.ExistingRows[0].Test), len(run.Data.NewRows[0].Test)
	require.Len(t, got, nTest0+nTest3)
	for i, row := range got {
		var want predict.Summary
		if i < nTest0 {
			want = pr.Summary(run.Existing[0].Mixture, i)
		} else {
			want = pr.Summary(run.New[0].Mixture, i-nTest0)
			assert.Equal(t, "s3", row[1])
		}
		for j, v := range []float64{want.Mean, want.Std, want.Q025, want.Q975} {
			assert.Equal(t, strconv.FormatFloat(v, 'g', -1, 64), row[3+j], "row %d column %d", i, j)
		}
		assert.Less(t, want.Q025, want.Mean)
		assert.Less(t, want.Mean, want.Q975)
	}
}

// readCSVRows reads a CSV file and returns its data rows (header dropped).
func readCSVRows(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	return rows[1:]
}

func TestTrainCSVBadInput(t *testing.T) {
	dir := t.TempDir()
	path := writeUserCSV(t, dir, 3, 8, false)
	base := []string{"train", "--data", path, "--client-column", "site", "--target-column", "y", "-T", "2", "--k", "1",
		"--quiet"}
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"train", "--data", path, "--target-column", "y"}, exitUsage, "--client-column is required"},
		{append(base, "--task", "ranking"), exitUsage, `unknown --task "ranking"`},
		{append(base, "--hidden", "4"), exitUsage, "--hidden does not apply to --task regression"},
		{append(base, "--task", "classification", "--sigma-p", "1"), exitUsage,
			"--sigma-p does not apply to --task classification"},
		{append(base, "--test-fraction", "1"), exitUsage, "--test-fraction 1 must lie in [0, 1)"},
		{append(base, "--split-column", "z", "--test-fraction", "0.1"), exitUsage, "give one"},
		{append(base, "--clients", "3"), exitUsage, "flag provided but not defined: -clients"},
		{append(base, "--save", "-"), exitUsage, "a model file is binary"},
		{append(base, "--save", filepath.Join(dir, "no", "m")), exitUsage, "does not exist"},
		{append(base, "--features", "x,w"), exitError, `no feature column "w"`},
		{append(base, "--new-clients", "s9"), exitError, `new client "s9" is not in`},
		{append(base, "--split-column", "z"), exitError, `column "z" (3rd): "`},
		{append(base, "--task", "classification"), exitError, "is it a regression target?"},
	}
	for _, c := range cases {
		code, _, errOut := runCLI(c.args...)
		assert.Equal(t, c.code, code, "%v: %s", c.args, errOut)
		assert.Contains(t, errOut, c.want, "%v", c.args)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no file left behind")
}

func TestPredictBadModelFiles(t *testing.T) {
	dir := t.TempDir()
	path := writeUserCSV(t, dir, 3, 8, false)
	model := filepath.Join(dir, "m.pacpfl")
	code, _, errOut := runCLI("train", "--data", path, "--client-column", "site", "--target-column", "y", "-T", "2",
		"--k", "1",
		"--quiet", "--bound-samples", "0", "--bound-trained-samples", "0", "--save", model)
	require.Equal(t, exitOK, code, errOut)
	good, err := os.ReadFile(model)
	require.NoError(t, err)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, b, 0o644))
		return p
	}
	v3 := append([]byte(nil), good...)
	binary.LittleEndian.PutUint32(v3[8:12], 3)
	flipped := append([]byte(nil), good...)
	flipped[len(flipped)/2] ^= 0x10
	other := write("other.csv", []byte("site,x,w,y\ns0,1,2,3\n"))
	for _, c := range []struct {
		model, data, want string
	}{
		{write("v3", v3), path, "the file is format version 3, this pacpfl reads versions 1 to 2"},
		{write("trunc", good[:len(good)-100]), path, "model file truncated"},
		{write("flip", flipped), path, "model file corrupted: checksum mismatch"},
		{path, path, "not a pacpfl model file"},
		{model, other, `no feature column "z" (the columns are "site", "x", "w", "y"); the model was trained on the ` +
			`features "x", "z"`},
		{filepath.Join(dir, "missing"), path, "no such file"},
	} {
		code, _, errOut := runCLI("predict", "--model", c.model, "--data", c.data, "--out", filepath.Join(dir, "p.csv"))
		assert.Equal(t, exitError, code, errOut)
		assert.Contains(t, errOut, c.want)
		_, err := os.Stat(filepath.Join(dir, "p.csv"))
		assert.True(t, os.IsNotExist(err), "no output on error")
	}
	code, _, errOut = runCLI("predict", "--data", path)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "--model FILE is required")
}

func TestCSVDataArg(t *testing.T) {
	for args, want := range map[string]bool{
		"--data x.csv": true, "-data=x.csv": true, "--k 2 --data polynomial": false, "--data fmnist": false,
		"": false, "--data": false, "-- --data x.csv": false, "--quiet --data=./polynomial": true,
	} {
		assert.Equal(t, want, csvDataArg(strings.Fields(args)), args)
	}
}

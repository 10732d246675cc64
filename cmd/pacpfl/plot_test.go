package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/plot"
	"github.com/pacpfl/pacpfl/predict"
	"github.com/pacpfl/pacpfl/train"
)

// checkPNG decodes a PNG figure and checks its size.
func checkPNG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err, path)
	assert.Equal(t, plot.WidthPx, img.Bounds().Dx(), path)
	assert.Equal(t, plot.HeightPx, img.Bounds().Dy(), path)
	// Not a blank canvas: the figure has more than a handful of colours.
	colours := map[[4]uint32]bool{}
	for y := 0; y < img.Bounds().Dy(); y += 3 {
		for x := 0; x < img.Bounds().Dx(); x += 3 {
			r, g, b, a := img.At(x, y).RGBA()
			colours[[4]uint32{r, g, b, a}] = true
		}
	}
	assert.Greater(t, len(colours), 10, "%s: a nearly blank image", path)
}

// checkSVG parses an SVG figure as XML and checks its root and size.
func checkSVG(t *testing.T, path string, wants ...string) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	d := xml.NewDecoder(bytes.NewReader(b))
	var root string
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, path)
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
			for _, a := range se.Attr {
				if a.Name.Local == "width" {
					assert.Equal(t, fmt.Sprintf("%gpt", float64(plot.WidthPx)*72/plot.DPI), a.Value)
				}
			}
		}
	}
	assert.Equal(t, "svg", root, path)
	for _, w := range wants {
		assert.Contains(t, string(b), w, path)
	}
}

// plotModel trains a small regression model on writeUserCSV's data and
// saves it: site s3 is a new client.
func plotModel(t *testing.T, dir string, features string) (csvPath, model string, run *train.Result) {
	t.Helper()
	csvPath = writeUserCSV(t, dir, 4, 16, false)
	model = filepath.Join(dir, "m-"+strings.ReplaceAll(features, ",", "")+".pacpfl")
	args := []string{"--data", csvPath, "--client-column", "site", "--target-column", "y", "--features", features,
		"--new-clients", "s3", "-T", "10", "--k", "2", "--bound-samples", "0", "--bound-trained-samples", "0"}
	code, _, errOut := runCLI(append([]string{"train", "--quiet", "--save", model}, args...)...)
	require.Equal(t, exitOK, code, errOut)
	return csvPath, model, trainCSVForTest(t, args...)
}

func TestPlotPredictive(t *testing.T) {
	dir := t.TempDir()
	for _, features := range []string{"x", "x,z"} {
		csvPath, model, run := plotModel(t, dir, features)
		tr, te := len(run.Data.ExistingRows[1].Train), len(run.Data.ExistingRows[1].Test)
		for _, ext := range []string{"png", "svg"} {
			out := filepath.Join(dir, "s1."+ext)
			code, stdout, errOut := runCLI("plot", "predictive", "--model", model, "--data", csvPath, "--client", "s1",
				"--out", out)
			require.Equal(t, exitOK, code, errOut)
			// The training file's rows of s1 that the model stored are its
			// training points, the others its test points.
			assert.Contains(t, stdout, fmt.Sprintf("%d training and %d test points", tr, te))
			if ext == "png" {
				checkPNG(t, out)
			} else {
				want := []string{"Client s1", "test data"}
				if features == "x" {
					want = append(want, "95 % predictive interval")
				} else {
					want = append(want, "predicted = observed")
				}
				checkSVG(t, out, want...)
			}
		}
		// A new client needs its context rows.
		out := filepath.Join(dir, "s3.png")
		code, _, errOut := runCLI("plot", "predictive", "--model", model, "--data", csvPath, "--client", "s3", "--out",
			out)
		assert.Equal(t, exitError, code)
		assert.Contains(t, errOut, "--context-column")
		assert.NoFileExists(t, out)
	}
}

// The curve and band of plot predictive are predict's predictive: at the
// grid points, the mean and quantiles predict writes for the same inputs.
func TestPlotPredictiveCurveIsPredict(t *testing.T) {
	dir := t.TempDir()
	csvPath, model, _ := plotModel(t, dir, "x")
	pr, err := predict.Load(model)
	require.NoError(t, err)
	rec, err := pr.ReadCSV(csvPath, "")
	require.NoError(t, err)
	const grid = 7
	_, info, err := plot.Predictive(pr, rec, "s0", grid, "svg")
	require.NoError(t, err)
	assert.Equal(t, 16, info.Train+info.Test)
	require.Len(t, info.Grid, grid)
	var b strings.Builder
	b.WriteString("site,x\n")
	for _, x := range info.Grid {
		fmt.Fprintf(&b, "s0,%s\n", fmtFloat(x))
	}
	in := filepath.Join(dir, "grid.csv")
	require.NoError(t, os.WriteFile(in, []byte(b.String()), 0o644))
	preds := filepath.Join(dir, "grid-preds.csv")
	code, _, errOut := runCLI("predict", "--model", model, "--data", in, "--out", preds)
	require.Equal(t, exitOK, code, errOut)
	rows := readCSVRows(t, preds) // line, site, mean, std, q2.5, q97.5
	require.Len(t, rows, grid)
	for i, row := range rows {
		assert.Equal(t, row[2], fmtFloat(info.Mean[i]), "mean %d", i)
		assert.Equal(t, row[4], fmtFloat(info.Q025[i]), "q2.5 %d", i)
		assert.Equal(t, row[5], fmtFloat(info.Q975[i]), "q97.5 %d", i)
		assert.Less(t, info.Q025[i], info.Mean[i])
		assert.Less(t, info.Mean[i], info.Q975[i])
	}
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// A context row identical to a row the model stored for the client is not
// conditioned on twice: marking a known client's training rows as context
// changes none of its predictions.
func TestPredictContextDuplicatesStoredRows(t *testing.T) {
	dir := t.TempDir()
	csvPath, model, run := plotModel(t, dir, "x,z")
	rec := readCSVRows(t, csvPath)
	var with, without strings.Builder
	with.WriteString("site,x,z,y,own\n")
	without.WriteString("site,x,z,y,own\n")
	for _, r := range run.Data.ExistingRows[0].Train {
		fmt.Fprintf(&with, "%s,1\n", strings.Join(rec[r], ","))
	}
	for _, r := range run.Data.ExistingRows[0].Test {
		fmt.Fprintf(&with, "%s,0\n", strings.Join(rec[r], ","))
		fmt.Fprintf(&without, "%s,0\n", strings.Join(rec[r], ","))
	}
	var outs [2][][]string
	for i, s := range []string{with.String(), without.String()} {
		in := filepath.Join(dir, fmt.Sprintf("in%d.csv", i))
		require.NoError(t, os.WriteFile(in, []byte(s), 0o644))
		out := filepath.Join(dir, fmt.Sprintf("p%d.csv", i))
		code, _, errOut := runCLI("predict", "--model", model, "--data", in, "--context-column", "own", "--out", out)
		require.Equal(t, exitOK, code, errOut)
		outs[i] = readCSVRows(t, out)
		for j := range outs[i] {
			outs[i][j] = outs[i][j][1:] // the line numbers differ
		}
	}
	require.NotEmpty(t, outs[1])
	assert.Equal(t, outs[1], outs[0])
}

func TestPlotPredictiveErrors(t *testing.T) {
	dir := t.TempDir()
	csvPath, model, _ := plotModel(t, dir, "x")
	cls := filepath.Join(dir, "cls.pacpfl")
	clsCSV := filepath.Join(dir, "cls")
	require.NoError(t, os.Mkdir(clsCSV, 0o755))
	clsData := writeUserCSV(t, clsCSV, 3, 12, true)
	code, _, errOut := runCLI("train", "--quiet", "--save", cls, "--data", clsData, "--client-column", "site",
		"--target-column", "y",
		"--task", "classification", "-T", "2", "--k", "1", "--bound-samples", "0")
	require.Equal(t, exitOK, code, errOut)
	out := filepath.Join(dir, "fig.png")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--model", model, "--data", csvPath, "--client", "nobody", "--out", out}, exitUsage,
			`--client "nobody"`},
		{[]string{"--model", model, "--data", csvPath, "--client", "s0", "--out", filepath.Join(dir, "fig.jpg")},
			exitUsage, "unsupported image format"},
		{[]string{"--model", model, "--data", csvPath, "--client", "s0", "--out", filepath.Join(dir, "fig")}, exitUsage,
			"no extension"},
		{[]string{"--model", model, "--data", csvPath, "--client", "s0"}, exitUsage, "--out"},
		{[]string{"--model", model, "--data", csvPath, "--out", out}, exitUsage, "--client ID is required"},
		{[]string{"--model", model, "--data", csvPath, "--client", "s0", "--out", filepath.Join(dir, "no", "fig.png")},
			exitUsage, "fig.png"},
		{[]string{"--model", filepath.Join(dir, "missing"), "--data", csvPath, "--client", "s0", "--out", out},
			exitError, "missing"},
		{[]string{"--model", csvPath, "--data", csvPath, "--client", "s0", "--out", out}, exitError, "data.csv"},
		{[]string{"--model", cls, "--data", clsData, "--client", "s0", "--out", out}, exitUsage,
			"classification model"},
		{[]string{"--model", model, "--data", csvPath, "--client", "s0", "--out", out, "--grid", "1"}, exitUsage,
			"--grid"},
	} {
		code, stdout, errOut := runCLI(append([]string{"plot", "predictive"}, c.args...)...)
		assert.Equal(t, c.code, code, "%v: %s", c.args, errOut)
		assert.Contains(t, errOut, c.want, "%v", c.args)
		assert.Empty(t, stdout, "%v", c.args)
		assert.NoFileExists(t, out)
	}
	code, _, errOut = runCLI("plot")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "which figure? predictive, experiment, training or sweep")
	assert.Equal(t, 1, strings.Count(errOut, "\n"), "a usage error in one line: %q", errOut)
	code, _, errOut = runCLI("plot", "histogram")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `unknown figure "histogram"`)
	code, stdout, _ := runCLI("plot", "-h")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "pacpfl plot predictive")
	assert.Contains(t, stdout, "pacpfl plot sweep")
}

// experiment --json records every client's metric, per seed; the per-seed
// group means are their means; plot experiment draws them.
func TestExperimentPerClientAndPlot(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "exp.json")
	code, _, errOut := runCLI("experiment", "polynomial", "--methods", "pacpfl,mtl,pooled", "--seeds", "2", "-T", "5",
		"--k", "2",
		"--baseline-steps", "2", "--clients", "4", "--new-clients", "3", "--quiet", "--json", path)
	require.Equal(t, exitOK, code, errOut)
	var rep struct {
		Methods map[string]struct {
			PerSeed   map[string][]*float64   `json:"per_seed"`
			PerClient map[string][][]*float64 `json:"per_client"`
		} `json:"methods"`
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &rep))
	for m, ms := range rep.Methods {
		for key, seeds := range ms.PerClient {
			require.Len(t, seeds, 2, "%s %s", m, key)
			for s, vals := range seeds {
				want := 4
				if strings.HasPrefix(key, "new_") {
					want = 3
				}
				require.Len(t, vals, want, "%s %s seed %d", m, key, s)
				var xs []float64
				for _, v := range vals {
					if v == nil {
						xs = append(xs, math.NaN())
					} else {
						xs = append(xs, *v)
					}
				}
				mean := fl.Mean(xs)
				if ps := ms.PerSeed[key][s]; ps == nil {
					assert.True(t, math.IsNaN(mean), "%s %s seed %d", m, key, s)
				} else {
					assert.InDelta(t, *ps, mean, 1e-12, "%s %s seed %d", m, key, s)
				}
			}
		}
		assert.Len(t, ms.PerClient, 4, m)
	}
	// MTL predicts points: no CE.
	assert.Nil(t, rep.Methods["mtl"].PerClient["existing_ce"][0][0])

	for _, c := range []struct{ out, metric, note string }{{"exp.png", "", ""}, {"exp.svg", "", ""},
		{"ce.png", "ce", "mtl has no per-client ce"}} {
		args := []string{"plot", "experiment", "--json", path, "--out", filepath.Join(dir, c.out)}
		if c.metric != "" {
			args = append(args, "--metric", c.metric)
		}
		code, stdout, errOut := runCLI(args...)
		require.Equal(t, exitOK, code, errOut)
		assert.Contains(t, stdout, "plotted into")
		if c.note != "" {
			assert.Contains(t, errOut, c.note)
		}
		if strings.HasSuffix(c.out, ".png") {
			checkPNG(t, filepath.Join(dir, c.out))
		} else {
			checkSVG(t, filepath.Join(dir, c.out), "PAC-PFL", "MTL", "Pooled", "existing clients", "new clients",
				"RSMSE per client")
		}
	}

	// Bad reports and flags.
	old := filepath.Join(dir, "old.json")
	require.NoError(t,
		os.WriteFile(old, []byte(`{"dataset":"polynomial","methods":{"pooled":{"per_seed":{}}}}`), 0o644))
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"dataset": "polynomial", "methods": {`), 0o644))
	wrong := filepath.Join(dir, "wrong.json")
	require.NoError(t, os.WriteFile(wrong, []byte(`{"dataset": "polynomial", "methods": [1, 2]}`), 0o644))
	empty := filepath.Join(dir, "empty.json")
	require.NoError(t, os.WriteFile(empty, []byte(`{}`), 0o644))
	out := filepath.Join(dir, "x.png")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--json", path, "--out", out, "--metric", "accuracy"}, exitUsage, `--metric "accuracy"`},
		{[]string{"--json", path}, exitUsage, "--out"},
		{[]string{"--out", out}, exitUsage, "--json FILE is required"},
		{[]string{"--json", path, "--out", filepath.Join(dir, "x.pdf")}, exitUsage, "unsupported image format"},
		{[]string{"--json", filepath.Join(dir, "missing.json"), "--out", out}, exitError, "missing.json"},
		{[]string{"--json", old, "--out", out}, exitError, "no per-client values"},
		{[]string{"--json", bad, "--out", out}, exitError, "not valid JSON"},
		{[]string{"--json", wrong, "--out", out}, exitError, "not a pacpfl report of this kind"},
		{[]string{"--json", empty, "--out", out}, exitError, `has no "methods"`},
	} {
		code, _, errOut := runCLI(append([]string{"plot", "experiment"}, c.args...)...)
		assert.Equal(t, c.code, code, "%v: %s", c.args, errOut)
		assert.Contains(t, errOut, c.want, "%v", c.args)
		assert.NoFileExists(t, out)
	}
}

func TestPlotTraining(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "train.json")
	code, _, errOut := runCLI("train", "--clients", "4", "--new-clients", "1", "-T", "60", "--k", "2",
		"--bound-samples", "0",
		"--bound-trained-samples", "0", "--quiet", "--json", path)
	require.Equal(t, exitOK, code, errOut)
	tr, err := plot.ReadTrain(path)
	require.NoError(t, err)
	assert.Len(t, tr.LMLHistory, 60)
	for _, ext := range []string{"png", "svg"} {
		out := filepath.Join(dir, "tr."+ext)
		code, stdout, errOut := runCLI("plot", "training", "--json", path, "--out", out)
		require.Equal(t, exitOK, code, errOut)
		assert.Contains(t, stdout, "60 rounds")
		if ext == "png" {
			checkPNG(t, out)
		} else {
			checkSVG(t, out, "mean client log marginal likelihood", "round", "moving average over 3 rounds")
		}
	}

	dp := filepath.Join(dir, "dp.json")
	code, _, errOut = runCLI("train", "--clients", "4", "--new-clients", "0", "-T", "2", "--k", "1", "--bound-samples",
		"0",
		"--bound-trained-samples", "0", "--dp-epsilon", "2", "--quiet", "--json", dp)
	require.Equal(t, exitOK, code, errOut)
	exp := filepath.Join(dir, "exp.json")
	code, _, errOut = runCLI("experiment", "polynomial", "--methods", "pooled", "--seeds", "1", "--baseline-steps", "2",
		"--clients", "4", "--new-clients", "0", "--quiet", "--json", exp)
	require.Equal(t, exitOK, code, errOut)
	zero := filepath.Join(dir, "zero.json")
	require.NoError(t, os.WriteFile(zero, []byte(`{"dataset":"polynomial","lml_history":[]}`), 0o644))
	nulls := filepath.Join(dir, "nulls.json")
	require.NoError(t, os.WriteFile(nulls, []byte(`{"lml_history":[null,null]}`), 0o644))
	other := filepath.Join(dir, "other.json")
	require.NoError(t, os.WriteFile(other, []byte(`{"lml":1.5}`), 0o644))
	out := filepath.Join(dir, "x.svg")
	for _, c := range []struct {
		file, want string
	}{
		{dp, "differentially private"},
		{exp, "plot experiment"},
		{zero, "no rounds"},
		{nulls, "no round has a finite"},
		{other, `no "lml_history"`},
		{filepath.Join(dir, "nope.json"), "nope.json"},
	} {
		code, _, errOut := runCLI("plot", "training", "--json", c.file, "--out", out)
		assert.Equal(t, exitError, code, "%s: %s", c.file, errOut)
		assert.Contains(t, errOut, c.want, c.file)
		assert.NoFileExists(t, out)
	}
}

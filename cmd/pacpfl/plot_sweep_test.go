package main

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacpfl/pacpfl/plot"
	"github.com/pacpfl/pacpfl/report"
)

// TestPlotSweep draws the figures of real --k-sweep and --dp-sweep reports
// and checks what is drawn against the reports.
func TestPlotSweep(t *testing.T) {
	dir := t.TempDir()
	kj := filepath.Join(dir, "k.json")
	code, _, errOut := runCLI("experiment", "polynomial", "--k-sweep", "1,3", "--seeds", "2", "--clients", "4",
		"--new-clients", "2",
		"-T", "3", "--quiet", "--json", kj)
	require.Equal(t, exitOK, code, errOut)
	dj := filepath.Join(dir, "dp.json")
	code, _, errOut = runCLI("experiment", "polynomial", "--dp-sweep", "1,50", "--clients", "4", "--new-clients", "1",
		"-T", "3", "--k", "2", "--seeds", "2", "--dp-noise-seed", "7", "--quiet", "--json", dj)
	require.Equal(t, exitOK, code, errOut)

	for _, c := range []struct {
		json, metric, kind string
		points             int
		ref                bool
	}{{kj, "rsmse", "k", 2, false}, {kj, "ce", "k", 2, false}, {dj, "rsmse", "dp", 2, true}} {
		s, err := plot.ReadSweep(c.json)
		require.NoError(t, err)
		var xs []float64
		var groups []report.Group
		for _, l := range s.K {
			xs, groups = append(xs, float64(l.K)), append(groups, l.Existing, l.New)
		}
		for _, l := range s.DP {
			xs, groups = append(xs, float64(l.Epsilon)), append(groups, l.Existing, l.New)
		}
		_, info, err := plot.Sweep(s, c.metric, "svg")
		require.NoError(t, err)
		assert.Equal(t, map[string]string{"k": "k", "dp": "ε"}[c.kind], info.Param)
		assert.Equal(t, c.points, info.Levels)
		for i, g := range groups {
			v := g.RSMSE
			if c.metric == "ce" {
				v = g.CE
			}
			assert.True(t, v.Mean > 0 && v.CI95 >= 0, "%s %s: group %d: %v ± %v", c.json, c.metric, i, v.Mean, v.CI95)
		}
		if c.kind == "k" {
			assert.Equal(t, []float64{1, 3}, xs)
		} else {
			require.Len(t, xs, 3)
			assert.True(t, math.IsNaN(xs[0]), "the non-private run first, epsilon null")
			assert.Equal(t, []float64{1, 50}, xs[1:])
		}
		for _, ext := range []string{".png", ".svg"} {
			out := filepath.Join(dir, c.kind+c.metric+ext)
			code, stdout, errOut := runCLI("plot", "sweep", "--json", c.json, "--metric", c.metric, "--out", out)
			require.Equal(t, exitOK, code, errOut)
			assert.Contains(t, stdout, "plotted into "+out)
			if ext == ".png" {
				checkPNG(t, out)
			} else if c.kind == "k" {
				checkSVG(t, out, "number of SVGD particles k", "Polynomial")
			} else {
				checkSVG(t, out, "guaranteed ε, laplace mechanism", "non-private run", "over 2 seeds")
			}
		}
	}

	// A level whose group has no interval (one seed: ci95 null) is drawn.
	one := filepath.Join(dir, "one.json")
	require.NoError(t, os.WriteFile(one, []byte(oneSeedSweep), 0o644))
	code, _, errOut = runCLI("plot", "sweep", "--json", one, "--metric", "ce", "--out", filepath.Join(dir, "one.png"))
	require.Equal(t, exitOK, code, errOut)
}

// oneSeedSweep is a k-sweep of one seed: no intervals, a null mean.
const oneSeedSweep = `{"dataset":"pv-ew-150","seeds":[11],"k_sweep":[
	{"k":1,"existing":{"rsmse":{"mean":0.42,"ci95":null},"ce":{"mean":0.09,"ci95":null}},"new":{"rsmse":{"mean":0.43,"ci95":null},"ce":{"mean":null,"ci95":null}}},
	{"k":2,"existing":{"rsmse":{"mean":0.40,"ci95":null},"ce":{"mean":0.08,"ci95":null}},"new":{"rsmse":{"mean":0.41,"ci95":null},"ce":{"mean":0.1,"ci95":null}}}]}`

func TestPlotSweepErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	level := `{"existing":{"rsmse":{"mean":0.4,"ci95":0.1}},"new":{"rsmse":{"mean":0.4,"ci95":0.1}}}`
	out := filepath.Join(dir, "x.png")
	for _, c := range []struct {
		file, want string
	}{
		{write("exp.json", `{"methods":{"pacpfl":{}}}`), "plot experiment"},
		{write("train.json", `{"lml_history":[1,2]}`), "plot training"},
		{write("other.json", `{"x":1}`), `no "k_sweep" or "dp_sweep"`},
		{write("both.json", `{"k_sweep":[],"dp_sweep":[]}`), "both"},
		{write("emptyk.json", `{"k_sweep":[]}`), "no k"},
		{write("onlyref.json", `{"dp_sweep":[{"epsilon":null,`+level[1:]+`]}`), "no private level"},
		{write("badk.json", `{"k_sweep":[{"k":0,`+level[1:]+`]}`), "no k ≥ 1"},
		{write("nok.json", `{"k_sweep":[`+level+`]}`), "no k ≥ 1"},
		{write("bade.json", `{"dp_sweep":[{"epsilon":-1,`+level[1:]+`]}`), "ε = -1"},
		{write("twice.json", `{"k_sweep":[{"k":2,`+level[1:]+`,{"k":2,`+level[1:]+`]}`), "appears twice"},
		{write("tworef.json", `{"dp_sweep":[{"epsilon":null,`+level[1:]+`,{"epsilon":null,`+level[1:]+`]}`),
			"two non-private"},
		{write("negci.json", `{"k_sweep":[{"k":1,"existing":{"rsmse":{"mean":0.4,"ci95":-0.1}}}]}`),
			"non-negative interval"},
		{write("nulls.json", `{"k_sweep":[{"k":1,"existing":{"rsmse":{"mean":null}},"new":{}}]}`), "null everywhere"},
		{write("broken.json", `{"k_sweep":[`), "not valid JSON"},
		{filepath.Join(dir, "nope.json"), "nope.json"},
	} {
		code, _, errOut := runCLI("plot", "sweep", "--json", c.file, "--out", out)
		assert.Equal(t, exitError, code, "%s: %s", c.file, errOut)
		assert.Contains(t, errOut, c.want, c.file)
		assert.NoFileExists(t, out)
	}
	good := write("good.json", `{"k_sweep":[{"k":1,`+level[1:]+`]}`)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--json", good, "--metric", "nll", "--out", out}, `--metric "nll"`},
		{[]string{"--json", good, "--out", filepath.Join(dir, "x.jpg")}, "unsupported image format"},
		{[]string{"--out", out}, "--json FILE is required"},
	} {
		code, _, errOut := runCLI(append([]string{"plot", "sweep"}, c.args...)...)
		assert.Equal(t, exitUsage, code, "%v: %s", c.args, errOut)
		assert.Contains(t, errOut, c.want, c.args)
		assert.NoFileExists(t, out)
	}
}

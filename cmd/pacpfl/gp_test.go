package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/lml"
)

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

const gpCSV = `x1,x2,y
0.1,0.2,1.0
-0.5,1.5,0.3

0.7,-0.2,-0.4
# a comment
1.1,0.0,0.9
`

func TestGPEvalHappyPath(t *testing.T) {
	data := writeTemp(t, "d.csv", gpCSV)
	model := lml.Model{D: 2, DF: 2, MeanHidden: []int{3}, KernelHidden: []int{3}}
	np := model.NumParams()
	phi := make([]float64, np)
	var sb strings.Builder
	for i := range phi {
		phi[i] = 0.1 * math.Sin(float64(i))
		fmt.Fprintf(&sb, "%.17g\n", phi[i])
	}
	params := writeTemp(t, "phi.txt", sb.String())

	st, out, errs := runCLI("gp", "eval", "--data", data, "--params", params, "--hidden", "3", "--json")
	require.Equal(t, exitOK, st, errs)
	var res struct {
		LML    float64
		Grad   []float64
		Layout []lml.Block
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	X := []float64{0.1, 0.2, -0.5, 1.5, 0.7, -0.2, 1.1, 0.0}
	y := []float64{1.0, 0.3, -0.4, 0.9}
	ws, err := lml.NewWorkspace(model, nil)
	require.NoError(t, err)
	g := make([]float64, np)
	want, err := ws.LML(phi, X, y, g)
	require.NoError(t, err)
	assert.Equal(t, want, res.LML)
	assert.Equal(t, g, res.Grad)
	assert.Equal(t, model.Layout(), res.Layout)

	// Text output carries the same value.
	st, out, _ = runCLI("gp", "eval", "--data", data, "--params", params, "--hidden", "3")
	require.Equal(t, exitOK, st)
	assert.Contains(t, out, fmt.Sprintf("lml %.17g", want))

	// --init-seed: deterministic, and the default model's length.
	st, out1, errs := runCLI("gp", "eval", "--data", data, "--init-seed", "7", "--json")
	require.Equal(t, exitOK, st, errs)
	_, out2, _ := runCLI("gp", "eval", "--data", data, "--init-seed", "7", "--json")
	assert.Equal(t, out1, out2)
	_, out3, _ := runCLI("gp", "eval", "--data", data, "--init-seed", "8", "--json")
	assert.NotEqual(t, out1, out3)
	require.NoError(t, json.Unmarshal([]byte(out1), &res))
	assert.Len(t, res.Grad, lml.DefaultModel(2).NumParams())

	// Linear networks.
	st, _, errs = runCLI("gp", "eval", "--data", data, "--init-seed", "1", "--hidden", "none", "--df", "1")
	assert.Equal(t, exitOK, st, errs)
}

func TestGPEvalErrors(t *testing.T) {
	data := writeTemp(t, "d.csv", gpCSV)
	okParams := writeTemp(t, "phi.txt", "1\n2\n")

	cases := []struct {
		name   string
		args   []string
		status int
		msg    string
	}{
		{"no action", []string{"gp"}, exitUsage, "usage: pacpfl gp eval"},
		{"bad action", []string{"gp", "fit"}, exitUsage, `pacpfl gp: unknown action "fit"`},
		{"bnn: no action", []string{"bnn"}, exitUsage, "usage: pacpfl bnn eval"},
		{"bnn: bad action", []string{"bnn", "fit"}, exitUsage, `pacpfl bnn: unknown action "fit"`},
		{"no data", []string{"gp", "eval", "--init-seed", "1"}, exitUsage, "--data is required"},
		{"neither", []string{"gp", "eval", "--data", data}, exitUsage, "exactly one of"},
		{"both", []string{"gp", "eval", "--data", data, "--params", okParams, "--init-seed", "1"}, exitUsage,
			"exactly one of"},
		{"bad flag", []string{"gp", "eval", "--frob"}, exitUsage, "frob"},
		{"bad hidden", []string{"gp", "eval", "--data", data, "--init-seed", "1", "--hidden", "3,x"}, exitUsage,
			"hidden"},
		{"bad df", []string{"gp", "eval", "--data", data, "--init-seed", "1", "--df", "0"}, exitUsage, "--df"},
		{"bad sigma", []string{"gp", "eval", "--data", data, "--init-seed", "1", "--sigma-p", "-1"}, exitUsage,
			"--sigma-p"},
		{"missing file", []string{"gp", "eval", "--data", filepath.Join(t.TempDir(), "nope.csv"), "--init-seed", "1"},
			exitError, "nope.csv"},
		{"wrong φ length", []string{"gp", "eval", "--data", data, "--params", okParams}, exitError,
			fmt.Sprintf("2 parameters, but this model (see --hidden, --df and the data's feature count) has %d",
				lml.DefaultModel(2).NumParams())},
		{"bad φ line", []string{"gp", "eval", "--data", data, "--params", writeTemp(t, "p.txt", "1\n\nabc\n")},
			exitError, "p.txt:3:"},
		{"NaN φ", []string{"gp", "eval", "--data", data, "--params", writeTemp(t, "p.txt", "NaN\n")}, exitError,
			"p.txt:1:"},
		{"ragged CSV", []string{"gp", "eval", "--init-seed", "1", "--data", writeTemp(t, "r.csv", "1,2,3\n4,5\n")},
			exitError, "r.csv:2: 2 fields, want 3"},
		{"bad CSV field", []string{"gp", "eval", "--init-seed", "1", "--data",
			writeTemp(t, "b.csv", "a,b\n1,2\n3,x\n")}, exitError, `b.csv:3: field 2: "x" is not a number`},
		{"Inf in CSV", []string{"gp", "eval", "--init-seed", "1", "--data", writeTemp(t, "i.csv", "1,2\n3,Inf\n")},
			exitError, `i.csv:2: field 2: "Inf" is not finite`},
		{"one column", []string{"gp", "eval", "--init-seed", "1", "--data", writeTemp(t, "o.csv", "1\n2\n")}, exitError,
			"at least one feature"},
		// A first row with one typo used to be taken for a header and
		// silently dropped.
		{"bad first row", []string{"gp", "eval", "--init-seed", "1", "--data",
			writeTemp(t, "f.csv", "1,2x\n3,4\n5,6\n")}, exitError, `f.csv:1: field 2: "2x" is not a number`},
		{"empty CSV", []string{"gp", "eval", "--init-seed", "1", "--data", writeTemp(t, "e.csv", "x,y\n")}, exitError,
			"no data rows"},
	}
	for _, c := range cases {
		st, _, errs := runCLI(c.args...)
		assert.Equal(t, c.status, st, c.name)
		assert.Contains(t, errs, c.msg, c.name)
	}
	st, out, _ := runCLI("gp", "-h")
	assert.Contains(t, out, "RFC 4180")
	assert.Equal(t, exitOK, st)
	assert.Contains(t, out, "usage")
}

// An absurd --hidden or --df is refused with a message instead of dying with
// "fatal error: out of memory"; the machine is pretended to have 1 GiB.
func TestGPEvalRefusesModelsBeyondMemory(t *testing.T) {
	saved := availableMemory
	defer func() { availableMemory = saved }()
	availableMemory = func() float64 { return 1 << 30 }
	data := writeTemp(t, "d.csv", gpCSV)
	for _, args := range [][]string{
		{"--hidden", "20000,20000"},
		{"--df", "100000000"},
		{"--hidden", "4000000000000,4000000000000"}, // the parameter count overflows an int
	} {
		st, out, errs := runCLI(append([]string{"gp", "eval", "--data", data, "--init-seed", "1"}, args...)...)
		assert.Equal(t, exitUsage, st, "%v: %s", args, errs)
		assert.Empty(t, out, args)
		assert.Contains(t, errs, "GiB", args)
	}
	st, _, errs := runCLI("gp", "eval", "--data", data, "--init-seed", "1")
	assert.Equal(t, exitOK, st, errs)
}

// Targets near 1e153 used to print "|grad| NaN" and exit 0 (and with --json
// fail in the encoder); 1e100 printed "|grad| +Inf" from an overflowing norm.
// A non-finite result is an error that names the data scale and says to
// standardise; a finite gradient has a finite norm.
func TestGPEvalNonFiniteResultIsAnError(t *testing.T) {
	csv := func(scale string) string {
		return writeTemp(t, "big.csv",
			"x,y\n0,-"+scale+"\n0.2,"+scale+"\n0.4,-"+scale+"\n0.6,"+scale+"\n0.8,-"+scale+"\n")
	}
	for _, scale := range []string{"1e153", "1e154", "1e200"} {
		for _, js := range []bool{false, true} {
			args := []string{"gp", "eval", "--data", csv(scale), "--init-seed", "1"}
			if js {
				args = append(args, "--json")
			}
			st, out, errOut := runCLI(args...)
			assert.Equal(t, exitError, st, "%s json=%v: %s", scale, js, out)
			assert.Contains(t, errOut, "standardise", scale)
			assert.Contains(t, errOut, "|y| = "+strings.Replace(scale, "e", "e+", 1), scale)
			assert.NotContains(t, out, "NaN")
		}
	}
	st, out, errOut := runCLI("gp", "eval", "--data", csv("1e100"), "--init-seed", "1")
	require.Equal(t, exitOK, st, errOut)
	assert.NotContains(t, out, "Inf")
	assert.NotContains(t, out, "NaN")
}

// Issue 21, items 10 and 13: the data are CSV as encoding/csv reads it — a
// UTF-8 BOM is skipped before data as well as before a header, quoted
// numbers are numbers, Go literal syntax (1_000, 0x10) is not; 1e400 is out
// of range, not "not a number"; an overlong line names the limit.
func TestGPEvalCSVFormat(t *testing.T) {
	rows := "0.1,0.2,1.0\n-0.5,1.5,0.3\n0.7,-0.2,-0.4\n1.1,0.0,0.9\n"
	st, want, errs := runCLI("gp", "eval", "--init-seed", "1", "--hidden", "3", "--data",
		writeTemp(t, "plain.csv", rows))
	require.Equal(t, exitOK, st, errs)
	for name, content := range map[string]string{
		"BOM before data":   "\uFEFF" + rows,
		"BOM before header": "\uFEFFx1,x2,y\n" + rows,
		"quoted numbers":    "\"x1\",x2,y\n\"0.1\",\"0.2\",1.0\n-0.5,\" 1.5\",0.3\n0.7,-0.2,-0.4\n1.1,0.0,0.9\n",
		"CRLF and comments": "# data\r\n" + strings.ReplaceAll(rows, "\n", "\r\n"),
	} {
		st, out, errs := runCLI("gp", "eval", "--init-seed", "1", "--hidden", "3", "--data",
			writeTemp(t, "d.csv", content))
		require.Equal(t, exitOK, st, "%s: %s", name, errs)
		assert.Equal(t, want, out, name)
	}
	for _, c := range []struct{ name, content, msg string }{
		{"Go digit separators", "1_000,2\n3,4\n", `"1_000" is not a number`},
		{"hex", "0x10,2\n3,4\n", `"0x10" is not a number`},
		{"out of range", "1,2\n3,1e400\n", `"1e400" is out of range`},
		{"bare quote", "1,2\n3,4\"\n", "bare \""},
	} {
		st, _, errs := runCLI("gp", "eval", "--init-seed", "1", "--data", writeTemp(t, "bad.csv", c.content))
		assert.Equal(t, exitError, st, c.name)
		assert.Contains(t, errs, c.msg, c.name)
	}
	defer func(old int) { maxCSVLine = old }(maxCSVLine)
	maxCSVLine = 4 << 10 // 64 MiB in the binary
	long := writeTemp(t, "long.csv", "x,y\n1,2\n"+strings.Repeat("1", maxCSVLine+10)+",2\n")
	st, _, errs = runCLI("gp", "eval", "--init-seed", "1", "--data", long)
	assert.Equal(t, exitError, st)
	assert.Contains(t, errs, "line 3 is longer than 4 KiB") // said "bufio.Scanner: token too long"
	st, _, errs = runCLI("gp", "eval", "--data", writeTemp(t, "d.csv", rows), "--params",
		writeTemp(t, "p.txt", "1_0\n"))
	assert.Equal(t, exitError, st)
	assert.Contains(t, errs, `"1_0" is not a number`)
}

// gp eval --gp-inference sparse --json prints the bound and its gradient
// in the fields of the exact eval, and the inducing inputs it chose: rows
// of the CSV as written (gp eval does not standardise, so there is nothing
// to undo), with which lml.SparseWorkspace reproduces the printed bound
// and gradient to 1e-12; Z is the one fl.GPInference.InducingFor chooses.
func TestGPEvalSparsePrintsInducingInputs(t *testing.T) {
	var csv strings.Builder
	csv.WriteString("a,b,target\n")
	var X, y []float64
	for i := range 300 {
		a := math.Round(1e6*(2*math.Sin(0.37*float64(i))+0.001*float64(i))) / 1e6
		b := math.Round(1e6*math.Cos(1.3*float64(i))) / 1e6
		v := math.Round(1e4*(math.Sin(2*a)+0.3*b)) / 1e4
		fmt.Fprintf(&csv, "%g,%g,%g\n", a, b, v)
		X = append(X, a, b)
		y = append(y, v)
	}
	data := writeTemp(t, "s.csv", csv.String())
	model := lml.Model{D: 2, DF: 2, MeanHidden: []int{4}, KernelHidden: []int{4}}
	phi := make([]float64, model.NumParams())
	var sb strings.Builder
	for i := range phi {
		phi[i] = 0.3 * math.Sin(1.7*float64(i))
		fmt.Fprintf(&sb, "%.17g\n", phi[i])
	}
	params := writeTemp(t, "phi.txt", sb.String())
	args := []string{"gp", "eval", "--data", data, "--params", params, "--hidden", "4"}

	st, out, errs := runCLI(
		append(args, "--gp-inference", "sparse", "--inducing", "24", "--inducing-seed", "9", "--json")...)
	require.Equal(t, exitOK, st, errs)
	var res struct {
		LML            float64     `json:"lml"`
		Grad           []float64   `json:"grad"`
		M              int         `json:"m"`
		GPInference    string      `json:"gp_inference"`
		Inducing       int         `json:"inducing"`
		InducingSeed   uint64      `json:"inducing_seed"`
		InducingInputs [][]float64 `json:"inducing_inputs"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	assert.Equal(t, "sparse", res.GPInference)
	assert.Equal(t, 24, res.Inducing)
	assert.Equal(t, uint64(9), res.InducingSeed)
	assert.Equal(t, 300, res.M)
	require.Len(t, res.InducingInputs, 24)
	var Z []float64
	for i, row := range res.InducingInputs {
		require.Len(t, row, 2)
		found := false
		for j := 0; j < len(y) && !found; j++ {
			found = X[2*j] == row[0] && X[2*j+1] == row[1]
		}
		assert.True(t, found, "inducing input %d %v is not a row of the CSV", i, row)
		Z = append(Z, row...)
	}
	want, err := fl.GPInference{Seed: 9}.InducingFor(X, 2, 24)
	require.NoError(t, err)
	assert.Equal(t, want, Z)
	ws, err := lml.NewSparseWorkspace(model, lml.SparseOptions{Threads: 1})
	require.NoError(t, err)
	defer ws.Close()
	g := make([]float64, len(phi))
	f, err := ws.Bound(phi, X, y, Z, g)
	require.NoError(t, err)
	assert.InDelta(t, f, res.LML, 1e-12*math.Max(1, math.Abs(f)))
	require.Len(t, res.Grad, len(g))
	for i := range g {
		assert.InDelta(t, g[i], res.Grad[i], 1e-12*math.Max(1, math.Abs(g[i])), "grad[%d]", i)
	}
	// A lower bound on the exact LML, which auto computes at 300 rows.
	st, out, errs = runCLI(append(args, "--gp-inference", "auto", "--json")...)
	require.Equal(t, exitOK, st, errs)
	var ex map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &ex))
	assert.Equal(t, "exact", ex["gp_inference"])
	assert.NotContains(t, ex, "inducing_inputs")
	assert.Less(t, res.LML, ex["lml"].(float64))
	st, out, errs = runCLI(append(args, "--gp-inference", "sparse", "--inducing", "24", "--inducing-seed", "9")...)
	require.Equal(t, exitOK, st, errs)
	assert.Contains(t, out, fmt.Sprintf("bound %.17g (sparse, M = 24", res.LML))

	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--gp-inference", "fast"}, `--gp-inference "fast": want exact, sparse or auto`},
		{[]string{"--gp-inference", "sparse", "--inducing", "-3"}, "--inducing -3: want at least 1"},
		{[]string{"--gp-inference", "sparse", "--inducing", "301"}, "--inducing 301: the data have only 300 rows"},
	} {
		st, out, errs := runCLI(append(args, c.args...)...)
		assert.Equal(t, exitUsage, st, c.args)
		assert.Empty(t, out, c.args)
		assert.Contains(t, errs, c.msg, c.args)
	}
}

package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacpfl/pacpfl/linalg"
)

func TestBenchGemmTable(t *testing.T) {
	st, out, errs := runCLI("bench", "gemm", "--n", "8,33", "--reps", "1", "--backends", "native,gonum")
	require.Equal(t, exitOK, st, errs)
	assert.Contains(t, out, "peak ")
	for _, n := range []string{"8", "33"} {
		for _, b := range []string{"native", "gonum"} {
			found := false
			for _, line := range strings.Split(out, "\n") {
				f := strings.Fields(line)
				if len(f) == 5 && f[0] == n && f[1] == b && strings.HasSuffix(f[4], "%") {
					found = true
				}
			}
			assert.True(t, found, "no row for n=%s %s in\n%s", n, b, out)
		}
	}
}

func TestBenchGemmJSON(t *testing.T) {
	st, out, errs := runCLI("bench", "gemm", "--n", "8,33", "--reps", "1", "--json", "--backends", "native,openblas")
	require.Equal(t, exitOK, st, errs)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var rows, errRows int
	for _, l := range lines {
		var r map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &r), l)
		assert.Equal(t, "gemm", r["kernel"])
		if e, ok := r["error"]; ok {
			errRows++
			assert.Equal(t, "openblas", r["backend"])
			assert.NotEmpty(t, e)
			continue
		}
		rows++
		assert.Greater(t, r["seconds"].(float64), 0.0)
		assert.Greater(t, r["gflops"].(float64), 0.0)
		assert.Contains(t, []float64{8, 33}, r["n"].(float64))
	}
	if slices.Contains(linalg.Backends(), "openblas") {
		assert.Equal(t, 4, rows)
		assert.Equal(t, 0, errRows)
	} else {
		assert.Equal(t, 2, rows)
		assert.Equal(t, 1, errRows, "openblas not compiled in must be an error line")
	}
}

func TestBenchGemmBadArgs(t *testing.T) {
	st, _, errs := runCLI("bench", "gemm", "--n", "8", "--backends", "native,openblass")
	assert.Equal(t, exitUsage, st)
	assert.Contains(t, errs, `unknown backend "openblass"`)
	st, _, _ = runCLI("bench", "gemm", "--n", "0")
	assert.Equal(t, exitUsage, st)
	st, _, _ = runCLI("bench", "gemm", "--reps", "0")
	assert.Equal(t, exitUsage, st)
}

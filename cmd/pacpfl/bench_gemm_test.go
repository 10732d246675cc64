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
	st, out, errs := runCLI("bench", "gemm", "--n", "8,33", "--reps", "1", "--json", "--backends", "native,gonum", "--threads", "1")
	require.Equal(t, exitOK, st, errs)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for _, l := range lines {
		var r map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &r), l)
		assert.Equal(t, "gemm", r["kernel"])
		assert.Equal(t, 1.0, r["threads"])
		assert.NotContains(t, r, "error")
		assert.Greater(t, r["seconds"].(float64), 0.0)
		assert.Greater(t, r["gflops"].(float64), 0.0)
		assert.Contains(t, []float64{8, 33}, r["n"].(float64))
	}
	assert.Len(t, lines, 4)
}

// A backend this build lacks is a usage error before any work (it used to
// print an error line and an empty table and exit 0); with OpenBLAS, every
// backend runs the thread count the table states (OpenBLAS ignored
// GOMAXPROCS).
func TestBenchGemmBackendsAndThreads(t *testing.T) {
	st, out, errs := runCLI("bench", "gemm", "--n", "8", "--reps", "1", "--backends", "native,openblas", "--threads", "1")
	if !slices.Contains(linalg.Backends(), "openblas") {
		assert.Equal(t, exitUsage, st)
		assert.Contains(t, errs, "-tags netlib")
		assert.Empty(t, out)
		return
	}
	require.Equal(t, exitOK, st, errs)
	assert.Contains(t, out, "threads: 1 for every backend")
	assert.Equal(t, 1, linalg.OpenBLASThreads())
}

func TestBenchGemmBadArgs(t *testing.T) {
	st, _, errs := runCLI("bench", "gemm", "--n", "8", "--backends", "native,openblass")
	assert.Equal(t, exitUsage, st)
	assert.Contains(t, errs, `unknown backend "openblass"`)
	st, _, _ = runCLI("bench", "gemm", "--n", "0")
	assert.Equal(t, exitUsage, st)
	st, _, _ = runCLI("bench", "gemm", "--reps", "0")
	assert.Equal(t, exitUsage, st)
	st, _, errs = runCLI("bench", "gemm", "--n", "8", "--backends", "native,native")
	assert.Equal(t, exitUsage, st)
	assert.Contains(t, errs, "twice")
}

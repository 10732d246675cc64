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
	st, out, errs := runCLI("bench", "gemm", "--n", "8,33", "--reps", "1", "--json", "--backends", "native,gonum",
		"--threads", "1")
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
	st, out, errs := runCLI("bench", "gemm", "--n", "8", "--reps", "1", "--backends", "native,openblas", "--threads",
		"1")
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

// --shapes measures non-square products (alone: only those); the table names
// the shape MxNxK and JSON carries m, n and k; a malformed shape is a usage
// error.
func TestBenchGemmShapes(t *testing.T) {
	st, out, errs := runCLI("bench", "gemm", "--shapes", "20x30x40,9x9x9", "--reps", "1", "--backends", "native")
	require.Equal(t, exitOK, st, errs)
	assert.Contains(t, out, "20x30x40  native")
	assert.Regexp(t, `(?m)^\s+9  native`, out)
	assert.NotRegexp(t, `(?m)^\s+500  native`, out)
	st, out, errs = runCLI("bench", "gemm", "--n", "8", "--shapes", "20x30x40", "--reps", "1", "--json", "--backends",
		"native")
	require.Equal(t, exitOK, st, errs)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2)
	var r map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &r))
	assert.Equal(t, []float64{20, 30, 40}, []float64{r["m"].(float64), r["n"].(float64), r["k"].(float64)})
	for _, bad := range []string{"20x30", "20x0x5", "axbxc"} {
		st, _, errs = runCLI("bench", "gemm", "--shapes", bad)
		assert.Equal(t, exitUsage, st, bad)
		assert.Contains(t, errs, "MxNxK", bad)
	}
}

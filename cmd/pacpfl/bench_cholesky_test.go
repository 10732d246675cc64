package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacpfl/pacpfl/cholesky"
)

func TestBenchCholeskyTable(t *testing.T) {
	for _, op := range []string{"potrf", "potri"} {
		st, out, errs := runCLI("bench", "cholesky", "--n", "8,70", "--reps", "1", "--backends", "native,gonum", "--op",
			op)
		require.Equal(t, exitOK, st, errs)
		assert.Contains(t, out, "peak ")
		for _, n := range []string{"8", "70"} {
			for _, b := range []string{"native", "gonum"} {
				found := false
				for _, line := range strings.Split(out, "\n") {
					f := strings.Fields(line)
					if len(f) == 6 && f[0] == n && f[1] == op && f[2] == b && strings.HasSuffix(f[5], "%") {
						found = true
					}
				}
				assert.True(t, found, "no row for n=%s %s %s in\n%s", n, op, b, out)
			}
		}
	}
}

func TestBenchCholeskyJSON(t *testing.T) {
	st, out, errs := runCLI("bench", "cholesky", "--n", "8,33", "--reps", "1", "--json", "--op", "potri",
		"--backends", "native,gonum", "--threads", "1")
	require.Equal(t, exitOK, st, errs)
	rows := 0
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var r map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &r), l)
		assert.Equal(t, "cholesky", r["kernel"])
		assert.Equal(t, "potri", r["op"])
		assert.Equal(t, 1.0, r["threads"])
		assert.NotContains(t, r, "error")
		rows++
		assert.Greater(t, r["seconds"].(float64), 0.0)
		assert.Greater(t, r["gflops"].(float64), 0.0)
		assert.Contains(t, []float64{8, 33}, r["n"].(float64))
	}
	assert.Equal(t, 4, rows)
}

// A backend this build lacks is a usage error before any work (it used to
// print an error line and an empty table and exit 0); the default list is
// the compiled-in backends, so a plain `bench cholesky` works in any build.
func TestBenchCholeskyMissingBackend(t *testing.T) {
	st, out, errs := runCLI("bench", "cholesky", "--n", "8", "--reps", "1", "--json", "--backends", "native,openblas")
	if slices.Contains(cholesky.Backends(), "openblas") {
		require.Equal(t, exitOK, st, errs)
		return
	}
	assert.Equal(t, exitUsage, st)
	assert.Contains(t, errs, "-tags netlib")
	assert.Empty(t, out)
	st, out, errs = runCLI("bench", "cholesky", "--n", "8", "--reps", "1", "--json")
	require.Equal(t, exitOK, st, errs)
	assert.Equal(t, len(cholesky.Backends()), strings.Count(out, "\n"))
}

func TestBenchCholeskyBadArgs(t *testing.T) {
	st, _, errs := runCLI("bench", "cholesky", "--n", "8", "--backends", "native,lapack")
	assert.Equal(t, exitUsage, st)
	assert.Contains(t, errs, `unknown backend "lapack"`)
	st, _, errs = runCLI("bench", "cholesky", "--n", "8", "--op", "getrf")
	assert.Equal(t, exitUsage, st)
	assert.Contains(t, errs, "getrf")
	st, _, _ = runCLI("bench", "cholesky", "--n", "0")
	assert.Equal(t, exitUsage, st)
	st, _, _ = runCLI("bench", "cholesky", "--reps", "0")
	assert.Equal(t, exitUsage, st)
	st, _, errs = runCLI("bench", "cholesky", "--n", "8", "--backends", "native,native")
	assert.Equal(t, exitUsage, st)
	assert.Contains(t, errs, "twice")
	st, _, errs = runCLI("bench", "cholesky", "--n", "8", "--threads", "100000")
	assert.Equal(t, exitUsage, st)
	assert.Contains(t, errs, "--threads 100000")
}

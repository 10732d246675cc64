package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBenchConvTable(t *testing.T) {
	st, out, errs := runCLI("bench", "conv", "--reps", "1", "--batch", "2", "--samples", "2")
	require.Equal(t, exitOK, st, errs)
	assert.Contains(t, out, "peak ")
	for _, k := range []string{"bcnn_fwd_bwd", "conv2_fwd_bwd", "bcnn_bayes_L2_stacked", "bcnn_bayes_L2_separate"} {
		found := false
		for _, line := range strings.Split(out, "\n") {
			f := strings.Fields(line)
			if len(f) == 5 && f[0] == k && f[1] == "2" && strings.HasSuffix(f[4], "%") {
				found = true
			}
		}
		assert.True(t, found, "no row for %s in\n%s", k, out)
	}
	assert.Contains(t, out, "stacked / separate: ")
}

func TestBenchConvJSON(t *testing.T) {
	st, out, errs := runCLI("bench", "conv", "--reps", "1", "--batch", "3", "--json", "--backend", "gonum")
	require.Equal(t, exitOK, st, errs)
	var kernels []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var r map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &r), l)
		kernels = append(kernels, r["kernel"].(string))
		assert.Equal(t, 3.0, r["batch"])
		assert.Equal(t, "gonum", r["backend"])
		assert.Greater(t, r["ms"].(float64), 0.0)
		assert.Greater(t, r["gflops"].(float64), 0.0)
	}
	assert.Equal(t, []string{"bcnn_fwd_bwd", "conv2_fwd_bwd", "bcnn_bayes_L5_stacked", "bcnn_bayes_L5_separate"},
		kernels)
}

func TestBenchConvFlags(t *testing.T) {
	st, _, errs := runCLI("bench", "conv", "--batch", "0")
	assert.Equal(t, exitUsage, st)
	assert.Contains(t, errs, "--batch 0")
	st, _, errs = runCLI("bench", "conv", "--backend", "nope")
	assert.Equal(t, exitUsage, st)
	assert.Contains(t, errs, `unknown BLAS backend "nope"`)
}

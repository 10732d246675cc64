package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacpfl/pacpfl/bench/suite"
)

func TestBenchLML(t *testing.T) {
	st, out, errs := runCLI("bench", "lml", "--m", "7,12", "--k", "1,3", "--reps", "1", "--split", "auto,blas",
		"--json")
	require.Equal(t, exitOK, st, errs)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2*2*2)
	for _, l := range lines {
		var r suite.LMLRow
		require.NoError(t, json.Unmarshal([]byte(l), &r))
		assert.Equal(t, "gp_client_update", r.Kernel)
		assert.Empty(t, r.Error)
		assert.Greater(t, r.Seconds, 0.0)
		assert.Greater(t, r.GFLOPS, 0.0)
		assert.Contains(t, []int{7, 12}, r.M)
		assert.Contains(t, []int{1, 3}, r.K)
	}
	st, out, _ = runCLI("bench", "lml", "--m", "5", "--k", "2", "--reps", "1")
	require.Equal(t, exitOK, st)
	assert.Contains(t, out, "GFLOP/s")
	assert.Contains(t, out, "peak")

	st, _, errs = runCLI("bench", "lml", "--split", "sideways")
	assert.Equal(t, exitUsage, st)
	assert.Contains(t, errs, `unknown --split "sideways"`)
	st, _, _ = runCLI("bench", "lml", "--reps", "0")
	assert.Equal(t, exitUsage, st)
	st, _, _ = runCLI("bench", "lml", "--m", "0")
	assert.Equal(t, exitUsage, st)
}

package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBenchLMLSparse(t *testing.T) {
	st, out, errs := runCLI("bench", "lml", "--gp-inference", "sparse", "--m", "300,700", "--inducing", "16,40", "--k", "1,2", "--reps", "1", "--json")
	require.Equal(t, exitOK, st, errs)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2*2*2)
	for i, l := range lines {
		var r sparseLMLResult
		require.NoError(t, json.Unmarshal([]byte(l), &r))
		assert.Equal(t, "gp_sparse_bound", r.Kernel)
		assert.Equal(t, "sparse", r.GPInference)
		assert.Empty(t, r.Error)
		// Rows in the order (m, k, M).
		assert.Equal(t, []int{300, 700}[i/4], r.M)
		assert.Equal(t, []int{1, 2}[i/2%2], r.K)
		assert.Equal(t, []int{16, 40}[i%2], r.Inducing)
		assert.Greater(t, r.Seconds, 0.0)
		m, M := float64(r.M), float64(r.Inducing)
		assert.InDelta(t, float64(r.K)*(4*m*M*M+20.0/3*M*M*M)/1e9, r.GFLOP, 1e-15)
		assert.InDelta(t, r.GFLOP/r.Seconds, r.GFLOPS, 1e-9*r.GFLOPS)
		assert.Equal(t, int64(8*r.M*16), r.DataBytes, "X (m×15) and y")
		assert.NotEmpty(t, r.CPU)
		if r.PeakRSSRow {
			assert.Greater(t, r.PeakRSS, r.BeyondData)
			assert.Greater(t, r.BeyondData, int64(0))
		}
	}
	st, out, errs = runCLI("bench", "lml", "--gp-inference", "sparse", "--m", "200", "--inducing", "8", "--reps", "1")
	require.Equal(t, exitOK, st, errs)
	for _, want := range []string{"CPU: ", "4·m·M² + 20/3·M³", "GFLOP/s", "peak RSS", "beyond"} {
		assert.Contains(t, out, want)
	}
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--gp-inference", "auto"}, `--gp-inference "auto": want exact or sparse`},
		{[]string{"--gp-inference", "sparse", "--m", "500,2000", "--inducing", "256,1024"}, "--inducing 1024 is above --m 500"},
		{[]string{"--gp-inference", "sparse", "--inducing", "0"}, `"0" is not a positive integer`},
		{[]string{"--gp-inference", "sparse", "--inducing", "-5"}, `"-5" is not a positive integer`},
		{[]string{"--inducing", "64"}, "--inducing applies to --gp-inference sparse"},
		{[]string{"--gp-inference", "sparse", "--split", "blas"}, "--split applies to --gp-inference exact"},
	} {
		st, out, errs := runCLI(append([]string{"bench", "lml"}, c.args...)...)
		assert.Equal(t, exitUsage, st, c.args)
		assert.Empty(t, out, c.args)
		assert.Contains(t, errs, c.msg, c.args)
	}
}

package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacpfl/pacpfl/bench/suite"
)

func TestBenchLMLSparse(t *testing.T) {
	st, out, errs := runCLI("bench", "lml", "--gp-inference", "sparse", "--m", "300,700", "--inducing", "16,40", "--k",
		"1,2", "--reps", "1", "--json")
	require.Equal(t, exitOK, st, errs)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2*2*2)
	// The rows' values (order, GFLOP, sizes) are suite.SparseLML's tests.
	for _, l := range lines {
		var r suite.SparseLMLRow
		require.NoError(t, json.Unmarshal([]byte(l), &r))
		assert.Equal(t, "gp_sparse_bound", r.Kernel)
		assert.Empty(t, r.Error)
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
		{[]string{"--gp-inference", "sparse", "--m", "500,2000", "--inducing", "256,1024"},
			"--inducing 1024 is above --m 500"},
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

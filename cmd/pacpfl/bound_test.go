package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBoundKLInverse(t *testing.T) {
	st, out, errs := runCLI("bound", "kl-inverse", "0", "1")
	require.Equal(t, exitOK, st, errs)
	v, err := strconv.ParseFloat(strings.TrimSpace(out), 64)
	require.NoError(t, err)
	assert.InDelta(t, 0.632120558828558, v, 1e-12) // 1 − e^{−1}

	st, out, _ = runCLI("bound", "kl-inverse", "0.5", "0")
	require.Equal(t, exitOK, st)
	assert.Equal(t, "0.5\n", out)

	st, out, _ = runCLI("bound", "kl-inverse", "1", "3")
	require.Equal(t, exitOK, st)
	assert.Equal(t, "1\n", out)

	for _, bad := range [][]string{
		{"bound", "kl-inverse", "-0.1", "1"},
		{"bound", "kl-inverse", "1.5", "1"},
		{"bound", "kl-inverse", "0.1", "-1"},
		{"bound", "kl-inverse", "NaN", "1"},
		{"bound", "kl-inverse", "0.1", "x"},
		{"bound", "kl-inverse", "0.1"},
		{"bound", "mcallester"},
		{"bound"},
	} {
		st, out, errs := runCLI(bad...)
		assert.Equal(t, exitUsage, st, "%v", bad)
		assert.Empty(t, out, "%v", bad)
		assert.NotEmpty(t, errs, "%v", bad)
	}
	st, _, errs = runCLI("bound", "kl-inverse", "-0.1", "1")
	assert.Equal(t, exitUsage, st)
	assert.Contains(t, errs, "Q = -0.1 must lie in [0, 1]")
	st, out, _ = runCLI("bound", "-h")
	assert.Equal(t, exitOK, st)
	assert.Contains(t, out, "kl-inverse")
}

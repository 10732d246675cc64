package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBenchDispatch(t *testing.T) {
	st, _, errs := runCLI("bench")
	assert.Equal(t, exitUsage, st)
	assert.Contains(t, errs, "usage: pacpfl bench")
	st, _, errs = runCLI("bench", "nope")
	assert.Equal(t, exitUsage, st)
	assert.Contains(t, errs, `unknown kernel "nope"`)
	st, out, _ := runCLI("bench", "-h")
	assert.Equal(t, exitOK, st)
	for _, n := range benchNames() {
		assert.Contains(t, out, n)
	}
}

func TestListFlags(t *testing.T) {
	var il intList
	require.NoError(t, il.Set("500, 1000,2000"))
	assert.Equal(t, intList{500, 1000, 2000}, il)
	assert.Equal(t, "500,1000,2000", il.String())
	assert.Error(t, il.Set("5,x"))
	assert.Error(t, il.Set("0"))
	var sl stringList
	require.NoError(t, sl.Set("native, gonum"))
	assert.Equal(t, stringList{"native", "gonum"}, sl)
	assert.Error(t, sl.Set(" , "))
}

package flagvalue

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInts(t *testing.T) {
	var il Ints
	require.NoError(t, il.Set("500, 1000,2000"))
	assert.Equal(t, Ints{500, 1000, 2000}, il)
	assert.Equal(t, "500,1000,2000", il.String())
	assert.Error(t, il.Set("5,x"))
	assert.Error(t, il.Set("0"))
	assert.Equal(t, Ints{500, 1000, 2000}, il, "a failed Set keeps the list")
}

func TestStrings(t *testing.T) {
	var sl Strings
	require.NoError(t, sl.Set("native, gonum,,"))
	assert.Equal(t, Strings{"native", "gonum"}, sl)
	assert.Equal(t, "native,gonum", sl.String())
	assert.Error(t, sl.Set(" , "))
}

func TestFloats(t *testing.T) {
	var fl Floats
	require.NoError(t, fl.Set("0.05, 1e-3,2"))
	assert.Equal(t, Floats{0.05, 0.001, 2}, fl)
	assert.Equal(t, "0.05,0.001,2", fl.String())
	for _, bad := range []string{"0", "-1", "x", "Inf", "NaN"} {
		assert.Error(t, fl.Set(bad), bad)
	}
	assert.Equal(t, Floats{0.05, 0.001, 2}, fl, "a failed Set keeps the list")
}

package data

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeNumericFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f.csv")
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func TestReadNumericCSV(t *testing.T) {
	X, y, d, err := ReadNumericCSV(writeNumericFile(t, "a,b,y\n1,2,3\n\"4\",5,6\n"), 0)
	require.NoError(t, err)
	assert.Equal(t, 2, d)
	assert.Equal(t, []float64{1, 2, 4, 5}, X)
	assert.Equal(t, []float64{3, 6}, y)
	_, _, _, err = ReadNumericCSV(writeNumericFile(t, "1,x,3\n"), 0)
	assert.ErrorContains(t, err, ":1: field 2:")
	_, _, _, err = ReadNumericCSV(writeNumericFile(t, "1,2\n1,2,3\n"), 0)
	assert.ErrorContains(t, err, ":2: 3 fields, want 2")
	_, _, _, err = ReadNumericCSV(writeNumericFile(t, "a,b\n"), 0)
	assert.ErrorContains(t, err, "no data rows")
	X, y, d, err = ReadLabelledCSV(writeNumericFile(t, "1,2,3\n0,5,6\n"), 0)
	require.NoError(t, err)
	assert.Equal(t, 2, d)
	assert.Equal(t, []float64{2, 3, 5, 6}, X)
	assert.Equal(t, []float64{1, 0}, y)
}

func TestReadNumbers(t *testing.T) {
	v, err := ReadNumbers(writeNumericFile(t, "\uFEFF# phi\n1\n\n-2.5\n"))
	require.NoError(t, err)
	assert.Equal(t, []float64{1, -2.5}, v)
	_, err = ReadNumbers(writeNumericFile(t, "1\n1_0\n"))
	assert.ErrorContains(t, err, `:2: "1_0" is not a number`)
}

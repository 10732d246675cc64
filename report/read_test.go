package report

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ReadFile's errors name the file and tell a missing file, one that is not
// JSON and one of another kind apart.
func TestReadFileErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	var v struct {
		Seeds []uint64 `json:"seeds"`
	}
	good := write("good.json", `{"seeds":[1,2]}`)
	require.NoError(t, ReadFile(good, &v))
	assert.Equal(t, []uint64{1, 2}, v.Seeds)
	for _, c := range []struct{ path, want string }{
		{filepath.Join(dir, "missing.json"), "no such file"},
		{write("bad.json", `{"seeds":[1,`), "bad.json: not valid JSON (byte"},
		{write("wrong.json", `{"seeds":"one"}`), "wrong.json: not a pacpfl report of this kind"},
	} {
		err := ReadFile(c.path, &v)
		require.Error(t, err, c.path)
		assert.Contains(t, err.Error(), c.want)
	}
}

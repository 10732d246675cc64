//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// noTemps fails if a temporary file of the output writer is left in dir.
func noTemps(t *testing.T, dir string) {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, ".*.tmp*"))
	require.NoError(t, err)
	assert.Empty(t, m, "temporary files left behind")
}

// A path outfile refuses is a usage error (exit status 2) naming the flag.
func TestOutputBadPathIsUsageError(t *testing.T) {
	err := checkOutput("--json", filepath.Join(t.TempDir(), "missing", "x.json"))
	var ue usageError
	require.True(t, errors.As(err, &ue), "%v", err)
	assert.Contains(t, err.Error(), "--json")
	assert.Contains(t, err.Error(), "does not exist")
}

// failingWriter fails every write, as stdout on a full disk does.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// A command whose standard output could not be written exits 1.
func TestLostStdoutIsAnError(t *testing.T) {
	var errb bytes.Buffer
	st := run([]string{"version"}, failingWriter{}, &errb)
	assert.Equal(t, exitError, st)
	assert.Contains(t, errb.String(), "no space left")
}

// The CLI end to end: --json - gives pure JSON on stdout (the text report
// on stderr); --json in a missing directory is a usage error before any
// work; a JSON write failure after the run is exit 1.
func TestTrainJSONDestinations(t *testing.T) {
	small := []string{"train", "--clients", "4", "--new-clients", "1", "-T", "2", "--k", "1", "-c", "2",
		"--bound-samples", "0", "--bound-trained-samples", "0", "--quiet"}
	st, out, errOut := runCLI(append(small, "--json", "-")...)
	require.Equal(t, exitOK, st, errOut)
	var rep map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &rep), "stdout is one JSON document: %q", out)
	assert.Equal(t, "polynomial", rep["dataset"])
	assert.Contains(t, errOut, "existing clients: RSMSE")

	st, _, errOut = runCLI(append(small, "--json", filepath.Join(t.TempDir(), "no", "dir.json"))...)
	assert.Equal(t, exitUsage, st)
	assert.Contains(t, errOut, "does not exist")
	assert.NotContains(t, errOut, ".tmp")

	if _, err := os.Stat("/dev/full"); err == nil {
		st, _, errOut = runCLI(append(small, "--json", "/dev/full")...)
		assert.Equal(t, exitError, st)
		assert.Contains(t, errOut, "no space left")
	}
	assert.False(t, strings.Contains(errOut, "panic"))
}

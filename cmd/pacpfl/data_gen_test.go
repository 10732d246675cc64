//go:build linux

package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacpfl/pacpfl/data"
)

// The same flags write the same bytes, to a file or to standard output; the
// file reads back with the --data reader into its clients and rows.
func TestDataGenerateDeterministic(t *testing.T) {
	dir := t.TempDir()
	for _, kind := range []string{"smooth", "pv"} {
		args := []string{"data", "generate", "--kind", kind, "--clients", "3", "--new-clients", "1", "--samples", "50",
			"--seed", "5"}
		a, b := filepath.Join(dir, kind+"-a.csv"), filepath.Join(dir, kind+"-b.csv")
		st, out, errs := runCLI(append(args, "--out", a)...)
		require.Equal(t, exitOK, st, errs)
		assert.Contains(t, out, "wrote "+a+": 4 clients (3 existing, 1 new) × 50 rows (10 test rows each)")
		assert.Contains(t, out, "--new-clients new")
		st, _, errs = runCLI(append(args, "--out", b)...)
		require.Equal(t, exitOK, st, errs)
		st, piped, errs := runCLI(append(args, "--out", "-")...)
		require.Equal(t, exitOK, st, errs)
		assert.Contains(t, errs, "wrote -", "with --out - the summary goes to stderr")
		ba, _ := os.ReadFile(a)
		bb, _ := os.ReadFile(b)
		assert.True(t, bytes.Equal(ba, bb), "%s: two runs, different bytes", kind)
		assert.Equal(t, string(ba), piped, "%s: file and stdout differ", kind)

		target := map[string]string{"smooth": "y", "pv": "power"}[kind]
		rec, err := data.ReadCSVFile(a,
			data.CSVSpec{ClientColumn: "client", TargetColumn: target, SplitColumn: "split"})
		require.NoError(t, err)
		assert.Equal(t, 200, rec.Rows())
		assert.Len(t, rec.Clients, 4)
		tests := 0
		for _, v := range rec.Test {
			if v {
				tests++
			}
		}
		assert.Equal(t, 40, tests)
		noTemps(t, dir)
	}
}

// The generated file trains with the command line the generator prints.
func TestDataGenerateTrains(t *testing.T) {
	skipIfRepeat(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "smooth.csv")
	st, out, errs := runCLI("data", "generate", "--clients", "4", "--new-clients", "1", "--samples", "30", "--out",
		path)
	require.Equal(t, exitOK, st, errs)
	i := strings.Index(out, "read it with: pacpfl ")
	require.GreaterOrEqual(t, i, 0, out)
	line := strings.TrimSpace(out[i+len("read it with: pacpfl "):])
	args := append(strings.Fields(line), "--rounds", "2", "--k", "1", "--bound-samples", "0")
	st, out, errs = runCLI(args...)
	require.Equal(t, exitOK, st, "%s\n%s", out, errs)
	assert.Contains(t, out, "4 existing clients")
}

// A file is replaced whole and keeps its mode; a failed write leaves it as
// it was and no temporary file behind.
func TestDataGenerateReplacesAtomically(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "d.csv")
	require.NoError(t, os.WriteFile(path, []byte("old\n"), 0o640))
	st, _, errs := runCLI("data", "generate", "--clients", "1", "--samples", "10", "--out", path)
	require.Equal(t, exitOK, st, errs)
	b, _ := os.ReadFile(path)
	assert.True(t, strings.HasPrefix(string(b), "client,x1,x2,x3,y,split\nclient001,"))
	fi, _ := os.Stat(path)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
	noTemps(t, dir)

	st, _, errs = runCLI("data", "generate", "--clients", "1", "--samples", "10", "--out", "/dev/full")
	assert.Equal(t, exitError, st)
	assert.Contains(t, errs, "writing --out /dev/full: no space left on device")
}

func TestDataGenerateBadFlags(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "d.csv")
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "--out FILE.csv is required"},
		{[]string{"--kind", "images"}, `unknown --kind "images" (want smooth or pv)`},
		{[]string{"--clients", "0"}, "--clients 0 must be at least 1"},
		{[]string{"--new-clients", "-1"}, "--new-clients -1 must be ≥ 0"},
		{[]string{"--clients", "60000", "--new-clients", "60000"}, "at most 100000 clients in all"},
		{[]string{"--samples", "1"}, "--samples 1 must lie in 2…20000000"},
		{[]string{"--samples", "20000001"}, "--samples 20000001 must lie in 2…20000000"},
		{[]string{"--test-fraction", "1"}, "--test-fraction 1 must lie in [0, 1)"},
		{[]string{"--test-fraction", "NaN"}, "--test-fraction NaN must lie in [0, 1)"},
		{[]string{"--inputs", "0"}, "--inputs 0 must lie in 1…100"},
		{[]string{"--noise", "-1"}, "--noise -1 must be finite and ≥ 0"},
		{[]string{"--kind", "pv", "--step-minutes", "7"}, "--step-minutes 7 must divide 60"},
		{[]string{"--kind", "pv", "--year", "2100"}, "--year 2100 must lie in 1900…2099"},
		{[]string{"--kind", "pv", "--min-elevation", "-5"}, "--min-elevation -5 must lie in [0, 60)"},
		{[]string{"--kind", "pv", "--variant", "n"}, `unknown --variant "n" (want s or ew)`},
		{[]string{"--kind", "pv", "--noise", "0.2"}, "--noise is not a flag of --kind pv"},
		{[]string{"--step-minutes", "5"}, "--step-minutes is not a flag of --kind smooth"},
		{[]string{"--kind", "pv", "--year", "2098", "--samples", "100000", "--step-minutes", "60"},
			"need more days than 2098–2099 hold"},
		{[]string{"--seed", "-1"}, "invalid value"},
		{[]string{"--clients", "x"}, "invalid value"},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		args := append([]string{"data", "generate"}, c.args...)
		if !strings.Contains(c.want, "--out") {
			args = append(args, "--out", out)
		}
		st, _, errs := runCLI(args...)
		assert.Equal(t, exitUsage, st, "%v: %s", c.args, errs)
		assert.Contains(t, errs, c.want, "%v", c.args)
	}
	for _, c := range []struct {
		path, want string
	}{
		{filepath.Join(dir, "no", "d.csv"), "does not exist"},
		{dir, "is a directory"},
	} {
		st, _, errs := runCLI("data", "generate", "--out", c.path)
		assert.Equal(t, exitUsage, st, errs)
		assert.Contains(t, errs, c.want)
	}
	st, _, errs := runCLI("data")
	assert.Equal(t, exitUsage, st)
	assert.Contains(t, errs, "which action? generate")
	st, _, errs = runCLI("data", "make")
	assert.Equal(t, exitUsage, st)
	assert.Contains(t, errs, `unknown action "make"`)
	st, help, _ := runCLI("data", "generate", "-h")
	assert.Equal(t, exitOK, st)
	assert.Contains(t, help, "-step-minutes")
	_, err := os.Stat(out)
	assert.True(t, os.IsNotExist(err), "a refused command wrote its file")
	noTemps(t, dir)
}

// A write that fails half-way leaves the file as it was and no temporary
// file behind.
func TestWriteOutputStreamFailure(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "d.csv")
	require.NoError(t, os.WriteFile(path, []byte("old\n"), 0o644))
	boom := errors.New("generator failed")
	err := writeOutputStream(io.Discard, "--out", path, func(w io.Writer) error {
		w.Write([]byte("half a file"))
		return boom
	})
	assert.ErrorIs(t, err, boom)
	assert.Contains(t, err.Error(), "writing --out "+path)
	b, _ := os.ReadFile(path)
	assert.Equal(t, "old\n", string(b))
	noTemps(t, dir)
}

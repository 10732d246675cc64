package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tiny is train on small data with the flags under test after it.
func tiny(args ...string) []string {
	return append([]string{"train", "--clients", "4", "--new-clients", "1", "-T", "1", "--k", "1", "--quiet"}, args...)
}

// Issue 21, item 12: nonsense that used to be accepted silently is a usage
// error naming the flag.
func TestNonsenseFlagsAreRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{tiny("--clients-per-round", "5", "-c", "7"), "same flag"}, // the last won
		{tiny("--rounds", "5", "-T", "7"), "same flag"},
		{tiny("--optimizer", ""), `--optimizer ""`}, // ran adam
		{tiny("--batch", "1000"), "--batch 1000"},   // m_i is 10
		{tiny("--dp-clip", "NaN"), "--dp-clip"},     // without --dp-epsilon
		{tiny("--dp-clip", "2"), "needs --dp-epsilon"},
		// wrapped to 0
		{[]string{"experiment", "polynomial", "--seed-base", "18446744073709551615", "--seeds", "2"}, "--seed-base"},
		{[]string{"experiment", "fmnist", "--seed-base", "18446744073709551615", "--seeds", "2"}, "--seed-base"},
		{[]string{"bench", "lml", "--threads", "100000", "--m", "8", "--k", "1"}, "--threads 100000"},
		{[]string{"bench", "lml", "--split", "auto,auto", "--m", "8", "--k", "1"}, "twice"},
		{[]string{"bench", "gemm", "--backends", "native,native", "--n", "8"}, "twice"},
	} {
		st, out, errOut := runCLI(c.args...)
		assert.Equal(t, exitUsage, st, "%v: %s", c.args, errOut)
		assert.Contains(t, errOut, c.want, "%v", c.args)
		assert.Empty(t, out, "%v", c.args)
	}
}

// Issue 21, item 5: experiment validates every flag before any work, also
// the PAC-PFL ones when only baselines run, and does not offer flags it
// ignores.
func TestExperimentValidatesEverythingFirst(t *testing.T) {
	small := []string{"experiment", "polynomial", "--clients", "4", "--new-clients", "1", "--seeds", "1",
		"-T", "1", "--baseline-steps", "1"}
	for _, c := range [][]string{
		{"--methods", "vanilla,pooled,pacpfl", "--lr", "NaN"}, // ran two methods, then exit 2
		{"--methods", "vanilla", "--k", "0"},                  // accepted
		{"--methods", "vanilla", "--tau", "-1"},
		{"--methods", "vanilla", "-c", "9"}, // more than the 4 clients
	} {
		st, out, errOut := runCLI(append(small, c...)...)
		assert.Equal(t, exitUsage, st, "%v: %s", c, errOut)
		assert.NotContains(t, errOut, "experiment: seed", "%v: a method ran before the error", c)
		assert.Empty(t, out)
	}
	// Flags that would be ignored are not offered.
	for _, flag := range []string{"--seed", "--bound-samples", "--func-samples", "--delta", "--bound-trained-samples",
		"--loss-range"} {
		st, _, errOut := runCLI(append(small, flag, "3")...)
		assert.Equal(t, exitUsage, st, flag)
		assert.Contains(t, errOut, "not defined", flag)
	}
	st, out, _ := runCLI("experiment", "polynomial", "-h")
	require.Equal(t, exitOK, st)
	assert.Contains(t, out, "-seed-base")
	assert.NotContains(t, out, "  -seed uint")
	assert.NotContains(t, out, "-bound-samples")
	// --dp-sweep trains PAC-PFL only.
	st, _, errOut := runCLI("experiment", "polynomial", "--dp-sweep", "1", "--methods", "vanilla")
	assert.Equal(t, exitUsage, st)
	assert.Contains(t, errOut, "--dp-sweep")
	// tune's grid sets τ and σ_P.
	st, _, _ = runCLI("tune", "polynomial", "--tau", "0.3")
	assert.Equal(t, exitUsage, st)
}

// Issue 21, item 10: messages name the flag the user typed; a flag error is
// the error and one line pointing at -h, not the whole flag list.
func TestFlagMessages(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{tiny("-c", "-1"), "--clients-per-round -1"}, // said "-1 clients per round but only …"
		{tiny("--extra", "-1"), "--extra -1"},
		{tiny("--new-clients", "-1"), "--new-clients -1"},
		// said: unknown dataset "--seeds"
		{[]string{"experiment", "--seeds", "1", "polynomial"}, "comes before the flags"},
		{[]string{"tune", "--seed", "1", "polynomial"}, "comes before the flags"},
	} {
		st, _, errOut := runCLI(c.args...)
		assert.Equal(t, exitUsage, st, "%v", c.args)
		assert.Contains(t, errOut, c.want, "%v", c.args)
	}
	for _, args := range [][]string{
		{"train", "--k", "x"},
		{"train", "--no-such-flag"},
		{"experiment", "polynomial", "--rounds", "-"},
		{"bench", "gemm", "--n", "x"},
		{"version", "stray"},
	} {
		st, out, errOut := runCLI(args...)
		assert.Equal(t, exitUsage, st, "%v", args)
		assert.Empty(t, out)
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		assert.LessOrEqual(t, len(lines), 2, "%v: %q", args, errOut)
		assert.Contains(t, lines[len(lines)-1], "-h' for the flags", "%v", args)
	}
}

// Issue 21, item 11: help works for every subcommand, on stdout with exit 0,
// including `help help` and `help -h`, and `help experiment` lists flags.
func TestHelpEverywhere(t *testing.T) {
	for _, args := range [][]string{
		{"help"}, {"help", "help"}, {"help", "-h"}, {"-h"}, {"--help"},
		{"train", "-h"}, {"version", "-h"}, {"experiment", "-h"}, {"experiment", "polynomial", "-h"},
		{"experiment", "fmnist", "-h"}, {"tune", "-h"}, {"gp", "-h"}, {"gp", "eval", "-h"}, {"bnn", "-h"},
		{"bench", "-h"}, {"bench", "gemm", "-h"}, {"bench", "lml", "-h"},
		{"help", "train"}, {"help", "experiment"}, {"help", "gp"}, {"help", "bench"},
	} {
		st, out, errOut := runCLI(args...)
		assert.Equal(t, exitOK, st, "%v: %s", args, errOut)
		assert.Empty(t, errOut, "%v: help goes to stdout", args)
		assert.Contains(t, out, "usage: pacpfl", "%v", args)
	}
	_, out, _ := runCLI("help", "experiment")
	for _, f := range []string{"-seeds", "-methods", "-json", "-k int"} {
		assert.Contains(t, out, f)
	}
	_, out, _ = runCLI("help", "gp")
	assert.Contains(t, out, "-init-seed")
}

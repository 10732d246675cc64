package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"io"
	"strings"
	"testing"
)

func TestFlagValue(t *testing.T) {
	for _, c := range []struct {
		args  []string
		value string
		ok    bool
	}{
		{[]string{"--k", "3", "--data", "f.csv"}, "f.csv", true},
		{[]string{"-data=g.csv", "--data", "h"}, "g.csv", true},
		{[]string{"--data="}, "", true},
		{[]string{"x", "--data"}, "", false},
		{[]string{"--", "--data", "f"}, "", false},
		{[]string{"--database", "f", "data", "f"}, "", false},
		{[]string{"--loss-range", "-6,2", "--data", "f"}, "f", true},
	} {
		if v, ok := FlagValue(c.args, "data"); v != c.value || ok != c.ok {
			t.Errorf("FlagValue(%q) = %q, %v; want %q, %v", c.args, v, ok, c.value, c.ok)
		}
	}
}

// ValuesHash hashes the flags' values in name order, given or default,
// without the skipped ones.
func TestValuesHash(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Int("b", 2, "")
	fs.String("a", "x", "")
	fs.Bool("quiet", false, "")
	if err := fs.Parse([]string{"--b", "3", "--quiet"}); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("a=x\nb=3\n"))
	if got := ValuesHash(fs, func(n string) bool { return n == "quiet" }); got != hex.EncodeToString(sum[:]) {
		t.Errorf("hash %s", got)
	}
}

// RunAction runs its action, prints the usage and the action's help for a
// help argument, and refuses no or another action.
func TestRunAction(t *testing.T) {
	usage := func(w io.Writer) { io.WriteString(w, "usage: x eval") }
	var got []string
	run := func(args []string, stdout, _ io.Writer) int {
		got = args
		io.WriteString(stdout, "[run]")
		return 7
	}
	for _, c := range []struct {
		args           []string
		st             int
		stdout, stderr string
		runArgs        []string
	}{
		{[]string{"eval", "--n", "1"}, 7, "[run]", "", []string{"--n", "1"}},
		{[]string{"--help"}, 7, "usage: x eval\n[run]", "", []string{"-h"}},
		{nil, ExitUsage, "", "usage: x eval", nil},
		{[]string{"fit"}, ExitUsage, "", "prog x: unknown action \"fit\"\nusage: x eval", nil},
	} {
		got = nil
		var out, errw bytes.Buffer
		st := RunAction("prog x", "eval", usage, run, c.args, &out, &errw)
		if st != c.st || out.String() != c.stdout || errw.String() != c.stderr ||
			strings.Join(got, " ") != strings.Join(c.runArgs, " ") {
			t.Errorf("%q: %d, %q, %q, run %q", c.args, st, out.String(), errw.String(), got)
		}
	}
}

package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
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

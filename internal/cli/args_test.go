package cli

import "testing"

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

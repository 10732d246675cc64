package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --mean-hidden, --kernel-hidden and --df change the GP networks of every
// GP method of experiment and tune: the same run with other networks gives
// other results, and tune says which networks it scored.
func TestGPNetFlags(t *testing.T) {
	run := func(extra ...string) [2]float64 {
		t.Helper()
		path := filepath.Join(t.TempDir(), "e.json")
		args := append([]string{"experiment", "polynomial", "--methods", "pacpfl,pooled", "--seeds", "1", "--clients",
			"3", "--new-clients", "2",
			"-T", "5", "--k", "2", "--baseline-steps", "5", "--quiet", "--json", path}, extra...)
		code, _, errOut := runCLI(args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d, stderr %q", extra, code, errOut)
		}
		raw, _ := os.ReadFile(path)
		var rep struct {
			Methods map[string]struct {
				Existing struct {
					RSMSE struct {
						Mean float64 `json:"mean"`
					} `json:"rsmse"`
				} `json:"existing"`
			} `json:"methods"`
		}
		if err := json.Unmarshal(raw, &rep); err != nil {
			t.Fatalf("JSON %s: %v", raw, err)
		}
		return [2]float64{rep.Methods["pacpfl"].Existing.RSMSE.Mean, rep.Methods["pooled"].Existing.RSMSE.Mean}
	}
	def := run()
	if again := run("--mean-hidden", "32,32", "--kernel-hidden", "32,32", "--df", "2"); again != def {
		t.Fatalf("the default networks given explicitly: %v, default %v", again, def)
	}
	for _, extra := range [][]string{{"--mean-hidden", "4"}, {"--kernel-hidden", "none"}, {"--df", "1"}} {
		if got := run(extra...); got[0] == def[0] || got[1] == def[1] {
			t.Errorf("%v: RSMSE (PAC-PFL, Pooled) %v, the same as the default networks' %v", extra, got, def)
		}
	}
	code, out, errOut := runCLI("tune", "polynomial", "--clients", "4", "--new-clients", "0", "-T", "5", "--k", "2",
		"--taus", "0.5", "--sigma-ps", "0.5", "--folds", "2", "--quiet", "--mean-hidden", "none", "--kernel-hidden",
		"8,8,8", "--df", "3")
	if code != exitOK || !strings.Contains(out, "mean network hidden none, kernel network hidden 8,8,8 → 3 features") {
		t.Fatalf("tune: exit %d, stderr %q, output\n%s", code, errOut, out)
	}
	for _, bad := range [][]string{
		{"experiment", "pv", "--mean-hidden", "0"},
		{"experiment", "pv", "--kernel-hidden", "32,x"},
		{"experiment", "polynomial", "--df", "0"},
		{"tune", "pv", "--method", "pooled", "--kernel-hidden", "3000000000,3000000000"},
		{"tune", "pv", "--method", "vanilla", "--mean-hidden", "100000,100000,100000"},
	} {
		if code, _, errOut := runCLI(bad...); code != exitUsage || errOut == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 with a message", bad, code, errOut)
		}
	}
}

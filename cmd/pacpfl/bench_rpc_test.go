package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pacpfl/pacpfl/bench/suite"
)

// A small bench rpc: every test and transport reports a figure, no errors.
func TestBenchRPCSmall(t *testing.T) {
	skipIfRepeat(t)
	code, out, errOut := runCLI("bench", "rpc", "--reps", "1", "--updates", "5", "--clients", "6", "--rounds", "2",
		"--transfers", "1", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var r suite.RPCRow
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		seen[r.Test+"/"+r.Transport] = true
		if r.Errors != 0 || (r.PerUpdate <= 0 && r.MBps <= 0 && r.RoundMS <= 0) {
			t.Errorf("%+v", r)
		}
	}
	if len(seen) != 6 {
		t.Errorf("results for %v, want 3 tests × 2 transports", seen)
	}
	if code, _, _ := runCLI("bench", "rpc", "--clients", "0"); code != exitUsage {
		t.Errorf("--clients 0: exit %d", code)
	}
}

// bench rpc --method pfedbayes: four tests × two transports, each row
// naming the method; an unknown method is a usage error.
func TestBenchRPCPeerMethod(t *testing.T) {
	skipIfRepeat(t)
	code, out, errOut := runCLI("bench", "rpc", "--method", "pfedbayes", "--reps", "1", "--updates", "3", "--clients",
		"3", "--rounds", "2", "--transfers", "1", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for _, line := range lines {
		var r suite.RPCRow
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if r.Method != "pfedbayes" || r.Errors != 0 {
			t.Errorf("%+v", r)
		}
	}
	if len(lines) != 8 {
		t.Errorf("%d rows, want 4 tests × 2 transports", len(lines))
	}
	if code, _, _ := runCLI("bench", "rpc", "--method", "nope"); code != exitUsage {
		t.Errorf("--method nope: exit %d", code)
	}
}

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// train --data pv trains GP clients on the PV data set (its --variant and
// --samples) and names it in the text and the JSON; flags of other data
// sets are refused.
func TestTrainPV(t *testing.T) {
	skipIfRepeat(t)
	path := filepath.Join(t.TempDir(), "pv.json")
	code, out, errOut := runCLI("train", "--data", "pv", "--variant", "ew", "--samples", "150", "--clients", "3",
		"--new-clients", "1", "-T", "3", "--k", "2", "--bound-samples", "0", "--quiet", "--json", path)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "GP clients on PV-EW(150): 3 existing clients (m_i=150), 1 new") {
		t.Errorf("setting line:\n%s", out)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Dataset string `json:"dataset"`
	}
	if err := json.Unmarshal(b, &rep); err != nil || rep.Dataset != "pv-ew-150" {
		t.Errorf("JSON dataset %q, %v", rep.Dataset, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--extra", "3"}, "--extra applies to --data polynomial"},
		{[]string{"--samples", "1"}, "--samples 1: want at least 2"},
		{[]string{"--variant", "north"}, "--variant"},
		{[]string{"--model", "bnn"}, "--model bnn runs on --data fmnist"},
	} {
		args := append([]string{"train", "--data", "pv", "--clients", "3", "--quiet"}, c.args...)
		code, _, errOut := runCLI(args...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 naming %q", c.args, code, errOut, c.want)
		}
	}
}

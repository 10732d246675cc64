package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every DP mechanism through the CLI: the printed ε says what it guarantees
// (in full with --explain, in one line without), the paper's variant is
// flagged, and the client LMLs (not covered by the guarantee) are neither
// printed nor written.
func TestTrainDPReportsTheGuarantee(t *testing.T) {
	skipIfRepeat(t)
	for _, c := range []struct {
		args []string
		want []string
		eps  float64
	}{
		{[]string{"--dp-epsilon", "2", "--explain"}, []string{"ε = 2 (pure ε-DP", "one training sample"}, 2},
		{[]string{"--dp-epsilon", "2", "--dp-mechanism", "gaussian", "--dp-delta", "1e-6", "--explain"},
			[]string{"(ε, δ) = (2, 1e-06)", "Rényi"}, 2},
		{[]string{"--dp-epsilon", "2", "--dp-mechanism", "paper", "--explain"}, []string{"NOT a guarantee"}, 0},
		{[]string{"--dp-epsilon", "2"}, []string{"differential privacy: (ε = 2, δ = 0) for the released particles " +
			"(laplace)\n"}, 2},
		{[]string{"--dp-epsilon", "2", "--dp-mechanism", "paper"}, []string{"ε = 387 holds (not the ε = 2 asked for)"},
			0},
	} {
		path := filepath.Join(t.TempDir(), "out.json")
		args := append([]string{"train", "--clients", "4", "--new-clients", "1", "-T", "5", "--k", "2", "-c", "2",
			"--bound-samples", "0", "--json", path}, c.args...)
		code, out, errOut := runCLI(args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d, stderr %q", c.args, code, errOut)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: output lacks %q:\n%s", c.args, w, out)
			}
		}
		if strings.Contains(out, "mean client LML") || strings.Contains(errOut, "LML") {
			t.Errorf("%v: a DP run printed client LMLs:\n%s\n%s", c.args, out, errOut)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var rep struct {
			Epsilon *float64       `json:"epsilon"`
			History []float64      `json:"lml_history"`
			Final   *float64       `json:"final_mean_lml"`
			Privacy map[string]any `json:"privacy"`
			Config  map[string]any `json:"config"`
		}
		if err := json.Unmarshal(data, &rep); err != nil {
			t.Fatal(err)
		}
		if rep.History != nil || rep.Final != nil {
			t.Errorf("%v: JSON releases client LMLs: %s", c.args, data)
		}
		if rep.Epsilon == nil || (c.eps > 0 && *rep.Epsilon != c.eps) || (c.eps == 0 && *rep.Epsilon <= 2) {
			t.Errorf("%v: JSON ε = %v", c.args, rep.Epsilon)
		}
		if st, _ := rep.Privacy["statement"].(string); st == "" {
			t.Errorf("%v: no privacy statement in the JSON", c.args)
		}
	}
}

func TestTrainDPBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--dp-epsilon", "1", "--dp-mechanism", "exponential"},
		{"--dp-epsilon", "1", "--dp-delta", "1e-5"}, // laplace is pure ε-DP
		{"--dp-epsilon", "1", "--dp-mechanism", "gaussian", "--dp-delta", "0"},
		{"--dp-epsilon", "1", "--dp-mechanism", "gaussian", "--dp-delta", "1.5"},
		{"--dp-mechanism", "gaussian"}, // no ε: would silently run without DP
		{"--dp-noise-seed", "3"},
		{"--dp-epsilon", "1", "--dp-clip", "0"},
	} {
		code, _, errOut := runCLI(append([]string{"train", "-T", "1"}, args...)...)
		if code != exitUsage {
			t.Errorf("%v: exit %d (stderr %q), want %d", args, code, errOut, exitUsage)
		}
	}
}

// experiment --dp-sweep: one row per guaranteed ε plus the non-private run,
// each with its guarantee in the JSON.
func TestExperimentDPSweep(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sweep.json")
	code, out, errOut := runCLI("experiment", "polynomial", "--dp-sweep", "1,50", "--clients", "4", "--new-clients",
		"1",
		"-T", "5", "--k", "1", "--seeds", "1", "--quiet", "--json", path)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, w := range []string{"| no DP |", "| 1 |", "| 50 |", "pure ε-DP"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	var rep struct {
		Rows []struct {
			Epsilon   *float64 `json:"epsilon"`
			Statement string   `json:"statement"`
		} `json:"dp_sweep"`
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rep); err != nil || len(rep.Rows) != 3 || rep.Rows[0].Epsilon != nil ||
		*rep.Rows[2].Epsilon != 50 || rep.Rows[1].Statement == "" {
		t.Fatalf("bad sweep JSON (%v): %s", err, data)
	}
	// The DP-only flags apply to the private runs, not to the reference run.
	code, out, errOut = runCLI("experiment", "polynomial", "--dp-sweep", "3", "--dp-mechanism", "gaussian",
		"--dp-delta", "1e-6",
		"--clients", "4", "--new-clients", "1", "-T", "3", "--k", "1", "--seeds", "1", "--quiet")
	if code != exitOK || !strings.Contains(out, "(ε, δ) = (3, 1e-06)") {
		t.Fatalf("gaussian sweep: exit %d, %s\n%s", code, errOut, out)
	}
	if code, _, _ := runCLI("experiment", "polynomial", "--dp-sweep", "1", "--dp-epsilon", "2", "-T",
		"1"); code != exitUsage {
		t.Fatalf("--dp-sweep with --dp-epsilon: exit %d", code)
	}
}

// pacpfl tune ranks the grid by cross-validation on training data only.
func TestTuneShortRun(t *testing.T) {
	skipIfRepeat(t)
	code, out, errOut := runCLI("tune", "polynomial", "--clients", "6", "--new-clients", "0", "-T", "20", "--k", "2",
		"--taus", "0.2,0.5", "--sigma-ps", "0.5", "--folds", "2", "--quiet")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "best: --tau") || !strings.Contains(out, "seed 1000") ||
		strings.Count(out, "| 0.5 |") < 1 {
		t.Fatalf("output:\n%s", out)
	}
	// Without --lrs the η grid is --lr alone (0.001), as its help says.
	if strings.Count(out, "| 0.001 | 20 |") != 2 || strings.Contains(out, "| 0.003 |") {
		t.Fatalf("η grid without --lrs:\n%s", out)
	}
	// η and T: one run per η, scored after each checkpoint.
	code, out, errOut = runCLI("tune", "polynomial", "--clients", "6", "--new-clients", "0", "--k", "2",
		"--taus", "0.5", "--sigma-ps", "0.5", "--lrs", "0.01,0.03", "--checkpoints", "10,20", "--folds", "2", "--quiet")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Count(out, "| 0.5 | 0.5 |") != 4 || !strings.Contains(out, "| 0.03 | 20 |") ||
		!strings.Contains(out, "--lr ") {
		t.Fatalf("output:\n%s", out)
	}
	// --cv-split future: PAC-PFL and a baseline, said in the text and the JSON.
	for _, m := range []string{"pacpfl", "mtl"} {
		path := filepath.Join(t.TempDir(), "cv.json")
		code, out, errOut = runCLI("tune", "polynomial", "--method", m, "--clients", "6", "--new-clients", "0", "-T",
			"10", "--k", "2",
			"--taus", "0.5", "--sigma-ps", "0.5", "--folds", "2", "--cv-split", "future", "--quiet", "--json", path)
		raw, _ := os.ReadFile(path)
		if code != exitOK || !strings.Contains(out, "--cv-split future") ||
			!strings.Contains(string(raw), `"cv_split": "future"`) {
			t.Fatalf("%s --cv-split future: exit %d, stderr %q, output\n%s\nJSON %s", m, code, errOut, out, raw)
		}
	}
	for _, args := range [][]string{{"tune"}, {"tune", "polynomial", "--folds", "1"},
		{"tune", "polynomial", "--taus", "-1"},
		{"tune", "polynomial", "--cv-split", "later"}, {"tune", "polynomial", "--method", "mtl", "--cv-split", "later"},
		{"tune", "polynomial", "--checkpoints", "0"}, {"tune", "polynomial", "--lrs", "0"},
		{"tune", "polynomial", "--method", "pfedgp"}} {
		if code, _, _ := runCLI(args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
}

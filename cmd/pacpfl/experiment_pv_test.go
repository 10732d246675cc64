package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/methods"
)

func TestExperimentPV(t *testing.T) {
	skipIfRepeat(t)
	path := filepath.Join(t.TempDir(), "pv.json")
	code, out, errOut := runCLI("experiment", "pv", "--variant", "s", "--seeds", "1", "--clients", "3", "--new-clients",
		"2",
		"-T", "5", "--k", "2", "--methods", "pacpfl,mtl", "--quiet", "--json", path)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"PV-S(150)", "| PAC-PFL |", "paper 0.43 ± 0.02", "| MTL |", "paper 0.45 ± 0.00",
		"simulated"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Dataset string                     `json:"dataset"`
		Methods map[string]json.RawMessage `json:"methods"`
	}
	if err := json.Unmarshal(raw, &rep); err != nil || rep.Dataset != "pv-s-150" || len(rep.Methods) != 2 {
		t.Fatalf("JSON %s (%v)", raw, err)
	}
	for _, bad := range [][]string{
		{"experiment", "pv", "--variant", "north"},
		{"experiment", "pv", "--samples", "1"},
		{"experiment", "pv", "--samples", "5000", "--clients", "2", "--new-clients", "0"},
		{"experiment", "polynomial", "--variant", "s"}, // PV flags belong to pv
		{"experiment", "pv", "--k-sweep", "1,2", "--dp-sweep", "1"},
		{"experiment", "pv", "--k-sweep", "1,2", "--k", "3"},
		{"experiment", "pv", "--k-sweep", "1,2", "--methods", "mtl"},
	} {
		if code, _, errOut := runCLI(bad...); code != exitUsage || errOut == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 with a message", bad, code, errOut)
		}
	}
}

func TestExperimentKSweep(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.json")
	code, out, errOut := runCLI("experiment", "polynomial", "--k-sweep", "1,3", "--seeds", "2", "--clients", "4",
		"--new-clients", "2",
		"-T", "5", "--quiet", "--json", path)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(out, "| 1 |") || !strings.Contains(out, "| 3 |") || !strings.Contains(out, "Fig. 3") {
		t.Errorf("table:\n%s", out)
	}
	// Polynomial has two modes: k = 3 reports how far its particles serve
	// them, k = 1 (one prior, nothing to specialise) does not.
	if !strings.Contains(out, "k = 3: mixture weights against the data's modes") ||
		strings.Contains(out, "k = 1: mixture") {
		t.Errorf("mode specialisation lines:\n%s", out)
	}
	raw, _ := os.ReadFile(path)
	var rep struct {
		Rows []struct {
			K        int `json:"k"`
			Existing struct {
				RSMSE struct{ Mean float64 } `json:"rsmse"`
			} `json:"existing"`
			PerSeed map[string][]float64 `json:"per_seed"`
		} `json:"k_sweep"`
	}
	if err := json.Unmarshal(raw, &rep); err != nil || len(rep.Rows) != 2 || rep.Rows[0].K != 1 || rep.Rows[1].K != 3 ||
		!(rep.Rows[1].Existing.RSMSE.Mean > 0) {
		t.Fatalf("JSON %s (%v)", raw, err)
	}
	if _, ok := rep.Rows[0].PerSeed["existing_mode_purity"]; ok || len(rep.Rows[0].PerSeed["existing_rsmse"]) != 2 {
		t.Errorf("k = 1 per seed: %v; want two RSMSEs and no mode purity", rep.Rows[0].PerSeed)
	}
	if r := rep.Rows[1]; math.Abs(fl.Mean(r.PerSeed["existing_rsmse"])-r.Existing.RSMSE.Mean) > 1e-12 {
		t.Errorf("k = 3: per-seed RSMSE %v, mean %v", r.PerSeed["existing_rsmse"], r.Existing.RSMSE.Mean)
	}
	m := rep.Rows[1].PerSeed
	for _, g := range []string{"existing", "new"} {
		p, c := m[g+"_mode_purity"], m[g+"_mode_chance"]
		if len(p) != 2 || len(c) != 2 {
			t.Fatalf("%s: purity %v, chance %v: want one per seed", g, p, c)
		}
		for s := range p {
			// Purity lies between the chance level and 1 (fl.Specialisation).
			if !(p[s] >= c[s]-1e-12 && p[s] <= 1+1e-12 && c[s] >= 0.5) {
				t.Errorf("%s seed %d: purity %v, chance %v", g, s, p[s], c[s])
			}
		}
	}
}

func TestTuneBaselines(t *testing.T) {
	skipIfRepeat(t)
	for _, m := range []string{"mtl", "maml", "vanilla", "pooled"} {
		path := filepath.Join(t.TempDir(), m+".json")
		args := []string{"tune", "polynomial", "--method", m, "--clients", "4", "--folds", "2", "--quiet", "--json",
			path}
		if m == "vanilla" || m == "pooled" {
			// A short grid of Adam steps keeps the search fast.
			args = append(args, "--fit-steps", "3,10,30,60", "--fit-lrs", "0.003,0.01")
		}
		code, out, errOut := runCLI(args...)
		if code != exitOK {
			t.Fatalf("%s: exit %d, stderr %q", m, code, errOut)
		}
		if !strings.Contains(out, "best:") ||
			!strings.Contains(out, "2-fold cross-validation on Polynomial seed 1000") {
			t.Errorf("%s: output\n%s", m, out)
		}
		raw, _ := os.ReadFile(path)
		var rep struct {
			Method string `json:"method"`
			Points []struct {
				RSMSE float64   `json:"rsmse"`
				Folds []float64 `json:"per_fold"`
			} `json:"points"`
		}
		if err := json.Unmarshal(raw, &rep); err != nil || rep.Method != m || len(rep.Points) < 8 {
			t.Fatalf("%s: JSON %s (%v)", m, raw, err)
		}
		for i, p := range rep.Points {
			if len(p.Folds) != 2 || !(p.RSMSE > 0) || (i > 0 && p.RSMSE < rep.Points[i-1].RSMSE) {
				t.Errorf("%s: point %d %+v (best first)", m, i, p)
			}
		}
	}
	if code, _, _ := runCLI("tune", "polynomial", "--method", "fedavg"); code != exitUsage {
		t.Errorf("unknown method: exit %d", code)
	}
}

// On PV, experiment and tune start from the PV defaults chosen by
// cross-validation (regressionFlags), which -h shows.
func TestPVDefaults(t *testing.T) {
	m, err := methods.DefaultPACPFL(methods.PV)
	if err != nil {
		t.Fatal(err)
	}
	o, rounds := m.Options, strconv.Itoa(m.Options.Server.Rounds)
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	pv := []struct{ flag, value string }{
		{"sigma-p", g(o.SigmaP)}, {"lr", g(o.Server.LR)}, {"rounds", rounds}, {"T", rounds}, {"tau", g(o.Server.Tau)},
	}
	for _, cmd := range [][]string{{"experiment", "pv", "-h"}, {"tune", "pv", "-h"}} {
		code, out, errOut := runCLI(cmd...)
		if code != exitOK {
			t.Fatalf("%v: exit %d, stderr %q", cmd, code, errOut)
		}
		for _, d := range pv {
			if cmd[0] == "tune" && (d.flag == "sigma-p" || d.flag == "tau") {
				continue // the grid sets them
			}
			if !strings.Contains(out+errOut, "(default "+d.value+")") {
				t.Errorf("%v: -h does not show --%s's PV default %s", cmd, d.flag, d.value)
			}
		}
	}
	// Polynomial keeps its own defaults.
	code, out, errOut := runCLI("experiment", "polynomial", "-h")
	for _, want := range []string{"server iterations T (default 3000)", "initial particle spread) (default 0.5)",
		"server learning rate η (default 0.001)", "server temperature τ (default 0.2)"} {
		if code != exitOK || !strings.Contains(out+errOut, want) {
			t.Errorf("polynomial -h lacks %q", want)
		}
	}
}

// The experiment table says how far a mixture method's particles serve the
// data's modes (Polynomial has two), in its text and per seed in the JSON;
// single-prior methods get no such line.
func TestExperimentModeSpecialisation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "e.json")
	code, out, errOut := runCLI("experiment", "polynomial", "--methods", "pacpfl,pooled", "--seeds", "1", "--clients",
		"4", "--new-clients", "2",
		"-T", "5", "--k", "2", "--baseline-steps", "5", "--quiet", "--json", path)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(out, "PAC-PFL mixture weights against the data's modes") ||
		strings.Contains(out, "Pooled mixture") {
		t.Errorf("output:\n%s", out)
	}
	raw, _ := os.ReadFile(path)
	var rep struct {
		Methods map[string]struct {
			PerSeed map[string][]float64 `json:"per_seed"`
		} `json:"methods"`
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatalf("JSON %s: %v", raw, err)
	}
	p, c := rep.Methods["pacpfl"].PerSeed["existing_mode_purity"], rep.Methods["pacpfl"].PerSeed["existing_mode_chance"]
	if len(p) != 1 || len(c) != 1 || !(p[0] >= c[0]-1e-12 && p[0] <= 1+1e-12) {
		t.Errorf("PAC-PFL purity %v, chance %v", p, c)
	}
	if _, ok := rep.Methods["pooled"].PerSeed["existing_mode_purity"]; ok {
		t.Errorf("Pooled has a mode purity: %v", rep.Methods["pooled"].PerSeed)
	}
}

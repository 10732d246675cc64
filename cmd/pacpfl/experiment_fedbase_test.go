package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pacpfl/pacpfl/fl/pfedbayes"
)

// pFedBayes, FedAvg, FedProx and FedAvg+FT as methods of experiment fmnist:
// their rows beside the paper's, and the JSON groups existing / global /
// new with the best accuracy over the evaluated rounds.
func TestExperimentFMNISTFedBaselines(t *testing.T) {
	skipIfRepeat(t)
	dir := writeFakeFMNIST(t, 140)
	path := filepath.Join(t.TempDir(), "exp.json")
	args := append([]string{"experiment", "fmnist", "--data-dir", dir, "--seeds", "1", "--json", path,
		"--methods", "pfedbayes,fedavg,fedprox,fedavg-ft", "--fed-rounds", "3", "--fed-eval-last", "2",
		"--fed-local-steps", "2",
		"--fed-batch", "10", "--fedavg-ft-steps", "2", "--pfedbayes-eval-draws", "2", "--pfedbayes-optimizer", "adam"},
		tinyBNNFlags...)
	code, out, errOut := runCLI(args...)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"| pFedBayes (ours) |", "| FedAvg (ours) |", "| FedProx (ours) |",
		"| FedAvg+FT (ours) |",
		"best of rounds 2-3", "| FedAvg (pFedBayes paper, MLP) | – | – | – | 81.51 ± 0.19 |"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Methods map[string]map[string]json.RawMessage `json:"methods"`
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	wantGroups := map[string]string{
		"pfedbayes": "[best_over_rounds existing global new per_client seconds_per_round]",
		"fedavg":    "[best_over_rounds existing global new per_client seconds_per_round]",
		"fedprox":   "[best_over_rounds existing global new per_client seconds_per_round]",
		"fedavg-ft": "[existing new per_client seconds_per_round]",
	}
	for m, want := range wantGroups {
		g := rep.Methods[m]
		keys := make(map[string]any, len(g))
		for k := range g {
			keys[k] = nil
		}
		if got := fmt.Sprint(sortedKeys(keys)); got != want {
			t.Errorf("%s: keys %s, want %s", m, got, want)
		}
	}
	var pfb struct {
		Existing, Global struct {
			Accuracy struct{ Mean *float64 }
			Best     struct{ Mean *float64 } `json:"best_accuracy"`
		}
		BestOver string `json:"best_over_rounds"`
	}
	if err := json.Unmarshal(mustJSON(t, rep.Methods["pfedbayes"]), &pfb); err != nil {
		t.Fatal(err)
	}
	if pfb.BestOver != "2-3" || pfb.Existing.Accuracy.Mean == nil || pfb.Existing.Best.Mean == nil ||
		pfb.Global.Best.Mean == nil ||
		*pfb.Existing.Best.Mean < *pfb.Existing.Accuracy.Mean {
		t.Errorf("pfedbayes: %s", raw)
	}
	// FedAvg has no personalised models: existing is null.
	var ex struct{ Accuracy struct{ Mean *float64 } }
	if err := json.Unmarshal(rep.Methods["fedavg"]["existing"], &ex); err != nil || ex.Accuracy.Mean != nil {
		t.Errorf("fedavg existing: %s", rep.Methods["fedavg"]["existing"])
	}
	// --arch bcnn runs the same methods on the paper's CNN.
	code, out, errOut = runCLI("experiment", "fmnist", "--data-dir", dir, "--seeds", "1", "--methods",
		"pfedbayes,fedprox", "--arch", "bcnn",
		"--hidden", "8", "--max-images", "1200", "--fed-rounds", "2", "--fed-local-steps", "1", "--fed-batch", "8",
		"--quiet")
	if code != exitOK || !strings.Contains(out, "| pFedBayes (ours) |") || !strings.Contains(out, "bcnn") {
		t.Errorf("--arch bcnn: exit %d, stderr %q\n%s", code, errOut, out)
	}
	for _, bad := range [][]string{{"--fed-rounds", "0"}, {"--pfedbayes-zeta", "-1"}, {"--fedprox-mu", "-1"},
		{"--pfedbayes-beta", "2"}, {"--pfedbayes-optimizer", "rmsprop"}, {"--pfedbayes-variant", "torch"}} {
		code, _, errOut := runCLI(
			append([]string{"experiment", "fmnist", "--data-dir", dir, "--methods", "pfedbayes,fedprox"}, bad...)...)
		if code != exitUsage {
			t.Errorf("%v: exit %d (%q), want 2", bad, code, errOut)
		}
	}
}

// --pfedbayes-variant code takes the authors' code's settings except where
// a flag is given.
func TestPFedBayesVariantFlags(t *testing.T) {
	parse := func(args ...string) pfedbayes.Options {
		t.Helper()
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		var f fedFlags
		f.add(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		x := &fmnistExperiment{methods: stringList{pfedbayes.MethodPFedBayes}, bf: newBNNFlags()}
		if err := f.check(x); err != nil {
			t.Fatal(err)
		}
		return f.b.PFedBayesOptions(x.bf.net, 1)
	}
	if o := parse(); o.Variant != pfedbayes.Paper || o.Optimizer != pfedbayes.SGD || o.Rho0 != -2.5 ||
		o.PersonalSteps != 1 || o.NoiseStd != 1 || o.EvalDraws != 0 {
		t.Errorf("defaults: %+v", o)
	}
	c := pfedbayes.CodeOptions()
	if o := parse("--pfedbayes-variant", "code"); o.Variant != pfedbayes.Code || o.Optimizer != pfedbayes.Adam ||
		o.Rho0 != c.Rho0 ||
		o.PersonalSteps != 5 || o.NoiseStd != 0.001 || o.EvalDraws != 1 || o.Zeta != 10 {
		t.Errorf("code: %+v", o)
	}
	if o := parse("--pfedbayes-variant", "code", "--pfedbayes-rho0", "-2.5", "--pfedbayes-optimizer", "sgd",
		"--pfedbayes-eval-draws", "0"); o.Rho0 != -2.5 ||
		o.Optimizer != pfedbayes.SGD || o.EvalDraws != 0 || o.PersonalSteps != 5 {
		t.Errorf("code with flags: %+v", o)
	}
}

func mustJSON(t *testing.T, m map[string]json.RawMessage) []byte {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

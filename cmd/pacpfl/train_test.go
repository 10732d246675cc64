package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A short end-to-end training run through the CLI: metrics and bounds are
// printed and the JSON file is complete and parseable.
func TestTrainShortRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.json")
	code, out, errOut := runCLI("train", "--clients", "6", "--new-clients", "2", "-T", "40", "--k", "2", "-c", "3",
		"--lr", "0.01", "--bound-samples", "3", "--func-samples", "5", "--quiet", "--json", path)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"existing clients: RSMSE", "new clients:", "Thm 4.2, existing clients",
		"Lemma 4.6, a new client", "--explain"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if errOut != "" {
		t.Errorf("--quiet printed %q", errOut)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Dataset  string `json:"dataset"`
		Existing struct{ RSMSE, CE float64 }
		Bounds   *struct{ Server float64 }
		History  []float64 `json:"lml_history"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Dataset != "polynomial" || rep.Existing.RSMSE <= 0 || rep.Bounds == nil || len(rep.History) != 40 {
		t.Fatalf("bad JSON report: %s", data)
	}
	// The training LML improves.
	h := rep.History
	if !(h[len(h)-1]+h[len(h)-2] > h[0]+h[1]) {
		t.Fatalf("training LML did not improve: %v … %v", h[:2], h[len(h)-2:])
	}
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*tmp*"))
	if len(matches) != 0 {
		t.Fatalf("temporary files left: %v", matches)
	}
}

// --certify prints one line per certificate and writes every term to the
// JSON report; --explain prints the derivations.
func TestTrainCertify(t *testing.T) {
	skipIfRepeat(t)
	path := filepath.Join(t.TempDir(), "out.json")
	code, out, errOut := runCLI("train", "--clients", "4", "--new-clients", "2", "-T", "5", "--k", "2",
		"--bound-samples", "2", "--certify", "--explain", "--quiet", "--json", path)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"PAC-Bayes certificate (assumes i.i.d. clients and samples",
		"trained model, clients B (2 of 4): expected clipped sq. error (0–1) ≤ ", "PAC-Bayes certificate in full",
		"certificates from the test data, prob. ≥ 95 % each", "test-set certificates in full",
		"deployed predictor, a new client (2 new clients): expected sq. error clipped at 1 ≤ ",
		"server-level (Thm 4.2) at 𝒬*"} {
		assert.Contains(t, out, want)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Certification struct {
			Certificates struct {
				Existing struct {
					Bound, Complexity float64
					HyperKL           float64 `json:"hyper_kl"`
				}
			}
			TestSet struct {
				New struct{ Bound, Mean float64 }
			} `json:"test_set"`
			Seconds float64
		}
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	c := rep.Certification.Certificates
	if !(c.Existing.Bound > 0 && c.Existing.Bound <= 1 && c.Existing.Complexity > 0 && c.Existing.HyperKL >= 0 &&
		rep.Certification.TestSet.New.Bound > rep.Certification.TestSet.New.Mean && rep.Certification.Seconds > 0) {
		t.Fatalf("bad certification in the JSON report: %s", data)
	}
	code, _, errOut = runCLI("train", "--model", "bnn", "--certify", "--quiet")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "--certify needs GP clients")
}

func TestTrainBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"--k", "0"},
		{"-c", "7"},
		{"--lr", "-1"},
		{"--tau", "-0.5"},
		{"--lambda", "-3"},
		{"--optimizer", "lbfgs"},
		{"--aggregate", "median"},
		{"--dp-epsilon", "-1"},
		{"--dp-epsilon", "1", "--dp-clip", "0"},
		{"--loss-range", "3,1"},
		{"--loss-range", "x"},
		{"--delta", "1.5"},
		{"--tau", "1"}, // bounds need τ < 1
		{"--clients", "0"},
		{"--sigma-p", "0"},
		{"--batch", "-2"},
		{"extra-arg"},
		{"--no-such-flag"},
	} {
		// A small data set keeps the cases fast (under qemu too); the flags
		// under test come last and override it.
		full := append([]string{"train", "--clients", "6", "--new-clients", "2"}, args...)
		code, _, errOut := runCLI(full...)
		if code != exitUsage || errOut == "" {
			t.Errorf("train %v: exit %d, stderr %q; want 2 with a message", args, code, errOut)
		}
	}
}

func TestExperimentBadInput(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"femnist"},
		{"polynomial", "--methods", "pacpfl,reptile"},
		{"polynomial", "--seeds", "0"},
		{"polynomial", "--k", "0", "--clients", "4"},
		{"polynomial", "--baseline-steps", "0"},
		{"polynomial", "--pfedgp-mean", "quadratic"},
	} {
		code, _, errOut := runCLI(append([]string{"experiment"}, args...)...)
		if code != exitUsage || errOut == "" {
			t.Errorf("experiment %v: exit %d, stderr %q; want 2 with a message", args, code, errOut)
		}
	}
}

// Two seeds, tiny budgets: the table has every method and the JSON the
// documented shape.
func TestExperimentShortRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs four methods twice")
	}
	path := filepath.Join(t.TempDir(), "exp.json")
	code, out, errOut := runCLI("experiment", "polynomial", "--seeds", "2", "--clients", "6", "--new-clients", "2",
		"-T", "20", "--k", "2", "-c", "3", "--baseline-steps", "5", "--quiet", "--json", path)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"| PAC-PFL |", "| pFedGP |", "| MTL |", "| MAML |", "| Vanilla |", "| Pooled |",
		"paper 0.58 ± 0.05", "paper 0.85 ± 0.15"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Dataset string   `json:"dataset"`
		Seeds   []uint64 `json:"seeds"`
		Methods map[string]struct {
			Existing struct {
				RSMSE struct{ Mean, CI95 float64 }  `json:"rsmse"`
				CE    struct{ Mean, CI95 *float64 } `json:"ce"`
			} `json:"existing"`
			New struct {
				RSMSE struct{ Mean, CI95 float64 } `json:"rsmse"`
			} `json:"new"`
		} `json:"methods"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Dataset != "polynomial" || len(rep.Seeds) != 2 || len(rep.Methods) != 6 {
		t.Fatalf("bad JSON: %s", data)
	}
	for m, r := range rep.Methods {
		if r.Existing.RSMSE.Mean <= 0 || r.New.RSMSE.Mean <= 0 {
			t.Errorf("%s: %+v", m, r)
		}
		// CE only for probabilistic methods: null for the point predictors.
		point := m == "mtl" || m == "maml"
		if ce := r.Existing.CE.Mean; point != (ce == nil) || (ce != nil && *ce <= 0) {
			t.Errorf("%s: CE %v", m, ce)
		}
	}
}

// Review findings: flags that used to be accepted and then silently ignored
// or misused, and reports that were lost at the very end of a run.
func TestTrainExperimentReviewedInputs(t *testing.T) {
	small := []string{"--clients", "4", "--new-clients", "2", "--bound-samples", "0", "--quiet"}
	smallExp := []string{"--clients", "4", "--new-clients", "2", "--quiet"} // experiment computes no bounds
	cases := []struct {
		args []string
		want int
	}{
		// --lambda and --tau both set τ; λ used to win silently.
		{append([]string{"train", "--lambda", "1", "--tau", "0.1"}, small...), exitUsage},
		// --dp-epsilon NaN ran without differential privacy, silently.
		{append([]string{"train", "--dp-epsilon", "NaN"}, small...), exitUsage},
		// A repeated method pooled its runs as extra seeds: a too-narrow CI.
		{append([]string{"experiment", "polynomial", "--methods", "pooled,pooled", "--seeds", "2"}, smallExp...),
			exitUsage},
	}
	for _, c := range cases {
		code, _, errOut := runCLI(c.args...)
		if code != c.want || errOut == "" {
			t.Errorf("%v: exit %d, stderr %q; want %d with a message", c.args, code, errOut, c.want)
		}
	}
	// An unwritable --json is refused before any work, not after training.
	bad := filepath.Join(t.TempDir(), "no-such-dir", "out.json")
	dir := t.TempDir()
	for _, args := range [][]string{
		append([]string{"train", "-T", "1", "--json", dir}, small...), // a directory, found only after training

		append([]string{"train", "-T", "1", "--json", bad}, small...),
		append([]string{"experiment", "polynomial", "--seeds", "1", "-T", "1", "--json", bad}, smallExp...),
	} {
		code, out, errOut := runCLI(args...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, "--json") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2, no output, a message naming the path", args, code, out,
				errOut)
		}
	}
}

// A metric with nothing to average (no new clients, zero rounds) is NaN;
// the JSON report writes it as null instead of failing to marshal.
func TestJSONReportWithNaNMetrics(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "train.json")
	code, out, errOut := runCLI("train", "--clients", "4", "--new-clients", "0", "-T", "0", "--bound-samples", "0",
		"--quiet", "--json", path)
	if code != exitOK {
		t.Fatalf("train: exit %d, stderr %q", code, errOut)
	}
	// The text says so instead of printing NaN as a result (issue 21, 9).
	for _, want := range []string{"training: none (--rounds 0)", "new clients:      none"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "NaN") {
		t.Errorf("output prints NaN:\n%s", out)
	}
	// (The file's mode: TestOutputRegularFileModes.)
	var tr struct {
		FinalLML *float64 `json:"final_mean_lml"`
		New      struct {
			RSMSE *float64 `json:"rsmse"`
		} `json:"new"`
		Existing struct {
			RSMSE *float64 `json:"rsmse"`
		} `json:"existing"`
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &tr); err != nil {
		t.Fatal(err)
	}
	if tr.FinalLML != nil || tr.New.RSMSE != nil || tr.Existing.RSMSE == nil || !(*tr.Existing.RSMSE > 0) {
		t.Fatalf("want null final LML and new RSMSE, a positive existing RSMSE: %s", data)
	}

	path = filepath.Join(dir, "exp.json")
	code, _, errOut = runCLI("experiment", "polynomial", "--methods", "pooled", "--seeds", "2", "--baseline-steps", "2",
		"--clients", "4", "--new-clients", "0", "--quiet", "--json", path)
	if code != exitOK {
		t.Fatalf("experiment: exit %d, stderr %q", code, errOut)
	}
	var ex struct {
		Methods map[string]struct {
			New struct {
				RSMSE struct{ Mean *float64 } `json:"rsmse"`
			} `json:"new"`
			Existing struct {
				RSMSE struct{ Mean *float64 } `json:"rsmse"`
			} `json:"existing"`
			PerSeed map[string][]*float64 `json:"per_seed"`
		} `json:"methods"`
	}
	if data, err = os.ReadFile(path); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &ex); err != nil {
		t.Fatal(err)
	}
	p := ex.Methods["pooled"]
	// One seed: no confidence interval, not "± 0.00".
	code, out, errOut = runCLI("experiment", "polynomial", "--methods", "pooled", "--seeds", "1", "--baseline-steps",
		"2",
		"--clients", "4", "--new-clients", "2", "--quiet")
	if code != exitOK || strings.Contains(out, "± 0.00 (paper") || !strings.Contains(out, "± – (paper") {
		t.Errorf("one seed: exit %d, stderr %q, table:\n%s", code, errOut, out)
	}
	if p.New.RSMSE.Mean != nil || p.Existing.RSMSE.Mean == nil || len(p.PerSeed["new_rsmse"]) != 2 ||
		p.PerSeed["new_rsmse"][0] != nil {
		t.Fatalf("want null new-client metrics and finite existing ones: %s", data)
	}
}

// Sizes whose data or particles cannot fit in memory are refused up front
// (they used to crash with "fatal error: out of memory", or spend hours
// generating data first); the machine is pretended to have 1 GiB.
func TestTrainRefusesSizesBeyondMemory(t *testing.T) {
	saved := availableMemory
	defer func() { availableMemory = saved }()
	availableMemory = func() float64 { return 1 << 30 }
	for _, args := range [][]string{
		{"train", "--clients", "100000000"},
		{"train", "--clients", "4", "--extra", "100000000"},
		{"train", "--clients", "4", "--k", "100000000"},
		{"train", "--clients", "4", "--bound-samples", "1000000000"},
		{"experiment", "polynomial", "--new-clients", "100000000"},
	} {
		code, out, errOut := runCLI(append(args, "-T", "1", "--quiet")...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, "GiB") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and a message about memory", args, code, out, errOut)
		}
	}
}

// --loss-range with finite ends but an overflowing (b−a)² is refused before
// training; it used to train and then fail in the JSON encoder (or print
// +Inf bounds and exit 0).
func TestTrainRefusesOverflowingLossRange(t *testing.T) {
	for _, r := range []string{"-1e300,1e300", "-1e308,1e308"} {
		st, out, errOut := runCLI("train", "--clients", "4", "--new-clients", "1", "-T", "1", "--k", "1", "-c", "2",
			"--loss-range="+r, "--quiet")
		assert.Equal(t, exitUsage, st, r)
		assert.Contains(t, errOut, "too wide", r)
		assert.Empty(t, out)
	}
}

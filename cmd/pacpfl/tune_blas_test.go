package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pacpfl/pacpfl/wisdom"
)

func TestTuneBLAS(t *testing.T) {
	st, out, errs := runCLI("tune", "blas", "--budget", "1s", "--n", "40", "--reps", "1", "--out", "-", "--quiet")
	if st != exitOK {
		t.Fatalf("exit %d: %s", st, errs)
	}
	i := strings.Index(out, "{")
	if i < 0 || !strings.Contains(out[:i], "tuned: GEMM kernel") || !strings.Contains(out[:i], "% of peak") {
		t.Fatalf("report:\n%s", out)
	}
	f, err := wisdom.Parse([]byte(out[i:]))
	if err != nil {
		t.Fatalf("the printed file does not parse: %v\n%s", err, out[i:])
	}
	if f.CPU != wisdom.CurrentCPU() {
		t.Errorf("file for %v", f.CPU)
	}
	path := filepath.Join(t.TempDir(), "w.json")
	if st, _, errs := runCLI("tune", "blas", "--budget", "1s", "--n", "40", "--reps", "1", "--out", path,
		"--quiet"); st != exitOK {
		t.Fatalf("--out FILE: exit %d: %s", st, errs)
	}
	var raw map[string]any
	b, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(b, &raw) != nil || raw["gemm"] == nil {
		t.Errorf("wrote %s (%v)", b, err)
	}
	for _, bad := range [][]string{
		{"--budget", "0s"}, {"--reps", "0"}, {"--n", "8"}, {"--threads", "-3"},
		{"--out", filepath.Join(t.TempDir(), "no", "dir.json")},
	} {
		st, _, errs := runCLI(append([]string{"tune", "blas", "--quiet"}, bad...)...)
		if st == exitOK || errs == "" {
			t.Errorf("%v: exit %d, stderr %q", bad, st, errs)
		}
	}
	t.Setenv(wisdom.EnvVar, "off")
	if st, _, errs := runCLI("tune", "blas", "--budget", "1s", "--n", "40"); st != exitUsage ||
		!strings.Contains(errs, "--out") {
		t.Errorf("PACPFL_WISDOM=off without --out: exit %d, %q", st, errs)
	}
}

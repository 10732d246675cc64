package wisdom

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pacpfl/pacpfl/asm"
	"github.com/pacpfl/pacpfl/cholesky"
	"github.com/pacpfl/pacpfl/linalg"
)

// validFile is a wisdom file for this machine with the level's defaults.
func validFile() *File {
	b := linalg.DefaultBlocking()
	return &File{Version: Version, CPU: CurrentCPU(),
		GEMM: GEMM{Kernel: asm.GemmKernelFor(asm.Current()).Name(), MC: b.MC, KC: b.KC, NC: b.NC}}
}

func encode(t testing.TB, f *File) []byte {
	b, err := Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseRoundTrip(t *testing.T) {
	f := validFile()
	f.Tuned = []Rate{{N: 1000, GFLOPS: 90.5}}
	g, err := Parse(encode(t, f))
	if err != nil {
		t.Fatal(err)
	}
	if g.GEMM != f.GEMM || g.CPU != f.CPU || len(g.Tuned) != 1 || g.Tuned[0] != f.Tuned[0] {
		t.Fatalf("round trip: %+v, want %+v", g, f)
	}
}

func TestParseRefuses(t *testing.T) {
	good := string(encode(t, validFile()))
	for name, text := range map[string]string{
		"empty":         "",
		"truncated":     good[:len(good)/2],
		"not json":      "kernel=avx2",
		"version":       strings.Replace(good, `"version": 1`, `"version": 2`, 1),
		"unknown field": strings.Replace(good, `"version": 1`, `"version": 1, "extra": 3`, 1),
		"trailing":      good + "{}",
		"bad kernel":    strings.Replace(good, `"kernel": "`, `"kernel": "x`, 1),
		"zero block":    strings.Replace(good, `"mc": `, `"mc": 0, "x_": `, 1),
		"bad level":     strings.Replace(good, `"level": "`, `"level": "sse`, 1),
		"huge":          good + strings.Repeat(" ", maxFileSize),
		"bad panel":     strings.Replace(good, `"panel": 0`, `"panel": -5`, 1),
	} {
		if _, err := Parse([]byte(text)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(encode(f, validFile()))
	f.Add([]byte(`{"version":1,"cpu":{},"gemm":{"kernel":"avx2-6x8","mc":1,"kc":1,"nc":1}}`))
	f.Add([]byte(`{"version":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := Parse(b)
		if err != nil {
			return
		}
		// Whatever parses can be put in force and encoded again.
		tu, err := file.Tuning()
		if err != nil {
			t.Fatalf("parsed but no tuning: %v", err)
		}
		if err := tu.Validate(); err != nil {
			t.Fatalf("parsed but invalid: %v", err)
		}
		if _, err := Parse(encode(t, file)); err != nil {
			t.Fatalf("re-encoded file refused: %v", err)
		}
	})
}

// writeWisdom points PACPFL_WISDOM at a file holding text.
func writeWisdom(t *testing.T, text []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "wisdom.json")
	if err := os.WriteFile(p, text, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvVar, p)
	return p
}

func TestLoadIgnoresForeignAndCorruptFiles(t *testing.T) {
	defer linalg.SetTuning(nil)
	foreign := validFile()
	foreign.CPU.Model++
	for name, text := range map[string][]byte{
		"foreign CPU": encode(t, foreign),
		"corrupt":     []byte(`{"version":1,"cpu":`),
		"old version": []byte(`{"version":0}`),
	} {
		p := writeWisdom(t, text)
		src := Apply()
		if src.Kind == "file" || src.Notice == "" || !strings.Contains(src.Notice, p) ||
			strings.Contains(src.Notice, "\n") {
			t.Errorf("%s: source %+v, want the file ignored with a one-line notice naming it", name, src)
		}
		if src.Kind == "defaults" && linalg.CurrentTuning() != nil {
			t.Errorf("%s: a tuning is in force", name)
		}
	}
}

func TestApplyValidFile(t *testing.T) {
	defer linalg.SetTuning(nil)
	f := validFile()
	f.GEMM.KC, f.GEMM.MC = 96, 4*asm.GemmKernelFor(asm.Current()).MR
	f.Cholesky.Panel = 80
	defer cholesky.SetPanel(0)
	p := writeWisdom(t, encode(t, f))
	src := Apply()
	if src.Kind != "file" || src.Path != p || src.Notice != "" {
		t.Fatalf("source %+v", src)
	}
	tu := linalg.CurrentTuning()
	if tu == nil || tu.Blocking.KC != 96 || linalg.NewNative(1).Blocking().KC != 96 {
		t.Fatalf("tuning in force %+v", tu)
	}
	if cholesky.Panel() != 80 {
		t.Errorf("Cholesky panel %d, want 80", cholesky.Panel())
	}
	if !strings.Contains(src.String(), p) {
		t.Errorf("String() = %q, want the path", src.String())
	}
}

func TestOffAndMissing(t *testing.T) {
	defer linalg.SetTuning(nil)
	t.Setenv(EnvVar, "off")
	if src := Apply(); src.Kind != "off" || linalg.CurrentTuning() != nil {
		t.Errorf("off: %+v", src)
	}
	t.Setenv(EnvVar, filepath.Join(t.TempDir(), "none.json"))
	src := Apply()
	if src.Notice != "" || (src.Kind != "defaults" && src.Kind != "table") {
		t.Errorf("missing file: %+v, want the table or defaults without a notice", src)
	}
}

func TestTableLookup(t *testing.T) {
	saved := table
	defer func() { table = saved }()
	key := CurrentCPU()
	f := *validFile()
	f.CPU.Cores = key.Cores + 90
	table = []File{f}
	if got := lookupTable(key); got == nil {
		t.Fatal("an entry for this CPU with another core count was not found")
	}
	f.CPU.Model++
	table = []File{f}
	if lookupTable(key) != nil {
		t.Fatal("an entry for another model was found")
	}
}

// Tune keeps to its budget and returns a file Parse accepts, whose rates are
// not below the defaults' by more than the measured noise.
func TestTuneSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	defer linalg.SetTuning(nil)
	budget := 2 * time.Second
	start := time.Now()
	var log strings.Builder
	f, err := Tune(context.Background(), TuneOptions{Budget: budget, N: []int{48, 96}, Reps: 1, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	// The search stops at the budget; the final measurement of the winner
	// at these sizes takes milliseconds.
	if el := time.Since(start); el > budget+5*time.Second {
		t.Errorf("took %v with a budget of %v", el, budget)
	}
	if _, err := Parse(encode(t, f)); err != nil {
		t.Fatalf("tuned file refused: %v\n%s", err, log.String())
	}
	if f.CPU != CurrentCPU() || len(f.Default) != 2 {
		t.Errorf("file %+v", f)
	}
	if linalg.CurrentTuning() != nil {
		t.Error("Tune left a tuning in force")
	}
	if !strings.Contains(log.String(), "noise") {
		t.Errorf("log lacks the noise line:\n%s", log.String())
	}
}

func TestTuneRefusesBadSizes(t *testing.T) {
	if _, err := Tune(context.Background(), TuneOptions{N: []int{3}}); err == nil {
		t.Error("size 3 accepted")
	}
}

// Too small to time a shared-B shape: the default rule stays.
func TestTuneKeepsSharedBRuleUnmeasured(t *testing.T) {
	defer linalg.SetTuning(nil)
	f, err := Tune(context.Background(), TuneOptions{Budget: time.Second, N: []int{32}, Reps: 1})
	if err != nil {
		t.Fatal(err)
	}
	if f.GEMM.SharedBMax != 0 {
		t.Errorf("shared-B limit %d from no measurement", f.GEMM.SharedBMax)
	}
}

func TestSaveThenApply(t *testing.T) {
	defer linalg.SetTuning(nil)
	p := filepath.Join(t.TempDir(), "sub", "dir", "wisdom.json")
	if err := Save(p, validFile()); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvVar, p)
	if src := Apply(); src.Kind != "file" || src.Notice != "" {
		t.Fatalf("saved file not applied: %+v", src)
	}
}

// Every entry of the compiled-in table is a valid file for its CPU, in the
// builds that have its level's kernels (not purego, not another
// architecture).
func TestTableEntriesValid(t *testing.T) {
	checked := 0
	for _, f := range table {
		l, err := asm.ParseLevel(f.CPU.Level)
		if _, ok := asm.GemmKernelNamed(l, f.GEMM.Kernel); err != nil || !ok {
			t.Logf("%v: kernel %s not in this build", f.CPU, f.GEMM.Kernel)
			continue
		}
		checked++
		if _, err := Parse(encode(t, &f)); err != nil {
			t.Errorf("table entry for %v: %v", f.CPU, err)
		}
	}
	if checked == 0 && runtime.GOARCH == "amd64" && asm.Detected() != asm.Generic {
		t.Error("no table entry checked on amd64 with SIMD")
	}
}

// WritePath is the path given, else the default file; none when the
// wisdom is off.
func TestWritePath(t *testing.T) {
	t.Setenv(EnvVar, "off")
	if p, err := WritePath("x.json"); p != "x.json" || err != nil {
		t.Errorf("given: %q, %v", p, err)
	}
	if _, err := WritePath(""); !errors.Is(err, ErrOff) {
		t.Errorf("off: %v, want ErrOff", err)
	}
	file := filepath.Join(t.TempDir(), "w.json")
	t.Setenv(EnvVar, file)
	if p, err := WritePath(""); p != file || err != nil {
		t.Errorf("%s set: %q, %v", EnvVar, p, err)
	}
}

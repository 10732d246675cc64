package wisdom

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pacpfl/pacpfl/asm"
	"github.com/pacpfl/pacpfl/cholesky"
	"github.com/pacpfl/pacpfl/linalg"
)

// Without a tuning, Current is the level's default kernel and blocks and
// the Cholesky panel in force; an applied tuning's kernel and shared-B
// limit replace them.
func TestCurrentInForce(t *testing.T) {
	defer linalg.SetTuning(nil)
	if err := linalg.SetTuning(nil); err != nil {
		t.Fatal(err)
	}
	b := linalg.DefaultBlocking()
	want := InForce{Source: Source{Kind: "defaults"}, Kernel: asm.GemmKernelFor(asm.Current()).Name(),
		MC: b.MC, KC: b.KC, NC: b.NC, Panel: cholesky.Panel()}
	if got := Current(Source{Kind: "defaults"}); got != want {
		t.Errorf("defaults: %+v, want %+v", got, want)
	}
	f := validFile()
	f.GEMM.SharedBMax = 1
	lt, err := f.Tuning()
	if err != nil {
		t.Fatal(err)
	}
	if err := linalg.SetTuning(lt); err != nil {
		t.Fatal(err)
	}
	got := Current(Source{Kind: "file", Path: "w.json", File: f})
	if got.SharedBMax != 1 || got.Kernel != f.GEMM.Kernel || got.MC != f.GEMM.MC {
		t.Errorf("tuned: %+v", got)
	}
}

func TestGains(t *testing.T) {
	f := &File{Default: []Rate{{1000, 50}, {2000, 40}}, Tuned: []Rate{{1000, 60}, {2000, 40}}}
	got := f.Gains(200)
	want := []Gain{{N: 1000, Default: 50, Tuned: 60, DefaultPct: 25, TunedPct: 30, Speedup: 1.2},
		{N: 2000, Default: 40, Tuned: 40, DefaultPct: 20, TunedPct: 20, Speedup: 1}}
	if len(got) != len(want) {
		t.Fatalf("%d gains, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("gain %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if g := (&File{Default: []Rate{{1, 1}}}).Gains(1); len(g) != 0 {
		t.Errorf("without tuned rates: %+v", g)
	}
}

// WriteFile's "-" is the encoding on stdout; a path gets what Save writes.
func TestWriteFile(t *testing.T) {
	f := validFile()
	var out bytes.Buffer
	if err := WriteFile(&out, "-", f); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), encode(t, f)) {
		t.Errorf("stdout %q", out.Bytes())
	}
	path := filepath.Join(t.TempDir(), "sub", "w.json")
	if err := WriteFile(&out, path, f); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if g, err := Parse(b); err != nil || g.GEMM != f.GEMM {
		t.Errorf("read back %+v, %v", g, err)
	}
}

// WriteBuild's last line is the tuning in force, after the Go, SIMD and
// backend lines.
func TestWriteBuild(t *testing.T) {
	var b bytes.Buffer
	src := Source{Kind: "defaults"}
	WriteBuild(&b, src)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 4 || lines[3] != "tuning:   "+Current(src).String() {
		t.Errorf("build report:\n%s", &b)
	}
}

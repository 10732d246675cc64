// Package wisdom keeps the native BLAS's measured tuning, as FFTW keeps its
// wisdom: Tune measures, on the machine at hand, the GEMM micro-kernels, the
// cache blocks, the shared-B rule and the Cholesky panel width within a time
// budget; Save writes the winners to a small versioned file keyed by the
// CPU; Apply reads it back and hands it to linalg.SetTuning and
// cholesky.SetPanel.
//
// A file is trusted only if it parses strictly, has this package's Version
// and names this CPU (vendor, family, model, SIMD level, core count): a file
// from another CPU, another version or a corrupted one is ignored with a
// one-line notice, never applied and never a panic. Without a file, the
// compiled-in table of measured winners per CPU model applies, and without
// an entry there the per-level defaults of package linalg.
//
// Nothing here runs at program start on its own: a tuning changes the order
// of floating-point additions in GEMM, so results would depend on a file in
// the user's cache directory that the program never mentions. The pacpfl
// command applies it at start-up (PACPFL_WISDOM=off turns that off); a Go
// program opts in with one call to Apply.
package wisdom

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/klauspost/cpuid/v2"

	"github.com/pacpfl/pacpfl/asm"
	"github.com/pacpfl/pacpfl/cholesky"
	"github.com/pacpfl/pacpfl/linalg"
	"github.com/pacpfl/pacpfl/outfile"
)

// Version is the file format's version; a file of another version is
// ignored.
const Version = 1

// EnvVar overrides the wisdom file's path; "off" (or "none") disables
// wisdom altogether, the compiled-in table included.
const EnvVar = "PACPFL_WISDOM"

// maxFileSize bounds what Parse reads: a wisdom file is a few hundred bytes.
const maxFileSize = 64 << 10

// CPU is the key a tuning is valid for.
type CPU struct {
	Vendor string `json:"vendor"` // cpuid's vendor string, e.g. "AuthenticAMD"
	Family int    `json:"family"`
	Model  int    `json:"model"`
	Level  string `json:"level"` // the SIMD level in force, e.g. "avx2"
	Cores  int    `json:"cores"` // runtime.NumCPU
}

func (c CPU) String() string {
	return fmt.Sprintf("%s family %d model %d, %s, %d cores", c.Vendor, c.Family, c.Model, c.Level, c.Cores)
}

// CurrentCPU is this machine's key at the SIMD level in force.
func CurrentCPU() CPU {
	return CPU{Vendor: cpuid.CPU.VendorString, Family: cpuid.CPU.Family, Model: cpuid.CPU.Model,
		Level: asm.Current().String(), Cores: runtime.NumCPU()}
}

// GEMM is the tuned native DGEMM: micro-kernel, cache blocks, shared-B rule.
type GEMM struct {
	Kernel     string `json:"kernel"` // an asm kernel name, e.g. "avx2-6x8"
	MC         int    `json:"mc"`
	KC         int    `json:"kc"`
	NC         int    `json:"nc"`
	SharedBMax int    `json:"shared_b_max"` // 0: the default rule
}

// Cholesky is the tuned blocked Cholesky.
type Cholesky struct {
	Panel int `json:"panel"` // panel width of the right-looking loop; 0: the default
}

// File is the content of a wisdom file.
type File struct {
	Version  int      `json:"version"`
	CPU      CPU      `json:"cpu"`
	GEMM     GEMM     `json:"gemm"`
	Cholesky Cholesky `json:"cholesky"`
	Tool     string   `json:"tool,omitempty"`     // the program that measured it
	Created  string   `json:"created,omitempty"`  // RFC 3339
	Summary  string   `json:"summary,omitempty"`  // what was measured, in words
	Default  []Rate   `json:"baseline,omitempty"` // the defaults' rates
	Tuned    []Rate   `json:"tuned,omitempty"`    // the winners' rates
}

// Rate is one measured GEMM rate.
type Rate struct {
	N      int     `json:"n"`
	GFLOPS float64 `json:"gflops"`
}

// Parse reads a wisdom file strictly: unknown fields, trailing data, another
// version and values linalg would refuse are errors.
func Parse(b []byte) (*File, error) {
	if len(b) > maxFileSize {
		return nil, fmt.Errorf("wisdom: file of %d bytes (at most %d)", len(b), maxFileSize)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("wisdom: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("wisdom: data after the JSON object")
	}
	if f.Version != Version {
		return nil, fmt.Errorf("wisdom: version %d (this program reads version %d)", f.Version, Version)
	}
	if _, err := f.Tuning(); err != nil {
		return nil, err
	}
	if p := f.Cholesky.Panel; p < 0 || p > 4096 {
		return nil, fmt.Errorf("wisdom: Cholesky panel %d outside [0, 4096]", p)
	}
	return &f, nil
}

// Tuning is f's GEMM as a linalg.Tuning.
func (f *File) Tuning() (*linalg.Tuning, error) {
	l, err := asm.ParseLevel(f.CPU.Level)
	if err != nil {
		return nil, fmt.Errorf("wisdom: %w", err)
	}
	t := &linalg.Tuning{Level: l, Kernel: f.GEMM.Kernel, SharedBMax: f.GEMM.SharedBMax,
		Blocking: linalg.Blocking{MC: f.GEMM.MC, KC: f.GEMM.KC, NC: f.GEMM.NC}}
	if f.GEMM.Kernel == "" {
		return nil, errors.New("wisdom: no kernel")
	}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("wisdom: %w", err)
	}
	return t, nil
}

// Path is where the wisdom file is read and written: $PACPFL_WISDOM, else
// pacpfl/wisdom.json in os.UserCacheDir. off is true when PACPFL_WISDOM is
// "off" or "none".
func Path() (path string, off bool, err error) {
	switch v := os.Getenv(EnvVar); strings.ToLower(v) {
	case "off", "none":
		return "", true, nil
	case "":
	default:
		return v, false, nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", false, fmt.Errorf("wisdom: no cache directory (set %s): %w", EnvVar, err)
	}
	return filepath.Join(dir, "pacpfl", "wisdom.json"), false, nil
}

// ErrOff is WritePath's error when PACPFL_WISDOM turns the wisdom off:
// there is no default file to write.
var ErrOff = errors.New("wisdom: " + EnvVar + " is off")

// WritePath is where a wisdom file is written: out if not empty, else
// Path's (ErrOff when the wisdom is off).
func WritePath(out string) (string, error) {
	if out != "" {
		return out, nil
	}
	p, off, err := Path()
	if off {
		return "", ErrOff
	}
	return p, err
}

// Source says where the tuning in force came from.
type Source struct {
	// Kind is "file", "table", "defaults" or "off".
	Kind string
	// Path is the wisdom file's (Kind "file", or the file that was
	// ignored).
	Path string
	// Notice is one line saying why a file was ignored ("" if none was).
	Notice string
	// File is what was applied (Kind "file" or "table").
	File *File
}

// String is the source in one line for reports: "wisdom file PATH",
// "compiled-in table (CPU)", "per-level defaults" or "off".
func (s Source) String() string {
	switch s.Kind {
	case "file":
		return "wisdom file " + s.Path
	case "table":
		return "compiled-in table (" + s.File.CPU.String() + ")"
	case "off":
		return "per-level defaults (" + EnvVar + "=off)"
	}
	return "per-level defaults"
}

// Load finds the tuning for this CPU without applying it: the wisdom file if
// it is valid and for this CPU, else the compiled-in table's entry, else
// none.
func Load() Source {
	path, off, err := Path()
	if off {
		return Source{Kind: "off"}
	}
	src := Source{Kind: "defaults", Path: path}
	key := CurrentCPU()
	if err != nil {
		src.Notice = err.Error()
	} else if b, rerr := readSmall(path); rerr == nil {
		f, perr := Parse(b)
		switch {
		case perr != nil:
			src.Notice = fmt.Sprintf("ignoring %s: %v", path, perr)
		case f.CPU != key:
			src.Notice = fmt.Sprintf("ignoring %s: measured on %s, this is %s", path, f.CPU, key)
		default:
			src.Kind, src.File = "file", f
			return src
		}
	} else if !errors.Is(rerr, os.ErrNotExist) {
		src.Notice = fmt.Sprintf("ignoring %s: %v", path, rerr)
	}
	if f := lookupTable(key); f != nil {
		src.Kind, src.File = "table", f
	}
	return src
}

// readSmall reads at most maxFileSize+1 bytes of path.
func readSmall(path string) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	return io.ReadAll(io.LimitReader(fh, maxFileSize+1))
}

// Apply loads the tuning (Load) and puts it in force (linalg.SetTuning,
// cholesky.SetPanel); with none, the defaults stay.
func Apply() Source {
	src := Load()
	if src.File == nil {
		linalg.SetTuning(nil)
		cholesky.SetPanel(0)
		return src
	}
	t, err := src.File.Tuning()
	if err == nil {
		t.Source = src.String()
		err = linalg.SetTuning(t)
	}
	if err == nil {
		err = cholesky.SetPanel(src.File.Cholesky.Panel)
	}
	if err != nil {
		linalg.SetTuning(nil)
		cholesky.SetPanel(0)
		src.Notice = fmt.Sprintf("ignoring %s: %v", src, err)
		src.Kind, src.File = "defaults", nil
	}
	return src
}

// Save writes f to path atomically (package outfile), creating its
// directory.
func Save(path string, f *File) error {
	b, err := Encode(f)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("wisdom: %w", err)
	}
	return outfile.Write(io.Discard, "wisdom file", path, b)
}

// Encode is f as the indented JSON of a wisdom file.
func Encode(f *File) ([]byte, error) {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Package asm holds the SIMD kernels of pacpfl and the one place that decides
// which instruction-set level they run at.
//
// Every kernel has a pure-Go twin (the *Generic functions) that is always
// compiled and is the reference the assembly is tested against. The level is
// detected once at start-up (cpuid on amd64; NEON is architectural on arm64)
// and can be forced lower with the environment variable PACPFL_SIMD or with
// SetLevel. Building with the tag purego compiles no assembly at all; the
// level is then always generic.
//
// Kernels: Dot, Axpy and Scal (unit and strided), Exp (vectorised, within
// about one ulp and identical at every level), SqDist and SEKernel (squared
// distances and the squared-exponential kernel matrix, the exp fused in), and
// the GEMM micro-kernels behind GemmKernel (12×16 on zmm registers at level
// avx512, 6×8 and 4×12 at avx2, 6×8 on NEON, 4×4 in Go) that package linalg
// packs for. At level avx512 the GEMM micro-kernel, Exp, SqDist, SEKernel
// and the unit-stride Dot, Axpy and Scal are AVX-512, with masked tails; the
// strided level-1 kernels run their AVX2 versions there. Their speed against
// the AVX2 versions: docs/performance.md §1.
//
// Concurrency: every kernel is a pure function of its arguments and may run
// on any number of goroutines; SetLevel is atomic, and a caller that packs
// for a GEMM kernel asks GemmKernelFor once per operation so that a
// concurrent SetLevel cannot mix shapes. Kernels allocate nothing.
//
// Errors: an unknown or unsupported PACPFL_SIMD value is reported by
// ConfigError (and by linalg.Backend and the CLI at start-up), never a silent
// fallback; Current panics in that state rather than run at a level nobody
// chose. Kernels check slice lengths and panic on a too-short slice before
// any assembly reads or writes out of bounds (GemmKernel.Run), as gonum's
// asm package does: sizes are the caller's contract.
package asm

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
)

// Level is a SIMD instruction-set level.
type Level int32

// The levels, in no particular order of preference across architectures.
const (
	Generic Level = iota // pure Go, every platform
	AVX2                 // amd64: AVX2 + FMA3
	AVX512               // amd64: AVX-512F (+ AVX2, FMA3)
	NEON                 // arm64: Advanced SIMD
	invalid              // a bad PACPFL_SIMD value; kernels refuse to run
)

var levelNames = [...]string{Generic: "generic", AVX2: "avx2", AVX512: "avx512", NEON: "neon"}

// String returns the name used by PACPFL_SIMD.
func (l Level) String() string {
	if l >= 0 && int(l) < len(levelNames) {
		return levelNames[l]
	}
	return fmt.Sprintf("Level(%d)", int32(l))
}

// EnvVar is the environment variable that forces a SIMD level.
const EnvVar = "PACPFL_SIMD"

var (
	supported []Level      // levels this CPU and build can run, best first
	current   atomic.Int32 // the level kernels dispatch on
	configErr error        // set when PACPFL_SIMD is unusable
)

func init() {
	supported = detect()
	if err := Configure(os.Getenv(EnvVar)); err != nil {
		// Kernels will refuse to run (see Current); entry points such as
		// linalg.Backend and the CLI report ConfigError.
		configErr = err
		current.Store(int32(invalid))
	}
}

// Supported returns the levels this CPU and build can run, best first. The
// last element is always Generic.
func Supported() []Level { return append([]Level(nil), supported...) }

// ArchLevels returns every level that has kernels for this architecture,
// best first, whether or not this CPU and build can run them: the levels a
// test suite should name (skipping, with Unsupported's reason, those it
// cannot run here).
func ArchLevels() []Level {
	switch runtime.GOARCH {
	case "amd64":
		return []Level{AVX512, AVX2, Generic}
	case "arm64":
		return []Level{NEON, Generic}
	}
	return []Level{Generic}
}

// Unsupported returns "" if this CPU and build can run level l, and
// otherwise why not.
func Unsupported(l Level) string {
	for _, s := range supported {
		if s == l {
			return ""
		}
	}
	if purego {
		return fmt.Sprintf("SIMD level %s: this is a purego build (no assembly)", l)
	}
	return fmt.Sprintf("SIMD level %s: not supported by this CPU (supported: %s)", l, supportedNames())
}

// Detected returns the best level this CPU and build support.
func Detected() Level { return supported[0] }

// Current returns the level kernels run at now. It panics if PACPFL_SIMD held
// an unusable value: running anyway would be a silent fallback.
func Current() Level {
	l := Level(current.Load())
	if l == invalid {
		panic("pacpfl: " + configErr.Error())
	}
	return l
}

// ConfigError reports a PACPFL_SIMD value that is unknown or not supported by
// this CPU, or nil. Programs should check it at start-up.
func ConfigError() error { return configErr }

// ParseLevel returns the level with the given name, or an error naming the
// value and the known levels.
func ParseLevel(name string) (Level, error) {
	for l, n := range levelNames {
		if n == name {
			return Level(l), nil
		}
	}
	return invalid, fmt.Errorf("%s=%q: unknown SIMD level (known: %s; supported here: %s)",
		EnvVar, name, strings.Join(levelNames[:], ", "), supportedNames())
}

// Configure sets the level from a PACPFL_SIMD value; "" selects the best
// supported level. An unknown or unsupported value is an error and leaves the
// level unchanged.
func Configure(value string) error {
	value = strings.TrimSpace(strings.ToLower(value))
	if value == "" {
		configErr = nil
		current.Store(int32(Detected()))
		return nil
	}
	l, err := ParseLevel(value)
	if err != nil {
		return err
	}
	if err := SetLevel(l); err != nil {
		return fmt.Errorf("%s=%q: %w", EnvVar, value, err)
	}
	configErr = nil
	return nil
}

// SetLevel forces the kernels to level l, which must be supported. It is
// meant for start-up and tests (run every implementation the CPU supports);
// it must not race with running kernels of a caller that cares which
// implementation it gets (each kernel call reads the level once, so a change
// is never unsafe, only unpredictable).
func SetLevel(l Level) error {
	for _, s := range supported {
		if s == l {
			current.Store(int32(l))
			return nil
		}
	}
	return fmt.Errorf("SIMD level %s is not supported by this CPU/build (supported: %s)", l, supportedNames())
}

func supportedNames() string {
	s := make([]string, len(supported))
	for i, l := range supported {
		s[i] = l.String()
	}
	return strings.Join(s, ", ")
}

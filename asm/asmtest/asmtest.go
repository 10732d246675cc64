// Package asmtest runs a test at every SIMD level of the architecture, so that
// every implementation the CPU supports is exercised and every one it cannot
// run is reported as skipped with the reason, never silently left out.
package asmtest

import (
	"crypto/sha256"
	"fmt"
	"runtime"
	"testing"

	"github.com/pacpfl/pacpfl/asm"
)

// ForEachLevel runs f as a subtest named after each level of asm.ArchLevels,
// with the kernels forced to that level; a level this CPU or build cannot run
// is a skipped subtest that says why. The detected level is restored
// afterwards. Subtests run one after another (the level is process-wide).
func ForEachLevel(t *testing.T, f func(t *testing.T, l asm.Level)) {
	t.Helper()
	defer asm.Configure("")
	for _, l := range asm.ArchLevels() {
		t.Run(l.String(), func(t *testing.T) {
			if why := asm.Unsupported(l); why != "" {
				t.Skip(why)
			}
			if err := asm.SetLevel(l); err != nil {
				t.Fatal(err)
			}
			f(t, l)
		})
	}
}

// PinGeneric runs a test that pins exact bits at the generic level on amd64,
// whose results do not depend on the CPU (the SIMD levels, and arm64, which
// fuses a*b+c, round differently); elsewhere it skips the test. The level
// in force is restored at the end of the test.
func PinGeneric(t *testing.T) {
	t.Helper()
	if runtime.GOARCH != "amd64" {
		t.Skip("pinned bits are amd64's")
	}
	if err := asm.Configure("generic"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = asm.Configure("") })
}

// Digest is a fingerprint of values printed with %v: Go prints a float64
// in the shortest form that reads back to the same bits, so equal digests
// mean equal bits.
func Digest(vs ...any) string {
	return fmt.Sprintf("%x", sha256.Sum256([]byte(fmt.Sprint(vs...))))[:16]
}

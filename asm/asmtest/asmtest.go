// Package asmtest runs a test at every SIMD level of the architecture, so that
// every implementation the CPU supports is exercised and every one it cannot
// run is reported as skipped with the reason, never silently left out.
package asmtest

import (
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

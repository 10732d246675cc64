package linalg

import (
	"strings"
	"testing"
)

func TestBackendErrors(t *testing.T) {
	_, err := Backend("bogus")
	if err == nil || !strings.Contains(err.Error(), "bogus") || !strings.Contains(err.Error(), "gonum") {
		t.Fatalf("Backend(bogus) = %v, want an error naming the value and the valid backends", err)
	}
	if _, ok := registry["openblas"]; !ok {
		_, err := Backend("openblas")
		if err == nil || !strings.Contains(err.Error(), "-tags netlib") {
			t.Fatalf("Backend(openblas) without netlib = %v, want an error saying how to build it", err)
		}
	}
}

func TestEveryCompiledBackendWorks(t *testing.T) {
	names := Backends()
	if !contains(names, "gonum") {
		t.Fatalf("Backends() = %v lacks gonum", names)
	}
	for _, n := range names {
		b, err := Backend(n)
		if err != nil {
			t.Fatalf("Backend(%q): %v", n, err)
		}
		x := []float64{1, 2, 3}
		y := []float64{4, -5, 6}
		if got := b.Ddot(3, x, 1, y, 1); got != 12 {
			t.Errorf("%s: Ddot = %v, want 12", n, got)
		}
	}
}

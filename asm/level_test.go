package asm

import (
	"runtime"
	"strings"
	"testing"
)

func TestSupportedEndsWithGeneric(t *testing.T) {
	s := Supported()
	if len(s) == 0 || s[len(s)-1] != Generic {
		t.Fatalf("Supported() = %v, want a list ending in generic", s)
	}
	if Detected() != s[0] {
		t.Fatalf("Detected() = %v, want %v", Detected(), s[0])
	}
}

func TestDetectMatchesArch(t *testing.T) {
	want := map[Level]bool{Generic: true}
	switch {
	case purego:
	case runtime.GOARCH == "arm64":
		want[NEON] = true
	case runtime.GOARCH == "amd64":
		want[AVX2], want[AVX512] = true, true // may be absent on old CPUs
	}
	for _, l := range Supported() {
		if !want[l] {
			t.Errorf("level %v reported on %s (purego=%v)", l, runtime.GOARCH, purego)
		}
	}
	if runtime.GOARCH == "arm64" && !purego && Detected() != NEON {
		t.Errorf("arm64 detected %v, want neon", Detected())
	}
	if purego && Detected() != Generic {
		t.Errorf("purego build detected %v, want generic", Detected())
	}
}

func TestForceEverySupportedLevel(t *testing.T) {
	defer Configure("")
	for _, l := range Supported() {
		if err := Configure(l.String()); err != nil {
			t.Fatalf("Configure(%q): %v", l, err)
		}
		if Current() != l {
			t.Fatalf("after Configure(%q) Current() = %v", l, Current())
		}
	}
	if err := Configure(""); err != nil || Current() != Detected() {
		t.Fatalf("Configure(\"\") = %v, Current() = %v, want %v", err, Current(), Detected())
	}
}

func TestConfigureRejects(t *testing.T) {
	defer Configure("")
	before := Current()
	err := Configure("bogus")
	if err == nil {
		t.Fatal("Configure(bogus) succeeded")
	}
	for _, want := range []string{"bogus", "PACPFL_SIMD", "generic", "unknown"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if Current() != before {
		t.Errorf("a rejected value changed the level to %v", Current())
	}
	// A known level the CPU cannot run is an error too, never a fallback.
	for _, l := range []Level{AVX2, AVX512, NEON} {
		if isSupported(l) {
			continue
		}
		err := Configure(l.String())
		if err == nil || !strings.Contains(err.Error(), "not supported") || !strings.Contains(err.Error(), l.String()) {
			t.Errorf("Configure(%q) = %v, want a not-supported error naming it", l, err)
		}
	}
}

func TestInvalidLevelRefusesToRun(t *testing.T) {
	defer func() { current.Store(int32(Detected())); configErr = nil }()
	_, configErr = ParseLevel("bogus")
	current.Store(int32(invalid))
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(r.(string), "bogus") {
			t.Fatalf("Current() with a bad PACPFL_SIMD: recover() = %v, want a panic naming the value", r)
		}
	}()
	Current()
}

func TestLevelNames(t *testing.T) {
	for _, l := range []Level{Generic, AVX2, AVX512, NEON} {
		got, err := ParseLevel(l.String())
		if err != nil || got != l {
			t.Errorf("ParseLevel(%q) = %v, %v", l, got, err)
		}
	}
	if err := Configure("  AVX2 "); isSupported(AVX2) && err != nil {
		t.Errorf("Configure is not case/space tolerant: %v", err)
	}
	Configure("")
}

func isSupported(l Level) bool {
	for _, s := range Supported() {
		if s == l {
			return true
		}
	}
	return false
}

package bench

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestAlternateTakesMinimumAndAlternates(t *testing.T) {
	var order []string
	sleeps := []time.Duration{30 * time.Millisecond, 1 * time.Millisecond, 30 * time.Millisecond}
	n := 0
	cs := []Contender{
		{Name: "a", Run: func() error { order = append(order, "a"); time.Sleep(sleeps[n%3]); n++; return nil }},
		{Name: "b", Run: func() error { order = append(order, "b"); return nil }},
	}
	best, errs := Alternate(3, cs)
	if errs[0] != nil || errs[1] != nil {
		t.Fatal(errs)
	}
	if got := strings.Join(order, ""); got != "abababab" {
		t.Errorf("run order %q, want warm-ups then alternation abababab", got)
	}
	// a slept 30 ms (warm-up), then 1, 30, 30 ms: the minimum is the 1 ms run.
	if best[0] < 0.001 || best[0] > 0.02 {
		t.Errorf("best[a] = %v s, want the ~1 ms minimum", best[0])
	}
	if best[1] < 0 || best[1] > best[0] {
		t.Errorf("best[b] = %v", best[1])
	}
}

func TestAlternateReportsErrors(t *testing.T) {
	boom := errors.New("not compiled in")
	calls := 0
	best, errs := Alternate(4, []Contender{{Name: "x", Run: func() error { calls++; return boom }}})
	if !errors.Is(errs[0], boom) || best[0] >= 0 || calls != 1 {
		t.Fatalf("best=%v errs=%v calls=%d, want the error, no time, one call", best, errs, calls)
	}
}

func TestJSONLine(t *testing.T) {
	var b bytes.Buffer
	if err := JSONLine(&b, map[string]any{"kernel": "gemm", "n": 2}); err != nil {
		t.Fatal(err)
	}
	if b.String() != `{"kernel":"gemm","n":2}`+"\n" {
		t.Fatalf("got %q", b.String())
	}
}

func TestPeakArithmetic(t *testing.T) {
	p := Peak{Cores: 2, GHz: 2.5, FlopsPerCycle: 16}
	if p.GFLOPS() != 80 {
		t.Fatalf("GFLOPS = %v, want 80", p.GFLOPS())
	}
	if m := MachinePeak(); m.Cores < 1 || m.FlopsPerCycle < 2 || !strings.Contains(m.String(), "FLOP/cycle") {
		t.Fatalf("MachinePeak() = %+v", m)
	}
}

func TestMeasuredClockIsPlausible(t *testing.T) {
	// Even under qemu or the race detector the chain runs at well over 50 MHz,
	// and no CPU retires it at 10 GHz.
	if g := measureGHz(); g < 0.05 || g > 10 {
		t.Fatalf("measureGHz() = %v", g)
	}
	t.Setenv("PACPFL_CPU_GHZ", "4.5")
	if p := MachinePeak(); p.GHz != 4.5 || p.FrequencySource != "PACPFL_CPU_GHZ" {
		t.Fatalf("override ignored: %+v", p)
	}
}

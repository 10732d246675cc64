package bench

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pacpfl/pacpfl/asm"
	"github.com/pacpfl/pacpfl/asm/asmtest"
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
	m, err := MachinePeak()
	if err != nil || m.Cores < 1 || m.FlopsPerCycle < 2 || !strings.Contains(m.String(), "FLOP/cycle") ||
		m.FlopsSource == "" {
		t.Fatalf("MachinePeak() = %+v, %v", m, err)
	}
}

// TestFlopsPerCycleEveryLevel: the FLOP/cycle of each level this CPU runs is
// what its FMA pipes allow and says where it comes from. At avx2 the figure
// is measured: every AVX2 core has one or two 256-bit FMA pipes, so 8 or 16.
func TestFlopsPerCycleEveryLevel(t *testing.T) {
	asmtest.ForEachLevel(t, func(t *testing.T, l asm.Level) {
		f, why := flopsPerCycle(l)
		t.Logf("%s: %d FLOP/cycle (%s)", l, f, why)
		switch l {
		case asm.AVX2:
			if fmaProbe != nil && (f != 8 && f != 16 || !strings.HasPrefix(why, "measured")) {
				t.Fatalf("avx2: %d FLOP/cycle (%s), want a measured 8 or 16", f, why)
			}
		case asm.AVX512:
			if f != 16 && f != 32 {
				t.Fatalf("avx512: %d FLOP/cycle (%s), want 16 or 32", f, why)
			}
		case asm.NEON:
			if f != 8 {
				t.Fatalf("neon: %d FLOP/cycle, want the assumed 8", f)
			}
		case asm.Generic:
			if f != 2 {
				t.Fatalf("generic: %d FLOP/cycle, want 2", f)
			}
		}
	})
}

func TestMeasuredClockIsPlausible(t *testing.T) {
	// Even under qemu or the race detector the chain runs at well over 50 MHz,
	// and no CPU retires it at 10 GHz.
	if g := measureGHz(); g < 0.05 || g > 10 {
		t.Fatalf("measureGHz() = %v", g)
	}
	t.Setenv(GHzEnvVar, "4.5")
	if p, err := MachinePeak(); err != nil || p.GHz != 4.5 || p.FrequencySource != GHzEnvVar {
		t.Fatalf("override ignored: %+v, %v", p, err)
	}
}

// TestBadClockOverrideIsAnError: a PACPFL_CPU_GHZ that is not a plausible
// clock is refused by name, never ignored or used.
func TestBadClockOverrideIsAnError(t *testing.T) {
	for _, v := range []string{"Inf", "+Inf", "1e300", "junk", "0", "-1", "NaN", "", "0.05", "11"} {
		t.Setenv(GHzEnvVar, v)
		if err := ConfigError(); err == nil || !strings.Contains(err.Error(), GHzEnvVar) {
			t.Errorf("%s=%q: ConfigError() = %v, want an error naming the variable", GHzEnvVar, v, err)
		}
		if _, err := MachinePeak(); err == nil {
			t.Errorf("%s=%q: MachinePeak() accepted it", GHzEnvVar, v)
		}
	}
	t.Setenv(GHzEnvVar, " 3.7 ")
	if err := ConfigError(); err != nil {
		t.Fatalf("3.7: %v", err)
	}
}

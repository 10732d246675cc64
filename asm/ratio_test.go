package asm

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"
)

// TestLevelRatios is a measurement, not a check: with PACPFL_RATIOS=1 (and
// -v) it times each kernel at every supported level, alternating the levels
// round by round inside this one process and keeping each level's minimum,
// and prints the times relative to the best level's. PACPFL_RATIOS may
// instead hold a comma-separated list of kernel-name prefixes to time.
// It is skipped otherwise: timings on a shared machine are no test.
func TestLevelRatios(t *testing.T) {
	sel := os.Getenv("PACPFL_RATIOS")
	if sel == "" {
		t.Skip("set PACPFL_RATIOS=1 (or kernel-name prefixes) to measure")
	}
	defer Configure("")
	type kernel struct {
		name string
		run  func()
	}
	var ks []kernel
	vec := func(n int) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = float64(i%17)*0.25 - 2
		}
		return x
	}
	for _, n := range []int{7, 64, 67, 1000, 1024, 4096, 65536} {
		x, y := vec(n), vec(n)
		ks = append(ks,
			kernel{fmt.Sprint("DotUnitary n=", n), func() { benchSinkTest += DotUnitary(x, y) }},
			kernel{fmt.Sprint("AxpyUnitary n=", n), func() { AxpyUnitary(1e-9, x, y) }},
			kernel{fmt.Sprint("ScalUnitary n=", n), func() { ScalUnitary(1, x) }},
		)
	}
	for _, n := range []int{1000, 1024} {
		x, y := vec(2*n), vec(2*n)
		ks = append(ks,
			kernel{fmt.Sprint("DotInc n=", n), func() { benchSinkTest += DotInc(x, y, uintptr(n), 2, 2, 0, 0) }},
			kernel{fmt.Sprint("AxpyInc n=", n), func() { AxpyInc(1e-9, x, y, uintptr(n), 2, 2, 0, 0) }},
			kernel{fmt.Sprint("ScalInc n=", n), func() { ScalInc(1, x, uintptr(n), 2) }},
		)
	}
	for _, n := range []int{7, 64, 67, 1000, 4096, 65536} {
		x := make([]float64, n)
		for i := range x {
			x[i] = -20 + 40*float64(i)/float64(n)
		}
		dst := make([]float64, n)
		ks = append(ks, kernel{fmt.Sprint("Exp n=", n), func() { Exp(dst, x) }})
	}
	{
		// Every element off the fast path (subnormal results): the AVX2
		// kernel hands such blocks to Go, the AVX-512 one does not.
		const n = 4096
		x := make([]float64, n)
		for i := range x {
			x[i] = -744 + 35*float64(i)/n
		}
		dst := make([]float64, n)
		ks = append(ks, kernel{"Exp subnormal n=4096", func() { Exp(dst, x) }})
	}
	for _, c := range [][2]int{{256, 2}, {1000, 2}, {1000, 1}, {500, 5}, {300, 16}, {200, 64}, {37, 2}} {
		m, d := c[0], c[1]
		a := vec(m * d)
		k := make([]float64, m*m)
		ks = append(ks,
			kernel{fmt.Sprintf("SEKernel m=%d d=%d", m, d), func() { SEKernel(k, m, a, d, a, d, m, m, d) }},
			kernel{fmt.Sprintf("SqDist m=%d d=%d", m, d), func() { SqDist(k, m, a, d, a, d, m, m, d) }},
		)
	}
	levels := Supported()
	t.Logf("CPU: %s; levels %v; times are the minimum over rounds alternating the levels", cpuName(), levels)
	for _, k := range ks {
		if sel != "1" && !hasAnyPrefix(k.name, strings.Split(sel, ",")) {
			continue
		}
		// Repetitions per timing: about 20 µs of work at the first level.
		SetLevel(levels[0])
		reps := 1
		for {
			t0 := time.Now()
			for range reps {
				k.run()
			}
			if time.Since(t0) > 20*time.Microsecond || reps > 1<<20 {
				break
			}
			reps *= 2
		}
		best := make([]float64, len(levels))
		for i := range best {
			best[i] = math.Inf(1)
		}
		for round := 0; round < 200; round++ {
			for i, l := range levels {
				SetLevel(l)
				t0 := time.Now()
				for range reps {
					k.run()
				}
				best[i] = min(best[i], float64(time.Since(t0).Nanoseconds())/float64(reps))
			}
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%-24s", k.name)
		for i, l := range levels {
			fmt.Fprintf(&b, "  %s %9.1f ns", l, best[i])
		}
		for i := 1; i < len(levels); i++ {
			fmt.Fprintf(&b, "  %s/%s %.2f", levels[i], levels[0], best[i]/best[0])
		}
		t.Log(b.String())
	}
}

func hasAnyPrefix(s string, ps []string) bool {
	for _, p := range ps {
		if p != "" && strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func cpuName() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "model name") {
			if _, v, ok := strings.Cut(line, ":"); ok {
				return strings.TrimSpace(v)
			}
		}
	}
	return "unknown"
}

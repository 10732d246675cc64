package bench

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pacpfl/pacpfl/asm"
)

// Peak is a machine's theoretical double-precision peak:
// cores × GHz × FLOP per cycle per core at a SIMD level.
type Peak struct {
	Cores           int
	GHz             float64
	FlopsPerCycle   int
	Level           asm.Level
	FrequencySource string
}

// GFLOPS is the peak in GFLOP/s.
func (p Peak) GFLOPS() float64 { return float64(p.Cores) * p.GHz * float64(p.FlopsPerCycle) }

// String says how the peak was computed.
func (p Peak) String() string {
	return fmt.Sprintf("peak %.1f GFLOP/s = %d cores × %.2f GHz (%s) × %d FLOP/cycle (%s: %s)",
		p.GFLOPS(), p.Cores, p.GHz, p.FrequencySource, p.FlopsPerCycle, p.Level, flopsWhy(p.Level))
}

// flopsPerCycle assumes two FMA pipes per core, as on every x86 server core
// since Haswell and on Zen; one FMA is two FLOP per lane.
func flopsPerCycle(l asm.Level) int {
	switch l {
	case asm.AVX512:
		return 2 * 8 * 2
	case asm.AVX2:
		return 2 * 4 * 2
	case asm.NEON:
		return 2 * 2 * 2
	default:
		return 2 // scalar: one multiply and one add per cycle
	}
}

func flopsWhy(l asm.Level) string {
	switch l {
	case asm.AVX512:
		return "2 FMA pipes × 8 doubles × 2"
	case asm.AVX2:
		return "2 FMA pipes × 4 doubles × 2"
	case asm.NEON:
		return "2 FMA pipes × 2 doubles × 2"
	default:
		return "scalar multiply + add"
	}
}

// MachinePeak computes the peak for the current SIMD level and GOMAXPROCS
// cores. The clock is PACPFL_CPU_GHZ if set; otherwise the highest of the
// cpufreq maximum, the "cpu MHz" of /proc/cpuinfo (often the base clock in a
// VM) and a measured clock (see measureGHz), because a peak below what the
// machine really runs at would report more than 100 % of it.
func MachinePeak() Peak {
	ghz, src := cpuGHz()
	if v, err := strconv.ParseFloat(os.Getenv("PACPFL_CPU_GHZ"), 64); err == nil && v > 0 {
		ghz, src = v, "PACPFL_CPU_GHZ"
	} else if m := measureGHz(); m > ghz {
		ghz, src = m, "measured: dependent add/xor chain"
	}
	return Peak{
		Cores:           runtime.GOMAXPROCS(0),
		GHz:             ghz,
		FlopsPerCycle:   flopsPerCycle(asm.Current()),
		Level:           asm.Current(),
		FrequencySource: src,
	}
}

func cpuGHz() (float64, string) {
	if b, err := os.ReadFile("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"); err == nil {
		if khz, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64); err == nil && khz > 0 {
			return khz / 1e6, "cpufreq max"
		}
	}
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return 0, "unknown"
	}
	defer f.Close()
	best := 0.0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "cpu MHz" {
			if mhz, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && mhz > best {
				best = mhz
			}
		}
	}
	if best == 0 {
		return 0, "unknown"
	}
	return best / 1000, "/proc/cpuinfo cpu MHz"
}

// addChain runs n iterations of a loop whose critical path is eight
// dependent one-cycle integer operations (adds and xors the compiler cannot
// fold), so it takes 8n cycles whatever the loop overhead and its alignment.
//
//go:noinline
func addChain(n int) int {
	x := 0
	for i := 0; i < n; i++ {
		x += i
		x ^= 0x5555
		x += i
		x ^= 0x3333
		x += i
		x ^= 0x0f0f
		x += i
		x ^= 0x00ff
	}
	return x
}

// measureGHz estimates the all-core running clock (turbo included): every
// core runs the add chain at once (that is the situation of a parallel
// kernel), each keeps its fastest of 80 runs of about 0.5 ms (short, so that
// some run escapes a busy machine's time slicing), and the fastest core
// counts: a theoretical peak is an upper bound, and this VM's vCPUs at times
// run slower than their clock for reasons outside the guest.
func measureGHz() float64 {
	const n = 200_000 // iterations: 1.6 M cycles
	procs := runtime.GOMAXPROCS(0)
	ghz := make([]float64, procs)
	var wg sync.WaitGroup
	for p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			s := addChain(60 * n) // ~30 ms: a core out of idle ramps its clock up
			for r := 0; r < 80; r++ {
				start := time.Now()
				s += addChain(n)
				if g := 8 * n / time.Since(start).Seconds() / 1e9; g > ghz[p] {
					ghz[p] = g
				}
			}
			sinks[p%len(sinks)] = s
		}()
	}
	wg.Wait()
	best := 0.0
	for _, g := range ghz {
		best = max(best, g)
	}
	return best
}

var sinks [64]int

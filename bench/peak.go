package bench

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
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
	// FlopsSource says where FlopsPerCycle comes from: measured with an FMA
	// throughput loop, derived from it for the CPU model, or assumed.
	FlopsSource string
}

// GFLOPS is the peak in GFLOP/s.
func (p Peak) GFLOPS() float64 { return float64(p.Cores) * p.GHz * float64(p.FlopsPerCycle) }

// String says how the peak was computed.
func (p Peak) String() string {
	return fmt.Sprintf("peak %.1f GFLOP/s = %d cores × %.2f GHz (%s) × %d FLOP/cycle (%s: %s)",
		p.GFLOPS(), p.Cores, p.GHz, p.FrequencySource, p.FlopsPerCycle, p.Level, p.FlopsSource)
}

// GHzEnvVar overrides the clock used for the peak (GHz, e.g. 3.2).
const GHzEnvVar = "PACPFL_CPU_GHZ"

// ConfigError reports an unusable PACPFL_CPU_GHZ (set but not a finite
// number in [0.1, 10] GHz), or nil. Like a bad PACPFL_SIMD it is an error,
// never silently ignored: a wrong clock makes every "% of peak" wrong.
func ConfigError() error {
	_, _, err := ghzOverride()
	return err
}

func ghzOverride() (ghz float64, set bool, err error) {
	v, ok := os.LookupEnv(GHzEnvVar)
	if !ok {
		return 0, false, nil
	}
	g, perr := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if perr != nil || math.IsNaN(g) || g < 0.1 || g > 10 {
		return 0, true, fmt.Errorf("%s=%q: want the CPU clock in GHz, a number between 0.1 and 10", GHzEnvVar, v)
	}
	return g, true, nil
}

// MachinePeak computes the peak for the current SIMD level and GOMAXPROCS
// cores. The clock is PACPFL_CPU_GHZ if set; otherwise the highest of the
// cpufreq maximum, the "cpu MHz" of /proc/cpuinfo (often the base clock in a
// VM) and a measured clock (see measureGHz), because a peak below what the
// machine really runs at would report more than 100 % of it. FLOP per cycle
// is measured where this build has an FMA loop for the level (see
// flopsPerCycle). A bad PACPFL_CPU_GHZ is an error.
func MachinePeak() (Peak, error) {
	ghz, src := cpuGHz()
	if v, set, err := ghzOverride(); err != nil {
		return Peak{}, err
	} else if set {
		ghz, src = v, GHzEnvVar
	} else if m := measureGHz(); m > ghz {
		ghz, src = m, "measured: dependent add/xor chain"
	}
	l := asm.Current()
	f, why := flopsPerCycle(l)
	return Peak{
		Cores:           runtime.GOMAXPROCS(0),
		GHz:             ghz,
		FlopsPerCycle:   f,
		Level:           l,
		FrequencySource: src,
		FlopsSource:     why,
	}, nil
}

// flopsPerCycle is one core's double-precision FLOP per cycle at level l
// (one FMA is two FLOP per lane) and where the figure comes from.
//
// At avx2 and avx512 it is measured: the FMA throughput loop of the level's
// width (256- or 512-bit) against the dependent integer chain on the same
// thread gives FMAs per cycle, rounded to whole pipes (Zen 4, which splits a
// 512-bit FMA over two 256-bit pipes, measures 1 × 512-bit; Zen 5 and Intel
// parts with two 512-bit units measure 2). NEON and scalar code use a stated
// assumption.
func flopsPerCycle(l asm.Level) (int, string) {
	switch l {
	case asm.AVX2, asm.AVX512:
		probe, lanes, pipes, ok := fmaProbe, 4, 0, false
		if l == asm.AVX512 {
			probe, lanes = fmaProbe512, 8
			pipes, ok = fmaPipes512()
		} else {
			pipes, ok = fmaPipes()
		}
		if !ok {
			return 2 * lanes * 2,
				fmt.Sprintf("assumed 2 FMA pipes × %d doubles × 2 (no FMA probe in this build)", lanes)
		}
		return pipes * lanes * 2, fmt.Sprintf("measured %d FMA/cycle × %d doubles × 2 (%s)", pipes, lanes, probe.what)
	case asm.NEON:
		return 2 * 2 * 2, "assumed 2 FMA pipes × 2 doubles × 2"
	default:
		return 2, "assumed scalar multiply + add"
	}
}

// fmaPipes measures once per process how many FMAs one core retires per
// cycle, rounded to a whole number ≥ 1; false where there is no probe.
var fmaPipes = sync.OnceValues(func() (int, bool) {
	if fmaProbe == nil || asm.Unsupported(asm.AVX2) != "" {
		return 0, false
	}
	return max(1, int(math.Round(fmaProbe.perCycle()))), true
})

// fmaPipes512 is fmaPipes for 512-bit FMAs (false without AVX-512).
var fmaPipes512 = sync.OnceValues(func() (int, bool) {
	if fmaProbe512 == nil || asm.Unsupported(asm.AVX512) != "" {
		return 0, false
	}
	return max(1, int(math.Round(fmaProbe512.perCycle()))), true
})

// fmaLoop is an FMA throughput loop: run(n) retires n·perIter independent
// FMAs of lanes doubles each.
type fmaLoop struct {
	run     func(n int)
	perIter int
	lanes   int
	what    string
}

// perCycle measures FMAs per cycle on one locked thread: the fastest of many
// short runs of the FMA loop against the fastest of the same number of runs
// of the 8-cycle integer chain (so the clock, turbo or not, cancels out).
func (f *fmaLoop) perCycle() float64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const nFMA, nAdd = 20_000, 20_000
	sinks[0] += addChain(40 * nAdd) // ramp the clock up
	bestFMA, bestAdd := math.Inf(1), math.Inf(1)
	for r := 0; r < 60; r++ {
		t := time.Now()
		f.run(nFMA)
		bestFMA = min(bestFMA, time.Since(t).Seconds())
		t = time.Now()
		sinks[0] += addChain(nAdd)
		bestAdd = min(bestAdd, time.Since(t).Seconds())
	}
	cycles := bestFMA / (bestAdd / (8 * nAdd))
	return float64(nFMA*f.perIter) / cycles
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
// kernel) in 160 runs of about 0.6 ms each, a core's clock is the upper
// quartile of its runs' rates, and the fastest core counts. Not the mean:
// this VM's vCPUs at times run slower than their clock for reasons outside
// the guest, and a peak is an upper bound. Not the fastest run either: on a
// KVM Zen 1 (EPYC, family 23 model 1) that sustains 2.54 GHz under load,
// about 0.2 % of 10–100 µs runs, and the first few ms after an idle spell,
// timed as if at 2.8–3.0 GHz, on both vCPUs at once, so the fastest of 80
// runs put the peak at 40.1 or 47.9 GFLOP/s from one process to the next.
// The upper quartile moves only when a quarter of the runs do.
func measureGHz() float64 {
	const n, runs = 200_000, 160 // iterations of one run: 1.6 M cycles
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
			rates := make([]float64, runs)
			for r := range rates {
				start := time.Now()
				s += addChain(n)
				rates[r] = 8 * n / time.Since(start).Seconds() / 1e9
			}
			slices.Sort(rates)
			ghz[p] = rates[runs*3/4]
			sinks[p%len(sinks)] = s
		}()
	}
	wg.Wait()
	return slices.Max(ghz)
}

var sinks [64]int

package lml

import (
	"bufio"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSparseBigRun is the large case, by hand:
//
//	PACPFL_SPARSE_BIG=1 go test ./lml/ -run SparseBigRun -v -timeout 1h
//
// m = 1,844,352 rows of D = 15 inputs (DefaultModel(15)), M = 512 inducing
// inputs from SelectInducing, one particle (k = 1) on every core. It logs
// the time of SelectInducing, of a bound alone and of bound + gradient (the
// minimum of PACPFL_SPARSE_BIG_REPS runs, default 2), and the peak resident
// memory beyond the data: the kernel's high-water mark (VmHWM) is reset
// after the data are built (/proc/self/clear_refs), so the peak of the
// evaluations minus the resident size before them is what the workspace and
// the Go runtime add. PACPFL_SPARSE_BIG_M overrides m (for a quick check).
func TestSparseBigRun(t *testing.T) {
	if os.Getenv("PACPFL_SPARSE_BIG") == "" {
		t.Skip("set PACPFL_SPARSE_BIG=1 to run the m = 1,844,352, M = 512 measurement")
	}
	m := 1844352
	if v := os.Getenv("PACPFL_SPARSE_BIG_M"); v != "" {
		var err error
		if m, err = strconv.Atoi(v); err != nil {
			t.Fatal(err)
		}
	}
	reps := 2
	if v := os.Getenv("PACPFL_SPARSE_BIG_REPS"); v != "" {
		reps, _ = strconv.Atoi(v)
	}
	const M = 512
	md := DefaultModel(15)
	rng := rand.New(rand.NewPCG(2026, 34))
	phi, X, y := testProblem(rng, md, m, 0.5)
	dataMB := float64(8*(len(X)+len(y))) / 1e6
	t.Logf("m = %d, D = %d, M = %d, dφ = %d, data %.0f MB, GOMAXPROCS %d, %s", m, md.D, M, len(phi), dataMB,
		runtime.GOMAXPROCS(0), cpuName())

	t0 := time.Now()
	Z, err := SelectInducing(X, md.D, M, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("SelectInducing: %.2f s", time.Since(t0).Seconds())

	runtime.GC()
	rss0 := procStatus(t, "VmRSS")
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Logf("cannot reset VmHWM (%v): the peak below includes the data's construction", err)
	}
	sw, err := NewSparseWorkspace(md, SparseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sw.Close()
	g := make([]float64, md.NumParams())
	best := func(grad []float64) (f, wall, cpu float64) {
		wall, cpu = math.Inf(1), math.Inf(1)
		for range reps {
			t0, c0 := time.Now(), processCPU()
			if f, err = sw.Bound(phi, X, y, Z, grad); err != nil {
				t.Fatal(err)
			}
			wall = math.Min(wall, time.Since(t0).Seconds())
			cpu = math.Min(cpu, (processCPU() - c0).Seconds())
		}
		return f, wall, cpu
	}
	f, sv, cv := best(nil)
	_, sg, cg := best(g)
	var gn float64
	for _, v := range g {
		gn += v * v
	}
	hwm := procStatus(t, "VmHWM")
	t.Logf("bound %.6g (jitter %g), |∇| %.4g", f, sw.Jitter(), math.Sqrt(gn))
	t.Logf("bound alone %.2f s (CPU %.2f s), bound + gradient %.2f s (CPU %.2f s), min of %d, %.1f GFLOP/s nominal "+
		"(4·m·M² per wall second); load %s",
		sv, cv, sg, cg, reps, 4*float64(m)*M*M/1e9/sg, loadAvg())
	t.Logf("resident before %.0f MB (data %.0f MB), peak %.0f MB: %.0f MB beyond the data", rss0, dataMB, hwm, hwm-rss0)
}

// procStatus returns a /proc/self/status field in MB.
func procStatus(t *testing.T, key string) float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status:", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), key+":"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1e3
		}
	}
	t.Fatalf("no %s in /proc/self/status", key)
	return 0
}

// loadAvg returns the 1-, 5- and 15-minute load averages.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// cpuName returns the model name from /proc/cpuinfo.
func cpuName() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rest), ":"))
		}
	}
	return runtime.GOARCH
}

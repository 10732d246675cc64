package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/pacpfl/pacpfl/bench"
	"github.com/pacpfl/pacpfl/lml"
	"github.com/pacpfl/pacpfl/svgd"
)

// `pacpfl bench lml --gp-inference sparse`: the sparse GP client's work,
// the Titsias bound and its gradient (lml.SparseWorkspace) of k particles
// on m rows with M inducing inputs, one row per (m, k, M).
//
// The flops counted per particle (sparseBoundFlops) are the algorithm's
// dense products:
//
//	4·m·M² + (20/3)·M³
//
// 2·m·M² in the first pass for S: the whitening A_cᵀ = K_cu·L⁻ᵀ (m·M², by
// GEMMs over column blocks) and the Gram update [A; rᵀ][A; rᵀ]ᵀ (m·M², a
// SYRK of the lower triangle); 2·m·M² in the second pass for the
// gradient's product K_fu·[2·∂F/∂S | α]; and the M×M work: the Cholesky
// factors of K_uu and B (M³/3 each), L⁻ᵀ and B⁻¹ (M³ each) and the four
// M×M triangular solves of ∂F/∂S and ∂F/∂K_uu (4·M³). Not counted: the
// kernel entries and the per-row products with f(X) (O(m·M·DF)) and the
// networks (O(m·width²)), small beside m·M² at these sizes.
//
// Memory: each row runs in this process after a reset of its peak resident
// set (VmHWM, "5" to /proc/self/clear_refs; Linux), with the data already
// resident. A row reports the data's own size (X and y, 8·m·(D+1) bytes),
// its peak RSS and the part of it beyond the RSS at the row's start (data,
// runtime and binary resident): the workspace and evaluation themselves.

// sparseBoundFlops is the flop count of one particle's bound and gradient
// (see above).
func sparseBoundFlops(m, M int) float64 {
	fm, fM := float64(m), float64(M)
	return 4*fm*fM*fM + 20.0/3*fM*fM*fM
}

// sparseFlopsHelp states sparseBoundFlops for the help and the table.
const sparseFlopsHelp = "4·m·M² + 20/3·M³ flop per particle: 2·m·M² for S (whitening and Gram), 2·m·M² for the gradient's product K_fu·[2∂F/∂S | α], 20/3·M³ for the M×M factors, inverses and solves"

// defaultSparseMs is --m for --gp-inference sparse when --m is not given.
var defaultSparseMs = intList{10000, 100000}

type sparseLMLResult struct {
	Kernel      string `json:"kernel"`       // "gp_sparse_bound"
	GPInference string `json:"gp_inference"` // "sparse"
	CPU         string `json:"cpu,omitempty"`
	M           int    `json:"m"`
	K           int    `json:"k"`
	Inducing    int    `json:"inducing"`
	Threads     int    `json:"threads"`
	Chunk       int    `json:"chunk"`
	// Seconds is the time of k bounds and gradients (the minimum of
	// --reps after a warm-up); the choice of Z is not in it
	// (SelectSeconds).
	Seconds float64 `json:"seconds,omitempty"`
	// CPUSeconds is the process's CPU time (all threads) per run of the k
	// bounds, averaged over the warm-up and the --reps runs: on a shared
	// machine other jobs inflate it less than the wall time.
	CPUSeconds    float64 `json:"cpu_seconds,omitempty"`
	GFLOP         float64 `json:"gflop"`            // k·sparseBoundFlops(m, M)/1e9
	GFLOPS        float64 `json:"gflops,omitempty"` // GFLOP / Seconds
	PeakPct       float64 `json:"peak_pct,omitempty"`
	SelectSeconds float64 `json:"select_seconds"`
	// DataBytes is the size of X and y; PeakRSS the process's peak
	// resident set during the row (VmHWM), BeyondData the part of it
	// above the RSS at the row's start (data resident). PeakRSSRow says
	// whether VmHWM was reset before the row (else PeakRSS is the
	// process's peak so far and BeyondData is not measured).
	DataBytes  int64  `json:"data_bytes"`
	PeakRSS    int64  `json:"peak_rss_bytes,omitempty"`
	BeyondData int64  `json:"beyond_data_bytes,omitempty"`
	PeakRSSRow bool   `json:"peak_rss_row,omitempty"`
	Error      string `json:"error,omitempty"`
}

// sparseBenchConfig is bench lml's flags for the sparse rows.
type sparseBenchConfig struct {
	ms, ks, inducing intList
	threads, reps    int
	asJSON           bool
}

// checkSparseBench refuses an M above an m, and data plus workspace beyond
// the machine's memory.
func checkSparseBench(c *sparseBenchConfig, d int) error {
	mMin, mMax, MMax := slices.Min(c.ms), slices.Max(c.ms), slices.Max(c.inducing)
	if MMax > mMin {
		return usagef("--inducing %d is above --m %d: the M inducing inputs are M of the m rows (give M ≤ every m)", MMax, mMin)
	}
	// X and y, and the 16 row blocks' (M+1)² sums with a dozen M×M
	// matrices: a lower bound.
	need := 8 * (float64(mMax)*float64(d+1) + 28*float64(MMax+1)*float64(MMax+1))
	return memoryError(fmt.Sprintf("--m %d --inducing %d", mMax, MMax), need)
}

func runBenchLMLSparse(c *sparseBenchConfig, stdout, stderr io.Writer) int {
	const d = 15
	if err := checkSparseBench(c, d); err != nil {
		return fail(stderr, "bench lml", err)
	}
	model := lml.DefaultModel(d)
	np := model.NumParams()
	prior, err := svgd.Isotropic(model.HyperPriorMean(), 0.5)
	if err != nil {
		return fail(stderr, "bench lml", err)
	}
	peak := machinePeak()
	cpu := cpuModel()
	if !c.asJSON {
		fmt.Fprintf(stdout, "CPU: %s; %s\n", cpu, peak)
		fmt.Fprintf(stdout, "sparse GP client: Titsias bound + gradient of k particles; d=%d, dφ=%d; GFLOP/s counts %s\n", d, np, sparseFlopsHelp)
		fmt.Fprintf(stdout, "memory: data = X and y; beyond = peak RSS of the row above the RSS at its start (data resident); cpu s = process CPU time per run (all threads, mean of warm-up and reps)\n")
		fmt.Fprintf(stdout, "%8s %3s %5s %7s %11s %9s %7s %9s %10s %10s %10s %9s\n", "m", "k", "M", "threads", "seconds", "GFLOP/s", "% peak", "cpu s", "data", "beyond", "peak RSS", "select s")
	}
	rng := rand.New(rand.NewPCG(11, 12))
	status := exitOK
	for _, m := range c.ms {
		X, y := sparseBenchData(rng, m, d)
		for _, k := range c.ks {
			phis := make([]float64, k*np)
			if err := prior.SampleRows(phis, rng); err != nil {
				return fail(stderr, "bench lml", err)
			}
			for _, M := range c.inducing {
				r := sparseBenchRow(c, model, X, y, phis, k, M, peak)
				r.CPU = cpu
				if r.Error != "" {
					status = exitError
				}
				if c.asJSON {
					bench.JSONLine(stdout, r)
					continue
				}
				if r.Error != "" {
					fmt.Fprintf(stdout, "%8d %3d %5d  error: %s\n", m, k, M, r.Error)
					continue
				}
				fmt.Fprintf(stdout, "%8d %3d %5d %7d %11.4f %9.2f %6.1f%% %9.3f %10s %10s %10s %9.2f\n", m, k, M, r.Threads, r.Seconds, r.GFLOPS, r.PeakPct, r.CPUSeconds,
					formatMB(r.DataBytes, true), formatMB(r.BeyondData, r.PeakRSSRow), formatMB(r.PeakRSS, r.PeakRSSRow), r.SelectSeconds)
			}
		}
		X, y = nil, nil
	}
	return status
}

// sparseBenchData is m rows of d standard normal inputs and a smooth
// target with noise, generated in place: 8·m·(d+1) bytes, O(m·d) time.
func sparseBenchData(rng *rand.Rand, m, d int) (X, y []float64) {
	X, y = make([]float64, m*d), make([]float64, m)
	for i := range y {
		row := X[i*d : (i+1)*d]
		for j := range row {
			row[j] = rng.NormFloat64()
		}
		y[i] = math.Sin(row[0]+0.5*row[1]) + 0.3*row[2]*row[2] - 0.3 + 0.1*rng.NormFloat64()
	}
	return X, y
}

// sparseBenchRow chooses Z, then times k bounds and gradients in a fresh
// workspace, the peak RSS reset before.
func sparseBenchRow(c *sparseBenchConfig, model lml.Model, X, y, phis []float64, k, M int, peak bench.Peak) sparseLMLResult {
	d, np, m := model.D, model.NumParams(), len(y)
	r := sparseLMLResult{Kernel: "gp_sparse_bound", GPInference: "sparse", M: m, K: k, Inducing: M,
		DataBytes: 8 * int64(m) * int64(d+1), GFLOP: float64(k) * sparseBoundFlops(m, M) / 1e9}
	t0 := time.Now()
	Z, err := lml.SelectInducing(X, d, M, 1)
	r.SelectSeconds = time.Since(t0).Seconds()
	if err != nil {
		r.Error = err.Error()
		return r
	}
	reset := resetPeakRSS()
	start := procStatusBytes("VmRSS")
	ws, err := lml.NewSparseWorkspace(model, lml.SparseOptions{Threads: c.threads})
	if err != nil {
		r.Error = err.Error()
		return r
	}
	defer ws.Close()
	r.Threads, r.Chunk = ws.Threads(), ws.Chunk()
	grad := make([]float64, np)
	cpu0 := processCPUSeconds()
	best, errs := bench.Alternate(c.reps, []bench.Contender{{Name: "sparse", Run: func() error {
		for κ := 0; κ < k; κ++ {
			if _, err := ws.Bound(phis[κ*np:(κ+1)*np], X, y, Z, grad); err != nil {
				return fmt.Errorf("particle %d: %w", κ, err)
			}
		}
		return nil
	}}})
	r.CPUSeconds = (processCPUSeconds() - cpu0) / float64(c.reps+1)
	r.PeakRSS = procStatusBytes("VmHWM")
	r.PeakRSSRow = reset && r.PeakRSS > 0 && start > 0
	if r.PeakRSSRow {
		r.BeyondData = max(0, r.PeakRSS-start)
	}
	runtime.KeepAlive(Z)
	if errs[0] != nil {
		r.Error = errs[0].Error()
		return r
	}
	r.Seconds = best[0]
	r.GFLOPS = r.GFLOP / best[0]
	if p := peak.GFLOPS(); p > 0 {
		r.PeakPct = 100 * r.GFLOPS / p
	}
	return r
}

// formatMB prints bytes in MB (10⁶ bytes): "-" if unknown, with a "*"
// when not measured for the row alone (the process's peak so far).
func formatMB(b int64, row bool) string {
	if b <= 0 {
		return "-"
	}
	s := fmt.Sprintf("%.1f MB", float64(b)/1e6)
	if !row {
		s += "*"
	}
	return s
}

// processCPUSeconds is the process's user and system CPU time so far, 0
// where getrusage fails.
func processCPUSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// procStatusBytes returns a "kB" field of /proc/self/status (VmRSS,
// VmHWM) in bytes, 0 if /proc does not report it.
func procStatusBytes(key string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || k != key {
			continue
		}
		var n int64
		if _, err := fmt.Sscanf(strings.TrimSpace(v), "%d kB", &n); err != nil {
			return 0
		}
		return n << 10
	}
	return 0
}

// cpuModel is the CPU's model name (/proc/cpuinfo) and the logical CPUs,
// "" parts omitted where unknown.
func cpuModel() string {
	name := runtime.GOARCH
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(l, "model name"); ok {
				if _, v, ok := strings.Cut(rest, ":"); ok && strings.TrimSpace(v) != "" {
					name = strings.TrimSpace(v)
					break
				}
			}
		}
	}
	return fmt.Sprintf("%s, %d CPUs", name, runtime.NumCPU())
}

package suite

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"time"

	"github.com/pacpfl/pacpfl/bench"
	"github.com/pacpfl/pacpfl/lml"
	"github.com/pacpfl/pacpfl/option"
	"github.com/pacpfl/pacpfl/svgd"
)

// SparseBoundFlops is the flop count of one particle's sparse bound and
// gradient on m rows with M inducing inputs, the algorithm's dense products:
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
func SparseBoundFlops(m, M int) float64 {
	fm, fM := float64(m), float64(M)
	return 4*fm*fM*fM + 20.0/3*fM*fM*fM
}

// SparseFlopsHelp states SparseBoundFlops in words, for help texts and the
// table's header.
const SparseFlopsHelp = "4·m·M² + 20/3·M³ flop per particle: 2·m·M² for S (whitening and Gram), " +
	"2·m·M² for the gradient's " +
	"product K_fu·[2∂F/∂S | α], 20/3·M³ for the M×M factors, inverses and solves"

// SparseLMLConfig configures SparseLML. Zero fields take the defaults given.
type SparseLMLConfig struct {
	// Ms are the numbers of rows m (DefaultSparseMs).
	Ms []int
	// Ks are the numbers of particles k (1).
	Ks []int
	// Inducing are the numbers of inducing inputs M, each at most every m
	// (DefaultSparseInducing).
	Inducing []int
	// Threads is the workspace's threads (0: GOMAXPROCS).
	Threads int
	// Reps is the repetitions per figure after one warm-up
	// (DefaultLMLReps).
	Reps int
}

// Defaults of SparseLMLConfig.
var (
	DefaultSparseMs       = []int{10000, 100000}
	DefaultSparseInducing = []int{256, 512, 1024}
)

func (c SparseLMLConfig) withDefaults() SparseLMLConfig {
	c.Ms = orDefaultList(c.Ms, DefaultSparseMs)
	c.Ks = orDefaultList(c.Ks, []int{1})
	c.Inducing = orDefaultList(c.Inducing, DefaultSparseInducing)
	c.Reps = orDefault(c.Reps, DefaultLMLReps)
	return c
}

// MemoryBytes is a lower bound of SparseLML's memory: X and y at the
// largest m, and the 16 row blocks' (M+1)² sums with a dozen M×M matrices
// at the largest M.
func (c SparseLMLConfig) MemoryBytes() float64 {
	c = c.withDefaults()
	mMax, MMax := float64(slices.Max(c.Ms)), float64(slices.Max(c.Inducing))
	return 8 * (mMax*(lmlD+1) + 28*(MMax+1)*(MMax+1))
}

// Validate reports, as an *option.FieldError on Inducing and Ms, more
// inducing inputs M than the rows of the smallest m (nil fields: their
// defaults): the M inducing inputs are M of the m rows.
func (c SparseLMLConfig) Validate() error {
	c = c.withDefaults()
	M, m := slices.Max(c.Inducing), slices.Min(c.Ms)
	if M <= m {
		return nil
	}
	return option.Custom("", []string{"Inducing", "Ms"}, []any{M, m}, func(n []string) string {
		return fmt.Sprintf("%s %d is above %s %d: the M inducing inputs are M of the m rows (give M ≤ every m)",
			n[0], M, n[1], m)
	})
}

// SparseLMLRow is one (m, k, M) figure of SparseLML; its JSON form is a line
// of `bench lml --gp-inference sparse --json`.
type SparseLMLRow struct {
	Kernel      string `json:"kernel"`       // "gp_sparse_bound"
	GPInference string `json:"gp_inference"` // "sparse"
	CPU         string `json:"cpu,omitempty"`
	M           int    `json:"m"`
	K           int    `json:"k"`
	Inducing    int    `json:"inducing"`
	Threads     int    `json:"threads"`
	Chunk       int    `json:"chunk"`
	// Seconds is the time of k bounds and gradients (the minimum of the
	// repetitions after a warm-up); the choice of Z is not in it
	// (SelectSeconds).
	Seconds float64 `json:"seconds,omitempty"`
	// CPUSeconds is the process's CPU time (all threads) per run of the k
	// bounds, averaged over the warm-up and the repetitions: on a shared
	// machine other jobs inflate it less than the wall time.
	CPUSeconds float64 `json:"cpu_seconds,omitempty"`
	GFLOP      float64 `json:"gflop"`            // k·SparseBoundFlops(m, M)/1e9
	GFLOPS     float64 `json:"gflops,omitempty"` // GFLOP / Seconds
	Rate
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

// WriteText writes r as a line of SparseLML's table.
func (r SparseLMLRow) WriteText(w io.Writer) {
	if r.Error != "" {
		fmt.Fprintf(w, "%8d %3d %5d  error: %s\n", r.M, r.K, r.Inducing, r.Error)
		return
	}
	fmt.Fprintf(w, "%8d %3d %5d %7d %11.4f %9.2f %6.1f%% %9.3f %10s %10s %10s %9.2f\n", r.M, r.K, r.Inducing, r.Threads,
		r.Seconds, r.GFLOPS, r.PercentPeak, r.CPUSeconds, formatMB(r.DataBytes, true),
		formatMB(r.BeyondData, r.PeakRSSRow),
		formatMB(r.PeakRSS, r.PeakRSSRow), r.SelectSeconds)
}

// SparseLML times the sparse GP client's work, the Titsias bound and its
// gradient (lml.SparseWorkspace) of k particles on m rows with M inducing
// inputs chosen by lml.SelectInducing, one row per (m, k, M) in that order.
// Each row runs after a reset of the process's peak resident set (VmHWM,
// Linux) with the data already resident, and reports the data's own size
// (X and y, 8·m·(d+1) bytes), its peak RSS and the part of it beyond the RSS
// at the row's start: the workspace and evaluation themselves. A failed row
// says why, and SparseLML returns ErrRowFailed.
func SparseLML(ctx context.Context, cfg SparseLMLConfig, out Output) ([]SparseLMLRow, error) {
	cfg = cfg.withDefaults()
	for _, l := range []struct {
		name string
		vs   []int
	}{{"m", cfg.Ms}, {"k", cfg.Ks}, {"inducing", cfg.Inducing}, {"reps", []int{cfg.Reps}}} {
		if err := checkPositive(l.name, l.vs...); err != nil {
			return nil, err
		}
	}
	if err := cfg.Validate(); err != nil {
		return nil, invalidError{err.Error()}
	}
	model := lml.DefaultModel(lmlD)
	np := model.NumParams()
	prior, err := svgd.Isotropic(model.HyperPriorMean(), 0.5)
	if err != nil {
		return nil, err
	}
	peak, err := bench.MachinePeak()
	if err != nil {
		return nil, err
	}
	cpu := cpuModel()
	out.printf("CPU: %s; %s\n", cpu, peak)
	out.printf("sparse GP client: Titsias bound + gradient of k particles; d=%d, dφ=%d; GFLOP/s counts %s\n",
		lmlD, np, SparseFlopsHelp)
	out.printf("memory: data = X and y; beyond = peak RSS of the row above the RSS at its start (data resident); " +
		"cpu s = process CPU time per run (all threads, mean of warm-up and reps)\n")
	out.printf("%8s %3s %5s %7s %11s %9s %7s %9s %10s %10s %10s %9s\n", "m", "k", "M", "threads", "seconds", "GFLOP/s",
		"% peak", "cpu s", "data", "beyond", "peak RSS", "select s")
	rng := rand.New(rand.NewPCG(11, 12))
	var rows []SparseLMLRow
	for _, m := range cfg.Ms {
		X, y := sparseBenchData(rng, m, lmlD)
		for _, k := range cfg.Ks {
			phis := make([]float64, k*np)
			if err := prior.SampleRows(phis, rng); err != nil {
				return rows, err
			}
			for _, M := range cfg.Inducing {
				if err := ctx.Err(); err != nil {
					return rows, err
				}
				r := sparseBenchRow(cfg, model, X, y, phis, k, M, peak)
				r.CPU = cpu
				out.row(r, r.WriteText)
				rows = append(rows, r)
			}
		}
		X, y = nil, nil
	}
	return rows, rowsErr(rows, func(r SparseLMLRow) bool { return r.Error != "" })
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
func sparseBenchRow(c SparseLMLConfig, model lml.Model, X, y, phis []float64, k, M int, peak bench.Peak) SparseLMLRow {
	d, np, m := model.D, model.NumParams(), len(y)
	r := SparseLMLRow{Kernel: "gp_sparse_bound", GPInference: "sparse", M: m, K: k, Inducing: M,
		DataBytes: 8 * int64(m) * int64(d+1), GFLOP: float64(k) * SparseBoundFlops(m, M) / 1e9}
	t0 := time.Now()
	Z, err := lml.SelectInducing(X, d, M, 1)
	r.SelectSeconds = time.Since(t0).Seconds()
	if err != nil {
		r.Error = err.Error()
		return r
	}
	reset := resetPeakRSS()
	start := procStatusBytes("VmRSS")
	ws, err := lml.NewSparseWorkspace(model, lml.SparseOptions{Threads: c.Threads})
	if err != nil {
		r.Error = err.Error()
		return r
	}
	defer ws.Close()
	r.Threads, r.Chunk = ws.Threads(), ws.Chunk()
	grad := make([]float64, np)
	cpu0 := processCPUSeconds()
	best, errs := bench.Alternate(c.Reps, []bench.Contender{{Name: "sparse", Run: func() error {
		for κ := 0; κ < k; κ++ {
			if _, err := ws.Bound(phis[κ*np:(κ+1)*np], X, y, Z, grad); err != nil {
				return fmt.Errorf("particle %d: %w", κ, err)
			}
		}
		return nil
	}}})
	r.CPUSeconds = (processCPUSeconds() - cpu0) / float64(c.Reps+1)
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
	r.Rate = rate(r.GFLOPS, peak)
	return r
}

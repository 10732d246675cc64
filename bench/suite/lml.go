package suite

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"

	"github.com/pacpfl/pacpfl/asm"
	"github.com/pacpfl/pacpfl/bench"
	"github.com/pacpfl/pacpfl/lml"
	"github.com/pacpfl/pacpfl/svgd"
)

// lmlD is the feature dimension of the LML benchmarks' random data.
const lmlD = 15

// LMLConfig configures LML. Zero fields take the defaults given.
type LMLConfig struct {
	// Ms are the numbers of data points m (DefaultLMLMs).
	Ms []int
	// Ks are the numbers of particles k (DefaultLMLKs).
	Ks []int
	// Splits are the evaluator's core splits to compare, alternated in one
	// process (lml.SplitAuto).
	Splits []lml.Split
	// Threads is the cores the evaluators use (0: GOMAXPROCS).
	Threads int
	// Reps is the repetitions per figure after one warm-up
	// (DefaultLMLReps).
	Reps int
	// MemoryLimit is the bytes the particles evaluated at once may hold in
	// m² buffers (0: lml.DefaultMemoryLimit).
	MemoryLimit int64
	// Levels, if set, runs each split at each SIMD level, alternated (the
	// rows carry the level); else at the level in force.
	Levels []asm.Level
}

// Defaults of LMLConfig and SparseLMLConfig.
var (
	DefaultLMLMs = []int{150, 610, 2000, 5000}
	DefaultLMLKs = []int{1, 4}
)

// DefaultLMLReps is the repetitions per figure of LML and SparseLML.
const DefaultLMLReps = 3

func (c LMLConfig) withDefaults() LMLConfig {
	c.Ms = orDefaultList(c.Ms, DefaultLMLMs)
	c.Ks = orDefaultList(c.Ks, DefaultLMLKs)
	c.Splits = orDefaultList(c.Splits, []lml.Split{lml.SplitAuto})
	c.Reps = orDefault(c.Reps, DefaultLMLReps)
	return c
}

// MemoryBytes is a lower bound of LML's memory: a particle in flight holds
// at least its m×m matrix (K, its factor and its inverse in turn), at the
// largest m.
func (c LMLConfig) MemoryBytes() float64 {
	return float64(lml.WorkspaceBytes(slices.Max(c.withDefaults().Ms), 1))
}

// LMLRow is one split's (and level's) figure at one (m, k) in LML; its JSON
// form is a line of `bench lml --json`.
type LMLRow struct {
	Kernel  string  `json:"kernel"`
	M       int     `json:"m"`
	K       int     `json:"k"`
	Split   string  `json:"split"`
	Level   string  `json:"level,omitempty"` // with levels
	Threads int     `json:"threads"`
	Seconds float64 `json:"seconds,omitempty"`
	GFLOPS  float64 `json:"gflops,omitempty"` // k·m³ / seconds: factor (m³/3) + inverse (2m³/3)
	Rate
	// PeakRSS is the process's peak resident set size during the row, in
	// bytes (VmHWM; 0 where /proc does not report it). PeakRSSRow says
	// whether it was reset before the row (else it is the process's peak
	// so far).
	PeakRSS    int64  `json:"peak_rss_bytes,omitempty"`
	PeakRSSRow bool   `json:"peak_rss_row,omitempty"`
	Error      string `json:"error,omitempty"`
}

// LMLFlops is the O(m³) work LML counts for k particles on m points:
// k·m³ (factor m³/3, inverse 2m³/3).
func LMLFlops(m, k int) float64 { return float64(k) * float64(m) * float64(m) * float64(m) }

// WriteText writes r as a line of LML's table.
func (r LMLRow) WriteText(w io.Writer) {
	label := r.Split
	if r.Level != "" {
		label += "/" + r.Level
	}
	if r.Error != "" {
		fmt.Fprintf(w, "%6d %3d  %-16s error: %s\n", r.M, r.K, label, r.Error)
		return
	}
	fmt.Fprintf(w, "%6d %3d  %-16s %7d %12.6f %10.2f %7.1f%% %10s\n", r.M, r.K, label, r.Threads, r.Seconds, r.GFLOPS,
		r.PercentPeak, formatRSS(r.PeakRSS, r.PeakRSSRow))
}

// LML times one GP client update (Algorithm 2 with b = m): the LML and its
// full gradient for k particles drawn from the hyper-prior, d = 15
// features, lml.DefaultModel's networks, random data; one row per (m, k)
// and split (and level), the splits alternated in one process. Each row
// reports the process's peak RSS while it ran (VmHWM, reset before the row;
// every evaluator's buffers are resident at once). The SIMD level in force
// is restored after. A failed evaluation is reported in its row, and LML
// returns ErrRowFailed.
func LML(ctx context.Context, cfg LMLConfig, out Output) ([]LMLRow, error) {
	cfg = cfg.withDefaults()
	if err := checkPositive("m", cfg.Ms...); err != nil {
		return nil, err
	}
	if err := checkPositive("k", cfg.Ks...); err != nil {
		return nil, err
	}
	if err := checkPositive("reps", cfg.Reps); err != nil {
		return nil, err
	}
	if cfg.MemoryLimit < 0 {
		return nil, invalidf("memory limit %d bytes: want ≥ 0", cfg.MemoryLimit)
	}
	if err := checkLevels(cfg.Levels); err != nil {
		return nil, err
	}
	model := lml.DefaultModel(lmlD)
	np := model.NumParams()
	defer asm.SetLevel(asm.Current())
	prior, err := svgd.Isotropic(model.HyperPriorMean(), 0.5)
	if err != nil {
		return nil, err
	}
	evals, err := newEvaluators(model, cfg)
	if err != nil {
		return nil, err
	}
	peak, err := bench.MachinePeak()
	if err != nil {
		return nil, err
	}
	lmlHeader(out, peak, cfg.Levels, np)
	rng := rand.New(rand.NewPCG(11, 12))
	nl := max(1, len(cfg.Levels)) // contenders per split
	var rows []LMLRow
	for _, m := range cfg.Ms {
		X, y := normals(rng, m*lmlD), normals(rng, m)
		for _, k := range cfg.Ks {
			if err := ctx.Err(); err != nil {
				return rows, err
			}
			phis := make([]float64, k*np)
			if err := prior.SampleRows(phis, rng); err != nil {
				return rows, err
			}
			lmls, grads := make([]float64, k), make([]float64, k*np)
			cs := make([]bench.Contender, len(evals))
			for i, ev := range evals {
				run := func() error { return ev.Evaluate(lmls, grads, phis, X, y) }
				cs[i] = bench.Contender{Name: cfg.Splits[i].String(), Run: run}
			}
			cs = perLevel(cs, cfg.Levels, func(bench.Contender) bool { return true })
			rowReset := resetPeakRSS()
			best, errs := bench.Alternate(cfg.Reps, cs)
			rss := procStatusBytes("VmHWM")
			for i, c := range cs {
				r := LMLRow{Kernel: "gp_client_update", M: m, K: k, Threads: evals[i/nl].Threads(),
					PeakRSS: rss, PeakRSSRow: rowReset && rss > 0}
				r.Split, r.Level = splitLevel(c.Name)
				if errs[i] != nil {
					r.Error = errs[i].Error()
				} else {
					r.Seconds = best[i]
					r.GFLOPS = LMLFlops(m, k) / best[i] / 1e9
					r.Rate = rate(r.GFLOPS, peak)
				}
				out.row(r, r.WriteText)
				rows = append(rows, r)
			}
		}
	}
	return rows, rowsErr(rows, func(r LMLRow) bool { return r.Error != "" })
}

// newEvaluators is one evaluator per split of cfg.
func newEvaluators(model lml.Model, cfg LMLConfig) ([]*lml.Evaluator, error) {
	evals := make([]*lml.Evaluator, len(cfg.Splits))
	for i, s := range cfg.Splits {
		opt := lml.EvaluatorOptions{Threads: cfg.Threads, Split: s, MemoryLimit: cfg.MemoryLimit}
		var err error
		if evals[i], err = lml.NewEvaluator(model, opt); err != nil {
			return nil, err
		}
	}
	return evals, nil
}

// normals is n standard normal draws of rng.
func normals(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}

// lmlHeader writes LML's table header.
func lmlHeader(out Output, peak bench.Peak, levels []asm.Level, np int) {
	printPeak(out, peak)
	if len(levels) > 0 {
		out.printf("SIMD level%s (kernels and cache blocks of each level)\n", levelsPhrase(levels))
	}
	out.printf("one client update = LML + gradient of k particles; d=%d, dφ=%d; "+
		"O(m³) part ≈ m³ FLOP per particle\n", lmlD, np)
	out.printf("%6s %3s  %-16s %7s %12s %10s %8s %10s\n",
		"m", "k", "split", "threads", "seconds", "GFLOP/s", "% peak", "peak RSS")
}

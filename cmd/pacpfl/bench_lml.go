package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/pacpfl/pacpfl/asm"
	"github.com/pacpfl/pacpfl/bench"
	"github.com/pacpfl/pacpfl/lml"
	"github.com/pacpfl/pacpfl/svgd"
)

// `pacpfl bench lml`: one GP client update (Algorithm 2 with b = m): the LML
// and its full gradient for k particles, d = 15 features, networks
// 15→32→32→1 and 15→32→32→2, random data. With several --split values the
// splits are alternated in one process. Each row also reports the peak
// resident set size of the process while it ran (VmHWM, reset before the
// row; with several splits every evaluator's buffers are resident at once).
// With --gp-inference sparse: the sparse client's Titsias bound and its
// gradient instead, one row per (m, k, M) (bench_lml_sparse.go).
func init() {
	registerBench(&benchKernel{
		name:    "lml",
		summary: "GP client update: LML + gradient of k particles on m points (seconds, O(m³) GFLOP/s, % of peak); --gp-inference sparse: the Titsias bound with M inducing inputs",
		run:     runBenchLML,
	})
}

type lmlResult struct {
	Kernel  string  `json:"kernel"`
	M       int     `json:"m"`
	K       int     `json:"k"`
	Split   string  `json:"split"`
	Level   string  `json:"level,omitempty"` // with --levels
	Threads int     `json:"threads"`
	Seconds float64 `json:"seconds,omitempty"`
	GFLOPS  float64 `json:"gflops,omitempty"` // k·m³ / seconds: factor (m³/3) + inverse (2m³/3)
	PeakPct float64 `json:"peak_pct,omitempty"`
	// PeakRSS is the process's peak resident set size during the row, in
	// bytes (VmHWM; 0 where /proc does not report it). PeakRSSRow says
	// whether it was reset before the row (else it is the process's peak
	// so far).
	PeakRSS    int64  `json:"peak_rss_bytes,omitempty"`
	PeakRSSRow bool   `json:"peak_rss_row,omitempty"`
	Error      string `json:"error,omitempty"`
}

func runBenchLML(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("bench lml", stderr)
	ms := intList{150, 610, 2000, 5000}
	ks := intList{1, 4}
	splits := stringList{"auto"}
	fs.Var(&ms, "m", "comma-separated numbers of data points")
	fs.Var(&ks, "k", "comma-separated numbers of particles")
	fs.Var(&splits, "split", "comma-separated core splits to compare: auto, particles, blas")
	threads := fs.Int("threads", 0, "cores to use (0: GOMAXPROCS)")
	asJSON := fs.Bool("json", false, "one JSON object per line instead of a table")
	reps := fs.Int("reps", 3, "repetitions per figure (the minimum is reported), after one warm-up")
	memLimit := fs.Float64("memory-limit", 0, "GiB the particles evaluated at once may hold in m² buffers (0: lml.DefaultMemoryLimit)")
	levelList := levelsFlag(fs)
	mode := fs.String("gp-inference", "exact", "exact: the LML and its gradient by dense Cholesky (O(m³)); "+
		"sparse: the Titsias bound and its gradient with --inducing M inputs (lml.SparseWorkspace; one row per (m, k, M); GFLOP/s counts "+sparseFlopsHelp+
		"; the peak RSS of each row and, apart, the data's size; --m defaults to "+defaultSparseMs.String()+" and --k to 1)")
	inducing := intList{256, 512, 1024}
	fs.Var(&inducing, "inducing", "--gp-inference sparse: comma-separated numbers of inducing inputs M (each at most every --m)")
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	switch *mode {
	case "exact":
		if given["inducing"] {
			return fail(stderr, "bench lml", usagef("--inducing applies to --gp-inference sparse"))
		}
	case "sparse":
		for _, name := range []string{"split", "memory-limit", "levels"} {
			if given[name] {
				return fail(stderr, "bench lml", usagef("--%s applies to --gp-inference exact", name))
			}
		}
	default:
		return fail(stderr, "bench lml", usagef("--gp-inference %q: want exact or sparse (bench lml times one inference; auto chooses per client size)", *mode))
	}
	levels, err := benchLevels(*levelList)
	if err != nil {
		return fail(stderr, "bench lml", usageError{err})
	}
	explicit := len(*levelList) > 0
	if *reps < 1 {
		fmt.Fprintf(stderr, "pacpfl bench lml: --reps %d: want at least 1\n", *reps)
		return exitUsage
	}
	if !(*memLimit >= 0) || *memLimit > 1<<20 {
		fmt.Fprintf(stderr, "pacpfl bench lml: --memory-limit %v: want a number of GiB ≥ 0\n", *memLimit)
		return exitUsage
	}
	if err := checkThreads("--threads", *threads); err != nil {
		return fail(stderr, "bench lml", err)
	}
	if *mode == "sparse" {
		c := &sparseBenchConfig{ms: ms, ks: ks, inducing: inducing, threads: *threads, reps: *reps, asJSON: *asJSON}
		if !given["m"] {
			c.ms = defaultSparseMs
		}
		if !given["k"] {
			c.ks = intList{1}
		}
		return runBenchLMLSparse(c, stdout, stderr)
	}
	if err := checkNames("--split", splits, []string{"auto", "particles", "blas"}); err != nil {
		return fail(stderr, "bench lml", err)
	}
	// A particle in flight holds at least its m×m matrix (K, its factor
	// and its inverse in turn); a lower bound at the largest m.
	if st, ok := checkMemory(stderr, "bench lml", fmt.Sprintf("--m %d", slices.Max(ms)), float64(lml.WorkspaceBytes(slices.Max(ms), 1))); !ok {
		return st
	}
	var splitVals []lml.Split
	for _, s := range splits {
		v, err := lml.ParseSplit(s)
		if err != nil {
			fmt.Fprintf(stderr, "pacpfl bench lml: --split: %v\n", err)
			return exitUsage
		}
		splitVals = append(splitVals, v)
	}

	const d = 15
	model := lml.DefaultModel(d)
	np := model.NumParams()
	defer asm.SetLevel(asm.Current())
	prior, err := svgd.Isotropic(model.HyperPriorMean(), 0.5)
	if err != nil {
		fmt.Fprintf(stderr, "pacpfl bench lml: %v\n", err)
		return exitError
	}
	evals := make([]*lml.Evaluator, len(splitVals))
	for i, s := range splitVals {
		opt := lml.EvaluatorOptions{Threads: *threads, Split: s, MemoryLimit: int64(*memLimit * (1 << 30))}
		if evals[i], err = lml.NewEvaluator(model, opt); err != nil {
			fmt.Fprintf(stderr, "pacpfl bench lml: %v\n", err)
			return exitError
		}
	}

	peak := machinePeak()
	if !*asJSON {
		fmt.Fprintln(stdout, peak.String())
		if explicit {
			fmt.Fprintf(stdout, "SIMD level%s (kernels and cache blocks of each level)\n", levelsPhrase(levels))
		}
		fmt.Fprintf(stdout, "one client update = LML + gradient of k particles; d=%d, dφ=%d; O(m³) part ≈ m³ FLOP per particle\n", d, np)
		fmt.Fprintf(stdout, "%6s %3s  %-16s %7s %12s %10s %8s %10s\n", "m", "k", "split", "threads", "seconds", "GFLOP/s", "% peak", "peak RSS")
	}
	rng := rand.New(rand.NewPCG(11, 12))
	status := exitOK
	for _, m := range ms {
		X := make([]float64, m*d)
		y := make([]float64, m)
		for i := range X {
			X[i] = rng.NormFloat64()
		}
		for i := range y {
			y[i] = rng.NormFloat64()
		}
		for _, k := range ks {
			phis := make([]float64, k*np)
			if err := prior.SampleRows(phis, rng); err != nil {
				fmt.Fprintf(stderr, "pacpfl bench lml: %v\n", err)
				return exitError
			}
			lmls := make([]float64, k)
			grads := make([]float64, k*np)
			cs := make([]bench.Contender, len(evals))
			for i, ev := range evals {
				cs[i] = bench.Contender{
					Name: splitVals[i].String(),
					Run:  func() error { return ev.Evaluate(lmls, grads, phis, X, y) },
				}
			}
			nl := 1 // contenders per split
			if explicit {
				nl = len(levels)
			}
			cs = perLevel(cs, levels, explicit, func(bench.Contender) bool { return true })
			rowReset := resetPeakRSS()
			best, errs := bench.Alternate(*reps, cs)
			rss := peakRSS()
			flops := float64(k) * float64(m) * float64(m) * float64(m)
			for i, c := range cs {
				ev := evals[i/nl]
				r := lmlResult{Kernel: "gp_client_update", M: m, K: k, Threads: ev.Threads(), PeakRSS: rss, PeakRSSRow: rowReset && rss > 0}
				r.Split, r.Level = splitLevel(c.Name)
				label := c.Name
				if errs[i] != nil {
					r.Error = errs[i].Error()
					status = exitError
				} else {
					r.Seconds = best[i]
					r.GFLOPS = flops / best[i] / 1e9
					if p := peak.GFLOPS(); p > 0 {
						r.PeakPct = 100 * r.GFLOPS / p
					}
				}
				if *asJSON {
					bench.JSONLine(stdout, r)
					continue
				}
				if r.Error != "" {
					fmt.Fprintf(stdout, "%6d %3d  %-16s error: %s\n", m, k, label, r.Error)
					continue
				}
				fmt.Fprintf(stdout, "%6d %3d  %-16s %7d %12.6f %10.2f %7.1f%% %10s\n", m, k, label, r.Threads, r.Seconds, r.GFLOPS, r.PeakPct, formatRSS(r.PeakRSS, r.PeakRSSRow))
			}
		}
	}
	return status
}

// resetPeakRSS returns the memory the Go heap no longer uses to the system
// and resets this process's peak resident set size (VmHWM) to its current
// one (Linux: "5" to /proc/self/clear_refs). It reports whether the reset
// worked.
func resetPeakRSS() bool {
	debug.FreeOSMemory()
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// peakRSS returns this process's VmHWM in bytes, 0 if /proc does not
// report it.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || k != "VmHWM" {
			continue
		}
		f := strings.Fields(v) // "12345 kB"
		if len(f) != 2 || f[1] != "kB" {
			return 0
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0
		}
		return n << 10
	}
	return 0
}

// formatRSS prints a peak RSS in GB (10⁹ bytes): "-" if unknown, with a
// "*" when it is the process's peak so far rather than the row's.
func formatRSS(b int64, row bool) string {
	if b <= 0 {
		return "-"
	}
	s := fmt.Sprintf("%.3f GB", float64(b)/1e9)
	if !row {
		s += "*"
	}
	return s
}

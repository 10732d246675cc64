package main

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"slices"

	"github.com/pacpfl/pacpfl/asm"
	"github.com/pacpfl/pacpfl/bench/suite"
	"github.com/pacpfl/pacpfl/lml"
)

// `pacpfl bench lml`: one GP client update (suite.LML) or, with
// --gp-inference sparse, the sparse client's Titsias bound and gradient
// (suite.SparseLML).

func runBenchLML(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("bench lml", stderr)
	ms, ks := intList(slices.Clone(suite.DefaultLMLMs)), intList(slices.Clone(suite.DefaultLMLKs))
	inducing, sparseMs := intList(slices.Clone(suite.DefaultSparseInducing)), intList(suite.DefaultSparseMs)
	splits := stringList{"auto"}
	fs.Var(&ms, "m", "comma-separated numbers of data points")
	fs.Var(&ks, "k", "comma-separated numbers of particles")
	fs.Var(&splits, "split", "comma-separated core splits to compare: auto, particles, blas")
	threads := fs.Int("threads", 0, "cores to use (0: GOMAXPROCS)")
	asJSON, reps := benchFlags(fs, suite.DefaultLMLReps)
	memLimit := fs.Float64("memory-limit", 0,
		"GiB the particles evaluated at once may hold in m² buffers (0: lml.DefaultMemoryLimit)")
	levelsFlag(fs)
	mode := fs.String("gp-inference", "exact", "exact: the LML and its gradient by dense Cholesky (O(m³)); "+
		"sparse: the Titsias bound and its gradient with --inducing M inputs (lml.SparseWorkspace; "+
		"one row per (m, k, M); GFLOP/s counts "+suite.SparseFlopsHelp+"; the peak RSS of each row and, apart, "+
		"the data's size; --m defaults to "+sparseMs.String()+" and --k to 1)")
	fs.Var(&inducing, "inducing",
		"--gp-inference sparse: comma-separated numbers of inducing inputs M (each at most every --m)")
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	levels, err := checkLMLFlags(fs, *mode, *memLimit, splits)
	if *mode == "sparse" {
		cfg := suite.SparseLMLConfig{Inducing: inducing, Threads: *threads, Reps: *reps}
		if flagGiven(fs, "m") {
			sparseMs, cfg.Ms = ms, ms
		}
		if flagGiven(fs, "k") {
			cfg.Ks = ks
		}
		if mMin, MMax := slices.Min(sparseMs), slices.Max(inducing); err == nil && MMax > mMin {
			err = usagef("--inducing %d is above --m %d: the M inducing inputs are M of the m rows "+
				"(give M ≤ every m)", MMax, mMin)
		}
		what := fmt.Sprintf("--m %d --inducing %d", slices.Max(sparseMs), slices.Max(inducing))
		return runSuite(stdout, stderr, "bench lml", *asJSON, err, what, cfg.MemoryBytes(), suite.SparseLML, cfg)
	}
	cfg := suite.LMLConfig{Ms: ms, Ks: ks, Threads: *threads, Reps: *reps, Levels: levels,
		MemoryLimit: int64(*memLimit * (1 << 30))}
	for _, s := range splits {
		v, perr := lml.ParseSplit(s)
		err, cfg.Splits = cmp.Or(err, perr), append(cfg.Splits, v)
	}
	what := fmt.Sprintf("--m %d", slices.Max(ms))
	return runSuite(stdout, stderr, "bench lml", *asJSON, err, what, cfg.MemoryBytes(), suite.LML, cfg)
}

// checkLMLFlags refuses the flags that do not apply to --gp-inference mode
// and bad values of the others, and resolves --levels.
func checkLMLFlags(fs *flag.FlagSet, mode string, memLimit float64, splits stringList) ([]asm.Level, error) {
	switch mode {
	case "exact":
		if flagGiven(fs, "inducing") {
			return nil, usagef("--inducing applies to --gp-inference sparse")
		}
		if err := checkNames("--split", splits, []string{"auto", "particles", "blas"}); err != nil {
			return nil, err
		}
	case "sparse":
		for _, name := range []string{"split", "memory-limit", "levels"} {
			if flagGiven(fs, name) {
				return nil, usagef("--%s applies to --gp-inference exact", name)
			}
		}
	default:
		return nil, usagef("--gp-inference %q: want exact or sparse (bench lml times one inference; "+
			"auto chooses per client size)", mode)
	}
	if !(memLimit >= 0) || memLimit > 1<<20 {
		return nil, usagef("--memory-limit %v: want a number of GiB ≥ 0", memLimit)
	}
	return checkBench(fs, "reps")
}

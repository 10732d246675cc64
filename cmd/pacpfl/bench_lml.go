package main

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/pacpfl/pacpfl/bench/suite"
	"github.com/pacpfl/pacpfl/internal/cli"
	"github.com/pacpfl/pacpfl/lml"
)

// `pacpfl bench lml`: one GP client update (suite.LML) or, with
// --gp-inference sparse, the sparse client's Titsias bound and gradient
// (suite.SparseLML).

func runBenchLML(args []string, stdout, stderr io.Writer) int {
	ms, ks := intList(slices.Clone(suite.DefaultLMLMs)), intList(slices.Clone(suite.DefaultLMLKs))
	inducing, sparseMs := intList(slices.Clone(suite.DefaultSparseInducing)), intList(suite.DefaultSparseMs)
	splits := stringList{"auto"}
	var exact suite.LMLConfig
	var sparse suite.SparseLMLConfig
	b := newBenchCmd("lml", stdout, stderr, &exact.Reps, suite.DefaultLMLReps, &exact.Levels)
	b.fs.Var(&ms, "m", "comma-separated numbers of data points")
	b.fs.Var(&ks, "k", "comma-separated numbers of particles")
	b.fs.Var(&splits, "split", "comma-separated core splits to compare: auto, particles, blas")
	b.fs.IntVar(&exact.Threads, "threads", 0, "cores to use (0: GOMAXPROCS)")
	memLimit := b.fs.Float64("memory-limit", 0,
		"GiB the particles evaluated at once may hold in m² buffers (0: lml.DefaultMemoryLimit)")
	mode := b.fs.String("gp-inference", "exact", "exact: the LML and its gradient by dense Cholesky (O(m³)); "+
		"sparse: the Titsias bound and its gradient with --inducing M inputs (lml.SparseWorkspace; "+
		"one row per (m, k, M); GFLOP/s counts "+suite.SparseFlopsHelp+"; the peak RSS of each row and, apart, "+
		"the data's size; --m defaults to "+sparseMs.String()+" and --k to 1)")
	b.fs.Var(&inducing, "inducing",
		"--gp-inference sparse: comma-separated numbers of inducing inputs M (each at most every --m)")
	run := benchOf(suite.LML, &exact)
	check := func() error { return checkLMLFlags(b, *mode, *memLimit, splits) }
	return b.run(args, check, func() (string, float64, error) {
		if *mode == "exact" {
			exact.Ms, exact.Ks, exact.MemoryLimit = ms, ks, int64(*memLimit*(1<<30))
			for _, s := range splits { // checked by checkLMLFlags
				v, _ := lml.ParseSplit(s)
				exact.Splits = append(exact.Splits, v)
			}
			return fmt.Sprintf("--m %d", slices.Max(ms)), exact.MemoryBytes(), nil
		}
		sparse = suite.SparseLMLConfig{Inducing: inducing, Threads: exact.Threads, Reps: exact.Reps}
		if cli.Given(b.fs, "m") {
			sparseMs, sparse.Ms = ms, ms
		}
		if cli.Given(b.fs, "k") {
			sparse.Ks = ks
		}
		if err := sparse.Validate(); err != nil {
			return "", 0, fieldUsage(err, flagsOf(map[string]string{"Ms": "m"}))
		}
		run = benchOf(suite.SparseLML, &sparse)
		what := fmt.Sprintf("--m %d --inducing %d", slices.Max(sparseMs), slices.Max(inducing))
		return what, sparse.MemoryBytes(), nil
	}, func(ctx context.Context, out suite.Output) error { return run(ctx, out) })
}

// checkLMLFlags refuses the flags that do not apply to --gp-inference mode
// and bad values of the others, and resolves --levels.
func checkLMLFlags(b *benchCmd, mode string, memLimit float64, splits stringList) error {
	switch mode {
	case "exact":
		if cli.Given(b.fs, "inducing") {
			return usagef("--inducing applies to --gp-inference sparse")
		}
		if err := checkNames("--split", splits, []string{"auto", "particles", "blas"}); err != nil {
			return err
		}
	case "sparse":
		for _, name := range []string{"split", "memory-limit", "levels"} {
			if cli.Given(b.fs, name) {
				return usagef("--%s applies to --gp-inference exact", name)
			}
		}
	default:
		return usagef("--gp-inference %q: want exact or sparse (bench lml times one inference; "+
			"auto chooses per client size)", mode)
	}
	if !(memLimit >= 0) || memLimit > 1<<20 {
		return usagef("--memory-limit %v: want a number of GiB ≥ 0", memLimit)
	}
	return b.check("reps")
}

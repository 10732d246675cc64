package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/pacpfl/pacpfl/asm"
	"github.com/pacpfl/pacpfl/bench/suite"
	"github.com/pacpfl/pacpfl/internal/cli"
	"github.com/pacpfl/pacpfl/internal/flagvalue"
	"github.com/pacpfl/pacpfl/internal/sysmem"
)

// `pacpfl bench <kernel>`: each kernel binds its flags to a config of
// package bench/suite, which measures and writes the table or JSON lines.

// benchKernels are the `pacpfl bench <name>` targets; each parses its own
// flags.
var benchKernels = cli.Table{Width: 10,
	Head: "usage: pacpfl bench <kernel> [flags]   (or: pacpfl bench all [--json] [--reps R])\n\nkernels:\n"}

func init() {
	for _, k := range []command{
		{"gemm", "DGEMM C = A·B per size (square or MxNxK) and BLAS backend (GFLOP/s, % of peak)", runBenchGemm},
		{"cholesky", "Cholesky Dpotrf / inverse Dpotri per size and LAPACK backend (GFLOP/s, % of peak)",
			runBenchCholesky},
		{"exp", "vector exp: asm.Exp at the current SIMD level (or --levels) vs a math.Exp loop (elements/s)",
			runBenchExp},
		{"sekernel", "m×m SE kernel matrix from m×2 features: fused vs SqDist+Exp (at --levels) vs generic",
			runBenchSEKernel},
		{"conv", "Bayesian CNN forward+backward: whole net, conv2, L-sample step stacked vs separate (ms)",
			runBenchConv},
		{"bnn", "BNN client update (LML (38) + gradient of k particles) and its parts vs conv's Bayesian step (ms)",
			runBenchBNN},
		{"lml", "GP client update: LML + gradient of k particles on m points (seconds, O(m³) GFLOP/s, % of peak); " +
			"--gp-inference sparse: the Titsias bound with M inducing inputs", runBenchLML},
		{"rpc", "gRPC transport on loopback: round overhead per client, 25 MB payload rate, 100 concurrent clients",
			runBenchRPC},
	} {
		benchKernels.Add(cli.Command{Name: k.name, Summary: k.summary, Run: k.run})
	}
	register(&command{
		name:    "bench",
		summary: "benchmark kernels and backends side by side (pacpfl bench -h lists them)",
		run:     runBench,
	})
}

func runBench(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		benchKernels.WriteUsage(stderr)
		return exitUsage
	}
	if isHelp(args[0]) {
		benchKernels.WriteUsage(stdout)
		return exitOK
	}
	if args[0] == "all" {
		// Every kernel with its default sizes; the shared flags, checked first, pass through.
		var reps int
		b := newBenchCmd("all", stdout, stderr, &reps, suite.DefaultReps, nil)
		if st, ok := parseFlags(b.fs, args[1:], false); !ok {
			return st
		}
		if err := b.check("reps"); err != nil {
			return fail(stderr, "bench all", err)
		}
		status := exitOK
		for _, n := range benchKernels.Names() {
			fmt.Fprintf(stdout, "== bench %s\n", n)
			k, _ := benchKernels.Lookup(n)
			status = max(status, k.Run(args[1:], stdout, stderr))
		}
		return status
	}
	k, ok := benchKernels.Lookup(args[0])
	if !ok {
		fmt.Fprintf(stderr, "pacpfl bench: unknown kernel %q\n\n", args[0])
		benchKernels.WriteUsage(stderr)
		return exitUsage
	}
	return k.Run(args[1:], stdout, stderr)
}

// intList and stringList are the flag.Values of comma-separated lists.
type (
	intList    = flagvalue.Ints
	stringList = flagvalue.Strings
)

// benchCmd is the flag set of one `pacpfl bench <kernel>` with the flags
// every kernel has, --json and --reps, and --levels where it applies.
type benchCmd struct {
	fs             *flag.FlagSet
	name           string
	json           bool
	levelNames     stringList
	levels         *[]asm.Level // where check puts the resolved --levels; nil: no --levels
	stdout, stderr io.Writer
}

// newBenchCmd registers the shared flags, --reps into reps (default def)
// and, if levels is not nil, --levels into it.
func newBenchCmd(kernel string, stdout, stderr io.Writer, reps *int, def int, levels *[]asm.Level) *benchCmd {
	b := &benchCmd{fs: newFlagSet("bench "+kernel, stderr), name: "bench " + kernel, levels: levels,
		stdout: stdout, stderr: stderr}
	b.fs.BoolVar(&b.json, "json", false, "one JSON object per line instead of a table")
	b.fs.IntVar(reps, "reps", def, "repetitions per figure (the minimum is reported), after one warm-up")
	if levels != nil {
		b.fs.Var(&b.levelNames, "levels", "comma-separated SIMD levels to alternate in this one process, or all "+
			"(default: the current level)")
	}
	return b
}

// check refuses the named integer flags below 1 and --threads beyond the
// machine, and resolves --levels.
func (b *benchCmd) check(positive ...string) error {
	if err := flagvalue.CheckPositive(b.fs, positive...); err != nil {
		return asUsage(err)
	}
	if f := b.fs.Lookup("threads"); f != nil {
		if err := checkThreads("--threads", f.Value.(flag.Getter).Get().(int)); err != nil {
			return err
		}
	}
	if b.levels != nil {
		ls, err := suite.ParseLevels(b.levelNames)
		if err != nil {
			return usagef("--levels %s: %v", &b.levelNames, err)
		}
		*b.levels = ls
	}
	return nil
}

// positive is check of the named flags, for run.
func (b *benchCmd) positive(names ...string) func() error {
	return func() error { return b.check(names...) }
}

// run parses args, checks them (check, then sized: what it names needs
// bytes, refused beyond the available memory) and runs bench. It returns
// exit status 2 for bad flags or a configuration the suite refuses, 1 for
// another error (printed) or a failed row (suite.ErrRowFailed: the row says
// why), else 0.
func (b *benchCmd) run(args []string, check func() error, sized func() (what string, bytes float64, err error),
	bench func(context.Context, suite.Output) error) int {
	if st, ok := parseFlags(b.fs, args, false); !ok {
		return st
	}
	err := check()
	if err == nil {
		var what string
		var bytes float64
		if what, bytes, err = sized(); err == nil {
			err = memoryError(what, bytes)
		}
	}
	if err == nil {
		err = bench(context.Background(), suite.Output{W: b.stdout, JSON: b.json, Notes: b.stderr})
		if errors.Is(err, suite.ErrInvalid) {
			err = usageError{err}
		} else if errors.Is(err, suite.ErrRowFailed) {
			return exitError
		}
	}
	if err != nil {
		return fail(b.stderr, b.name, err)
	}
	return exitOK
}

// benchOf is the suite benchmark f on the config cfg points to when it runs.
func benchOf[C, R any](f func(context.Context, C, suite.Output) ([]R, error), cfg *C) func(context.Context,
	suite.Output) error {
	return func(ctx context.Context, out suite.Output) error { _, err := f(ctx, *cfg, out); return err }
}

// availableMemory is sysmem.Available; a variable so tests can pretend to be
// a small machine.
var availableMemory = sysmem.Available

// memoryError is sysmem.Check against availableMemory as a usage error (nil
// if it fits).
func memoryError(what string, bytes float64) error {
	return asUsage(sysmem.Check(what, bytes, availableMemory()))
}

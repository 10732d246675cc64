package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/pacpfl/pacpfl/asm"
	"github.com/pacpfl/pacpfl/bench/suite"
	"github.com/pacpfl/pacpfl/internal/flagvalue"
)

// `pacpfl bench <kernel>`: each kernel parses its flags into a config of
// package bench/suite, which measures and writes the table or JSON lines.

// benchKernel is one `pacpfl bench <name>` target. run parses its own flags.
type benchKernel struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

var benchKernels = map[string]benchKernel{
	"gemm":     {"DGEMM C = A·B per size (square or MxNxK) and BLAS backend (GFLOP/s, % of peak)", runBenchGemm},
	"cholesky": {"Cholesky Dpotrf / inverse Dpotri per size and LAPACK backend (GFLOP/s, % of peak)", runBenchCholesky},
	"exp": {"vector exp: asm.Exp at the current SIMD level (or --levels) vs a math.Exp loop (elements/s)",
		runBenchExp},
	"sekernel": {"m×m SE kernel matrix from m×2 features: fused vs SqDist+Exp (at --levels) vs generic",
		runBenchSEKernel},
	"conv": {"Bayesian CNN forward+backward: whole net, conv2, L-sample step stacked vs separate (ms)",
		runBenchConv},
	"bnn": {"BNN client update (LML (38) + gradient of k particles) and its parts vs conv's Bayesian step (ms)",
		runBenchBNN},
	"lml": {"GP client update: LML + gradient of k particles on m points (seconds, O(m³) GFLOP/s, % of peak); " +
		"--gp-inference sparse: the Titsias bound with M inducing inputs", runBenchLML},
	"rpc": {"gRPC transport on loopback: round overhead per client, 25 MB payload rate, 100 concurrent clients",
		runBenchRPC},
}

func benchNames() []string { return slices.Sorted(maps.Keys(benchKernels)) }

func benchUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: pacpfl bench <kernel> [flags]   (or: pacpfl bench all [--json] [--reps R])")
	fmt.Fprintln(w, "\nkernels:")
	for _, n := range benchNames() {
		fmt.Fprintf(w, "  %-10s %s\n", n, benchKernels[n].summary)
	}
}

func init() {
	register(&command{
		name:    "bench",
		summary: "benchmark kernels and backends side by side (pacpfl bench -h lists them)",
		run:     runBench,
	})
}

func runBench(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		benchUsage(stderr)
		return exitUsage
	}
	if isHelp(args[0]) {
		benchUsage(stdout)
		return exitOK
	}
	if args[0] == "all" {
		// Every kernel with its default sizes; the shared flags, checked first, pass through.
		fs := newFlagSet("bench all", stderr)
		benchFlags(fs, suite.DefaultReps)
		if st, ok := parseFlags(fs, args[1:], false); !ok {
			return st
		}
		if _, err := checkBench(fs, "reps"); err != nil {
			return fail(stderr, "bench all", err)
		}
		status := exitOK
		for _, n := range benchNames() {
			fmt.Fprintf(stdout, "== bench %s\n", n)
			status = max(status, benchKernels[n].run(args[1:], stdout, stderr))
		}
		return status
	}
	b, ok := benchKernels[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "pacpfl bench: unknown kernel %q\n\n", args[0])
		benchUsage(stderr)
		return exitUsage
	}
	return b.run(args[1:], stdout, stderr)
}

// intList and stringList are the flag.Values of comma-separated lists.
type (
	intList    = flagvalue.Ints
	stringList = flagvalue.Strings
)

// benchFlags registers the flags every kernel has: --json and --reps.
func benchFlags(fs *flag.FlagSet, reps int) (*bool, *int) {
	return fs.Bool("json", false, "one JSON object per line instead of a table"),
		fs.Int("reps", reps, "repetitions per figure (the minimum is reported), after one warm-up")
}

// levelsFlag registers --levels on fs (resolved by checkBench).
func levelsFlag(fs *flag.FlagSet) {
	fs.Var(&stringList{}, "levels", "comma-separated SIMD levels to alternate in this one process, or all "+
		"(default: the current level)")
}

// checkBench refuses fs's named integer flags below 1 and its --threads
// beyond the machine, and resolves its --levels (nil when not given).
func checkBench(fs *flag.FlagSet, positive ...string) ([]asm.Level, error) {
	for _, name := range positive {
		if v, err := strconv.Atoi(fs.Lookup(name).Value.String()); err != nil || v < 1 {
			return nil, usagef("--%s %s: want at least 1", name, fs.Lookup(name).Value)
		}
	}
	if f := fs.Lookup("threads"); f != nil {
		if err := checkThreads("--threads", f.Value.(flag.Getter).Get().(int)); err != nil {
			return nil, err
		}
	}
	f := fs.Lookup("levels")
	if f == nil {
		return nil, nil
	}
	ls, err := suite.ParseLevels(*f.Value.(*stringList))
	if err != nil {
		return nil, usagef("--levels %s: %v", f.Value, err)
	}
	return ls, nil
}

// flagGiven reports whether the flag name was set on the command line.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// runSuite runs bench, a benchmark of package suite, on cfg after two
// checks: err, from the flags, and the memory (memoryError; what names the
// size). It returns exit status 2 for bad flags or a configuration the suite
// refuses, 1 for another error (printed) or a failed row (suite.ErrRowFailed:
// the row says why), else 0.
func runSuite[C, R any](stdout, stderr io.Writer, cmd string, asJSON bool, err error, what string, bytes float64,
	bench func(context.Context, C, suite.Output) ([]R, error), cfg C) int {
	if err == nil {
		err = memoryError(what, bytes)
	}
	if err == nil {
		_, err = bench(context.Background(), cfg, suite.Output{W: stdout, JSON: asJSON, Notes: stderr})
		if errors.Is(err, suite.ErrInvalid) {
			err = usageError{err}
		} else if errors.Is(err, suite.ErrRowFailed) {
			return exitError
		}
	}
	if err != nil {
		return fail(stderr, cmd, err)
	}
	return exitOK
}

// availableMemory is this machine's MemAvailable in bytes (/proc/meminfo), 0
// when unknown; a variable so tests can pretend to be a small machine.
var availableMemory = func() float64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemAvailable:" {
			if kb, err := strconv.ParseFloat(f[1], 64); err == nil {
				return kb * 1024
			}
		}
	}
	return 0
}

// checkMemory refuses a size whose buffers cannot fit in the available
// memory. Go cannot recover from a failed allocation (the process dies with
// "fatal error: out of memory" and a stack dump), or the kernel's OOM killer
// ends it, so an absurd --n must be caught before anything is allocated.
// bytes is a lower bound of what the benchmark holds at once.
func checkMemory(stderr io.Writer, cmd, what string, bytes float64) (status int, ok bool) {
	if err := memoryError(what, bytes); err != nil {
		fmt.Fprintf(stderr, "pacpfl %s: %v\n", cmd, err)
		return exitUsage, false
	}
	return exitOK, true
}

// memoryError is checkMemory's test as a usage error (nil if it fits).
func memoryError(what string, bytes float64) error {
	avail := availableMemory()
	if avail <= 0 || bytes <= avail {
		return nil
	}
	return usagef("%s needs at least %.3g GiB, but only %.3g GiB of memory is available",
		what, bytes/(1<<30), avail/(1<<30))
}

package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/pacpfl/pacpfl/bench"
)

// benchKernel is one `pacpfl bench <name>` target. run parses its own flags.
type benchKernel struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

var benchKernels = map[string]*benchKernel{}

func registerBench(b *benchKernel) {
	if _, dup := benchKernels[b.name]; dup {
		panic("pacpfl: duplicate bench " + b.name)
	}
	benchKernels[b.name] = b
}

func benchNames() []string {
	names := make([]string, 0, len(benchKernels))
	for n := range benchKernels {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

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
		run: func(args []string, stdout, stderr io.Writer) int {
			if len(args) == 0 {
				benchUsage(stderr)
				return exitUsage
			}
			switch args[0] {
			case "-h", "--help", "-help", "help":
				benchUsage(stdout)
				return exitOK
			case "all":
				// Every kernel with its default sizes; the shared flags pass
				// through. They are checked first: a kernel-specific flag, or
				// a bad --reps, used to surface only after the kernels that
				// accepted it had run, once per kernel.
				fs := newFlagSet("bench all", stderr)
				fs.Bool("json", false, "one JSON object per line instead of a table")
				reps := fs.Int("reps", 5, "repetitions per figure (the minimum is reported), after one warm-up")
				if st, ok := parseFlags(fs, args[1:], false); !ok {
					return st
				}
				if *reps < 1 {
					fmt.Fprintf(stderr, "pacpfl bench all: --reps %d: want at least 1\n", *reps)
					return exitUsage
				}
				status := exitOK
				for _, n := range benchNames() {
					fmt.Fprintf(stdout, "== bench %s\n", n)
					if st := benchKernels[n].run(args[1:], stdout, stderr); st != exitOK {
						status = st
					}
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
		},
	})
}

// intList is a flag.Value for comma-separated positive integers ("500,1000").
type intList []int

func (l *intList) String() string {
	s := make([]string, len(*l))
	for i, v := range *l {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ",")
}

func (l *intList) Set(v string) error {
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, n)
	}
	*l = out
	return nil
}

// stringList is a flag.Value for comma-separated names ("native,gonum").
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(v string) error {
	var out []string
	for _, f := range strings.Split(v, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return fmt.Errorf("empty list")
	}
	*l = out
	return nil
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
	return usagef("%s needs at least %.3g GiB, but only %.3g GiB of memory is available", what, bytes/(1<<30), avail/(1<<30))
}

// machinePeak is bench.MachinePeak in a process whose start-up check
// (configError) has already refused a bad PACPFL_CPU_GHZ, so an error here
// is a broken invariant, not a user mistake.
func machinePeak() bench.Peak {
	p, err := bench.MachinePeak()
	if err != nil {
		panic("pacpfl: " + err.Error() + " (missed by the start-up check)")
	}
	return p
}

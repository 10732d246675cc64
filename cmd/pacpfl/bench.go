package main

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
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
				// Every kernel with its default sizes; the shared flags pass through.
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

package main

import (
	"fmt"
	"io"
	"time"

	"github.com/pacpfl/pacpfl/bench"
	"github.com/pacpfl/pacpfl/wisdom"
)

// runTuneBLAS is `pacpfl tune blas`: measure the native GEMM's kernel,
// blocks and shared-B rule here (wisdom.Tune) and write the wisdom file.
func runTuneBLAS(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("tune blas", stderr)
	budget := fs.Duration("budget", 2*time.Minute, "wall time of the search (the winner's final check against the defaults comes after)")
	sizes := intList{1000, 2000}
	fs.Var(&sizes, "n", "square GEMM sizes every candidate is timed on (16 to 8000)")
	reps := fs.Int("reps", 3, "alternated timings per comparison (the minimum is kept)")
	threads := fs.Int("threads", 0, "goroutines of the measured GEMMs (0: GOMAXPROCS)")
	out := fs.String("out", "", "wisdom file to write (default: "+wisdom.EnvVar+", else pacpfl/wisdom.json in the user's cache directory; - prints it)")
	quiet := fs.Bool("quiet", false, "no line per comparison on stderr")
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	if *budget <= 0 || *reps < 1 || *reps > 1000 {
		return fail(stderr, "tune blas", usagef("--budget %v and --reps %d must be positive (reps at most 1000)", *budget, *reps))
	}
	if err := checkThreads("--threads", *threads); err != nil {
		return fail(stderr, "tune blas", err)
	}
	path := *out
	if path == "" {
		p, off, err := wisdom.Path()
		if err != nil {
			return fail(stderr, "tune blas", usagef("%v; give --out", err))
		}
		if off {
			return fail(stderr, "tune blas", usagef("%s=off: give --out FILE to write a wisdom file", wisdom.EnvVar))
		}
		path = p
	}
	if *out != "" && *out != "-" {
		if err := checkOutput("--out", path); err != nil {
			return fail(stderr, "tune blas", err)
		}
	}
	peak, err := bench.MachinePeak()
	if err != nil {
		return fail(stderr, "tune blas", err)
	}
	o := wisdom.TuneOptions{Budget: *budget, N: sizes, Reps: *reps, Threads: *threads, Tool: "pacpfl " + Version}
	if !*quiet {
		o.Log = stderr
	}
	ctx, stop := signalContext()
	defer stop()
	f, err := wisdom.Tune(ctx, o)
	if err != nil {
		return fail(stderr, "tune blas", err)
	}
	f.WriteReport(stdout, peak)
	if err := wisdom.WriteFile(stdout, path, f); err != nil {
		return fail(stderr, "tune blas", err)
	}
	if path != "-" {
		fmt.Fprintf(stdout, "wrote %s (pacpfl reads it at start-up; %s=off ignores it)\n", path, wisdom.EnvVar)
	}
	return exitOK
}

package main

import (
	"errors"
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
	o := wisdom.TuneOptions{N: intList{1000, 2000}, Tool: "pacpfl " + Version}
	fs.DurationVar(&o.Budget, "budget", 2*time.Minute,
		"wall time of the search (the winner's final check against the defaults comes after)")
	fs.Var((*intList)(&o.N), "n", "square GEMM sizes every candidate is timed on (16 to 8000)")
	fs.IntVar(&o.Reps, "reps", 3, "alternated timings per comparison (the minimum is kept)")
	fs.IntVar(&o.Threads, "threads", 0, "goroutines of the measured GEMMs (0: GOMAXPROCS)")
	out := fs.String("out", "", "wisdom file to write (default: "+wisdom.EnvVar+", else pacpfl/wisdom.json in the "+
		"user's cache directory; - prints it)")
	quiet := fs.Bool("quiet", false, "no line per comparison on stderr")
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	if o.Budget <= 0 || o.Reps < 1 || o.Reps > 1000 {
		return fail(stderr, "tune blas",
			usagef("--budget %v and --reps %d must be positive (reps at most 1000)", o.Budget, o.Reps))
	}
	if err := checkThreads("--threads", o.Threads); err != nil {
		return fail(stderr, "tune blas", err)
	}
	path, err := wisdom.WritePath(*out)
	if errors.Is(err, wisdom.ErrOff) {
		return fail(stderr, "tune blas", usagef("%s=off: give --out FILE to write a wisdom file", wisdom.EnvVar))
	} else if err != nil {
		return fail(stderr, "tune blas", usagef("%v; give --out", err))
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

package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"

	"gonum.org/v1/gonum/blas"

	"github.com/pacpfl/pacpfl/asm"
	"github.com/pacpfl/pacpfl/bench"
	"github.com/pacpfl/pacpfl/cholesky"
)

// `pacpfl bench cholesky`: Dpotrf (or Dpotri) of an n×n SPD matrix, lower
// triangle, row-major, on each LAPACK backend, alternated within each
// repetition; minimum of R runs after one warm-up. The copy of the input
// before each run is not timed.
func init() {
	registerBench(&benchKernel{
		name:    "cholesky",
		summary: "Cholesky Dpotrf / inverse Dpotri per size and LAPACK backend (GFLOP/s, % of peak)",
		run:     runBenchCholesky,
	})
}

func runBenchCholesky(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("bench cholesky", stderr)
	sizes := intList{500, 1000, 2000, 4000}
	backends := stringList(cholesky.Backends())
	fs.Var(&sizes, "n", "comma-separated matrix orders")
	fs.Var(&backends, "backends", "comma-separated LAPACK backends ("+strings.Join(cholesky.KnownBackends(), ", ")+")")
	op := fs.String("op", "potrf", "potrf (factorization, n³/3 flop) or potri (inverse from the factor, 2n³/3 flop)")
	asJSON := fs.Bool("json", false, "one JSON object per line instead of a table")
	reps := fs.Int("reps", 5, "repetitions per figure (the minimum is reported), after one warm-up")
	threads := fs.Int("threads", 0, "threads of every backend (0: GOMAXPROCS)")
	levelList := levelsFlag(fs)
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	levels, err := benchLevels(*levelList)
	if err != nil {
		return fail(stderr, "bench cholesky", usageError{err})
	}
	if *op != "potrf" && *op != "potri" {
		fmt.Fprintf(stderr, "pacpfl bench cholesky: --op %q: want potrf or potri\n", *op)
		return exitUsage
	}
	sw := &backendSweep{cmd: "bench cholesky", kernel: "cholesky", op: *op, json: *asJSON, stdout: stdout, stderr: stderr}
	lookup := func(name string) error { _, err := cholesky.Backend(name); return err }
	if st, ok := sw.checkArgs(*reps, *threads, backends, cholesky.KnownBackends(), cholesky.Backends(), lookup); !ok {
		return st
	}

	// At least the matrix and one working copy, at the largest order.
	nmax := float64(slices.Max(sizes))
	if st, ok := checkMemory(stderr, "bench cholesky", fmt.Sprintf("--n %d", slices.Max(sizes)), 8*nmax*nmax*2); !ok {
		return st
	}

	var names []string
	var impls []cholesky.Lapack
	for _, name := range backends {
		impl, err := cholesky.Backend(name)
		if err != nil { // checked above; a broken invariant
			return fail(stderr, sw.cmd, err)
		}
		names = append(names, name)
		impls = append(impls, impl)
	}
	// The potri input, a Cholesky factor, is made by the native backend.
	native, err := cholesky.Backend("native")
	if err != nil {
		return fail(stderr, sw.cmd, err)
	}
	restore, err := sw.setThreads(*threads, names)
	if err != nil {
		return fail(stderr, sw.cmd, err)
	}
	defer restore()
	defer asm.SetLevel(asm.Current())
	sw.levels = levelsNote(levels, len(*levelList) > 0)
	sw.header(backends)
	if slices.Contains(names, "gonum") && slices.Max(sizes) >= 4000 {
		fmt.Fprintln(stderr, "note: gonum at n >= 4000 takes many seconds per run; it is measured anyway")
	}

	rnd := rand.New(rand.NewPCG(3, 4))
	for _, n := range sizes {
		input := diagDominantSPD(rnd, n)
		if *op == "potri" && !native.Dpotrf(blas.Lower, n, input, n) {
			fmt.Fprintf(stderr, "pacpfl bench cholesky: factoring the potri input failed at n=%d\n", n)
			return exitError
		}
		contenders := make([]bench.Contender, len(impls))
		for i := range impls {
			impl, w := impls[i], make([]float64, n*n)
			contenders[i] = bench.Contender{
				Name:  names[i],
				Setup: func() { copy(w, input) },
				Run: func() error {
					var ok bool
					if *op == "potrf" {
						ok = impl.Dpotrf(blas.Lower, n, w, n)
					} else {
						ok = impl.Dpotri(blas.Lower, n, w, n)
					}
					if !ok {
						return fmt.Errorf("D%s reported failure on an SPD matrix", *op)
					}
					return nil
				},
			}
		}
		contenders = perLevel(contenders, levels, len(*levelList) > 0, isNative)
		best, errs := bench.Alternate(*reps, contenders)
		flops := float64(n) * float64(n) * float64(n) / 3
		if *op == "potri" {
			flops *= 2
		}
		sw.rows(n, contenderNames(contenders), best, errs, flops)
	}
	return exitOK
}

// diagDominantSPD returns a random symmetric n×n matrix with off-diagonal
// entries in (−1, 1) and n on the diagonal: strictly diagonally dominant with
// a positive diagonal, hence SPD, and made in O(n²).
func diagDominantSPD(rnd *rand.Rand, n int) []float64 {
	a := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			v := rnd.Float64()*2 - 1
			a[i*n+j], a[j*n+i] = v, v
		}
		a[i*n+i] = float64(n)
	}
	return a
}

package main

import (
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"

	"gonum.org/v1/gonum/blas"

	"github.com/pacpfl/pacpfl/asm"
	"github.com/pacpfl/pacpfl/bench"
	"github.com/pacpfl/pacpfl/linalg"
)

// `pacpfl bench gemm`: DGEMM C = A·B on each BLAS backend, square (--n) or
// of any shape (--shapes MxNxK), alternated within each repetition, minimum
// of R runs after one warm-up.
func init() {
	registerBench(&benchKernel{
		name:    "gemm",
		summary: "DGEMM C = A·B per size (square or MxNxK) and BLAS backend (GFLOP/s, % of peak)",
		run:     runBenchGemm,
	})
}

func runBenchGemm(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("bench gemm", stderr)
	sizes := intList{500, 1000, 2000, 4000}
	backends := stringList(linalg.Backends())
	fs.Var(&sizes, "n", "comma-separated matrix orders")
	var shapes shapeList
	fs.Var(&shapes, "shapes", "comma-separated shapes MxNxK (C is M×N, the inner dimension K), measured after --n's orders (with --shapes alone, only these)")
	fs.Var(&backends, "backends", "comma-separated BLAS backends ("+strings.Join(linalg.KnownBackends(), ", ")+")")
	asJSON := fs.Bool("json", false, "one JSON object per line instead of a table")
	reps := fs.Int("reps", 5, "repetitions per figure (the minimum is reported), after one warm-up")
	threads := fs.Int("threads", 0, "threads of every backend (0: GOMAXPROCS)")
	levelList := levelsFlag(fs)
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	levels, err := benchLevels(*levelList)
	if err != nil {
		return fail(stderr, "bench gemm", usageError{err})
	}
	sw := &backendSweep{cmd: "bench gemm", kernel: "gemm", json: *asJSON, stdout: stdout, stderr: stderr}
	lookup := func(name string) error { _, err := linalg.Backend(name); return err }
	if st, ok := sw.checkArgs(*reps, *threads, backends, linalg.KnownBackends(), linalg.Backends(), lookup); !ok {
		return st
	}

	nGiven := false
	fs.Visit(func(f *flag.Flag) { nGiven = nGiven || f.Name == "n" })
	var all []gemmShape
	if nGiven || len(shapes) == 0 {
		for _, n := range sizes {
			all = append(all, gemmShape{n, n, n})
		}
	}
	all = append(all, shapes...)
	// A, B and one C per backend, at the largest shape.
	for _, sh := range all {
		m, n, k := float64(sh.m), float64(sh.n), float64(sh.k)
		if st, ok := checkMemory(stderr, "bench gemm", "shape "+sh.String(), 8*(m*k+k*n+m*n*float64(len(backends)))); !ok {
			return st
		}
	}

	var names []string
	var impls []blas.Float64
	for _, name := range backends {
		impl, err := linalg.Backend(name)
		if err != nil { // checked above; a broken invariant
			return fail(stderr, sw.cmd, err)
		}
		names = append(names, name)
		impls = append(impls, impl)
	}
	restore, err := sw.setThreads(*threads, names)
	if err != nil {
		return fail(stderr, sw.cmd, err)
	}
	defer restore()
	defer asm.SetLevel(asm.Current())
	sw.levels = levelsNote(levels, len(*levelList) > 0)
	sw.header(backends)
	if slices.Contains(names, "gonum") && slices.ContainsFunc(all, func(sh gemmShape) bool { return sh.m*sh.n*sh.k >= 4000*4000*4000 }) {
		fmt.Fprintln(stderr, "note: gonum at n >= 4000 takes minutes per run; it is measured anyway")
	}

	rnd := rand.New(rand.NewPCG(1, 2))
	for _, sh := range all {
		m, n, k := sh.m, sh.n, sh.k
		a, b := randomFloats(rnd, m*k), randomFloats(rnd, k*n)
		contenders := make([]bench.Contender, len(impls))
		for i := range impls {
			impl, c := impls[i], make([]float64, m*n)
			contenders[i] = bench.Contender{Name: names[i], Run: func() error {
				impl.Dgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, a, k, b, n, 0, c, n)
				return nil
			}}
		}
		contenders = perLevel(contenders, levels, len(*levelList) > 0, isNative)
		best, errs := bench.Alternate(*reps, contenders)
		sw.shapeRows(sh, contenderNames(contenders), best, errs, 2*float64(m)*float64(n)*float64(k))
	}
	return exitOK
}

func randomFloats(rnd *rand.Rand, n int) []float64 {
	m := make([]float64, n)
	for i := range m {
		m[i] = rnd.Float64()*2 - 1
	}
	return m
}

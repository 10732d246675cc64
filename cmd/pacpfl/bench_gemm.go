package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"

	"gonum.org/v1/gonum/blas"

	"github.com/pacpfl/pacpfl/bench"
	"github.com/pacpfl/pacpfl/linalg"
)

// `pacpfl bench gemm`: square DGEMM C = A·B on each BLAS backend, alternated
// within each repetition, minimum of R runs after one warm-up.
func init() {
	registerBench(&benchKernel{
		name:    "gemm",
		summary: "square DGEMM C = A·B per size and BLAS backend (GFLOP/s, % of peak)",
		run:     runBenchGemm,
	})
}

type gemmResult struct {
	Kernel  string  `json:"kernel"`
	N       int     `json:"n,omitempty"`
	Backend string  `json:"backend"`
	Seconds float64 `json:"seconds,omitempty"`
	GFLOPS  float64 `json:"gflops,omitempty"`
	Error   string  `json:"error,omitempty"`
}

func runBenchGemm(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("bench gemm", stderr)
	sizes := intList{500, 1000, 2000, 4000}
	backends := stringList{"native", "gonum", "openblas"}
	fs.Var(&sizes, "n", "comma-separated matrix orders")
	fs.Var(&backends, "backends", "comma-separated BLAS backends ("+strings.Join(linalg.KnownBackends(), ", ")+")")
	asJSON := fs.Bool("json", false, "one JSON object per line instead of a table")
	reps := fs.Int("reps", 5, "repetitions per figure (the minimum is reported), after one warm-up")
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	if *reps < 1 {
		fmt.Fprintf(stderr, "pacpfl bench gemm: --reps %d: want at least 1\n", *reps)
		return exitUsage
	}
	known := linalg.KnownBackends()
	for _, name := range backends {
		if !slices.Contains(known, name) {
			fmt.Fprintf(stderr, "pacpfl bench gemm: unknown backend %q (known: %s)\n", name, strings.Join(known, ", "))
			return exitUsage
		}
	}

	// Backends missing from this build are reported, not skipped silently.
	var names []string
	var impls []blas.Float64
	var failed []gemmResult
	for _, name := range backends {
		impl, err := linalg.Backend(name)
		if err != nil {
			failed = append(failed, gemmResult{Kernel: "gemm", Backend: name, Error: err.Error()})
			continue
		}
		names = append(names, name)
		impls = append(impls, impl)
	}

	peak := bench.MachinePeak()
	if *asJSON {
		for _, f := range failed {
			bench.JSONLine(stdout, f)
		}
	} else {
		fmt.Fprintln(stdout, peak.String())
		for _, f := range failed {
			fmt.Fprintf(stdout, "error: backend %s: %s\n", f.Backend, f.Error)
		}
		fmt.Fprintf(stdout, "%6s  %-10s %12s %10s %8s\n", "n", "backend", "seconds", "GFLOP/s", "% peak")
	}
	if slices.Contains(names, "gonum") && slices.Max(sizes) >= 4000 {
		fmt.Fprintln(stderr, "note: gonum at n >= 4000 takes minutes per run; it is measured anyway")
	}

	rnd := rand.New(rand.NewPCG(1, 2))
	for _, n := range sizes {
		a, b := randomMatrix(rnd, n), randomMatrix(rnd, n)
		cs := make([][]float64, len(impls))
		contenders := make([]bench.Contender, len(impls))
		for i := range impls {
			impl, c := impls[i], make([]float64, n*n)
			cs[i] = c
			contenders[i] = bench.Contender{Name: names[i], Run: func() error {
				impl.Dgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, a, n, b, n, 0, c, n)
				return nil
			}}
		}
		best, errs := bench.Alternate(*reps, contenders)
		flops := 2 * float64(n) * float64(n) * float64(n)
		for i, name := range names {
			r := gemmResult{Kernel: "gemm", N: n, Backend: name}
			if errs[i] != nil {
				r.Error = errs[i].Error()
			} else {
				r.Seconds = best[i]
				r.GFLOPS = flops / best[i] / 1e9
			}
			if *asJSON {
				bench.JSONLine(stdout, r)
				continue
			}
			if r.Error != "" {
				fmt.Fprintf(stdout, "%6d  %-10s error: %s\n", n, name, r.Error)
				continue
			}
			pct := 0.0
			if p := peak.GFLOPS(); p > 0 {
				pct = 100 * r.GFLOPS / p
			}
			fmt.Fprintf(stdout, "%6d  %-10s %12.6f %10.2f %7.1f%%\n", n, name, r.Seconds, r.GFLOPS, pct)
		}
	}
	return exitOK
}

func randomMatrix(rnd *rand.Rand, n int) []float64 {
	m := make([]float64, n*n)
	for i := range m {
		m[i] = rnd.Float64()*2 - 1
	}
	return m
}

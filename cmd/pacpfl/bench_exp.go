package main

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/pacpfl/pacpfl/asm"
	"github.com/pacpfl/pacpfl/bench"
)

// `pacpfl bench exp` and `pacpfl bench sekernel`: the SIMD exponential
// against a math.Exp loop, and the GP's m×m squared-exponential kernel
// matrix (fused, SqDist-then-Exp, generic twin), alternated within each
// repetition, minimum of R runs after one warm-up.
func init() {
	registerBench(&benchKernel{
		name:    "exp",
		summary: "vector exp: asm.Exp at the current SIMD level vs a math.Exp loop (elements/s)",
		run:     runBenchExp,
	})
	registerBench(&benchKernel{
		name:    "sekernel",
		summary: "m×m SE kernel matrix from m×2 features: fused vs SqDist+Exp vs generic",
		run:     runBenchSEKernel,
	})
}

type expResult struct {
	Kernel       string  `json:"kernel"`
	Impl         string  `json:"impl"`
	Level        string  `json:"level,omitempty"`
	N            int     `json:"n"`
	Seconds      float64 `json:"seconds"`
	ElementsPerS float64 `json:"elements_per_s"`
}

func runBenchExp(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("bench exp", stderr)
	n := fs.Int("n", 1<<20, "vector length")
	reps := fs.Int("reps", 5, "repetitions per figure (the minimum is reported), after one warm-up")
	asJSON := fs.Bool("json", false, "one JSON object per line instead of a table")
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	if *n < 1 || *reps < 1 {
		fmt.Fprintf(stderr, "pacpfl bench exp: --n %d --reps %d: both must be at least 1\n", *n, *reps)
		return exitUsage
	}
	rnd := rand.New(rand.NewPCG(3, 4))
	if st, ok := checkMemory(stderr, "bench exp", fmt.Sprintf("--n %d", *n), 8*2*float64(*n)); !ok {
		return st
	}
	x := make([]float64, *n)
	for i := range x {
		x[i] = -50 + 100*rnd.Float64()
	}
	dst := make([]float64, *n)
	level := asm.Current().String()
	best, errs := bench.Alternate(*reps, []bench.Contender{
		{Name: "simd", Run: func() error { asm.Exp(dst, x); return nil }},
		{Name: "math.Exp", Run: func() error {
			for i, v := range x {
				dst[i] = math.Exp(v)
			}
			return nil
		}},
	})
	if !*asJSON {
		fmt.Fprintf(stdout, "exp of %d elements, SIMD level %s, minimum of %d runs\n", *n, level, *reps)
		fmt.Fprintf(stdout, "%-10s %12s %14s %8s\n", "impl", "seconds", "elements/s", "speedup")
	}
	for i, name := range []string{"simd", "math.Exp"} {
		if errs[i] != nil { // the contenders cannot fail; kept for completeness
			fmt.Fprintf(stderr, "pacpfl bench exp: %s: %v\n", name, errs[i])
			return exitError
		}
		r := expResult{Kernel: "exp", Impl: name, N: *n, Seconds: best[i], ElementsPerS: float64(*n) / best[i]}
		if name == "simd" {
			r.Level = level
		}
		if *asJSON {
			bench.JSONLine(stdout, r)
			continue
		}
		fmt.Fprintf(stdout, "%-10s %12.6f %14.4g %7.2fx\n", name, r.Seconds, r.ElementsPerS, best[1]/best[i])
	}
	return exitOK
}

type sekernelResult struct {
	Kernel  string  `json:"kernel"`
	Impl    string  `json:"impl"`
	Level   string  `json:"level"`
	M       int     `json:"m"`
	Seconds float64 `json:"seconds"`
}

func runBenchSEKernel(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("bench sekernel", stderr)
	sizes := intList{1000, 4000}
	fs.Var(&sizes, "m", "comma-separated numbers of points (the matrix is m×m)")
	reps := fs.Int("reps", 5, "repetitions per figure (the minimum is reported), after one warm-up")
	asJSON := fs.Bool("json", false, "one JSON object per line instead of a table")
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	if *reps < 1 {
		fmt.Fprintf(stderr, "pacpfl bench sekernel: --reps %d: want at least 1\n", *reps)
		return exitUsage
	}
	// The m×m matrix at the largest m.
	mmax := float64(slices.Max(sizes))
	if st, ok := checkMemory(stderr, "bench sekernel", fmt.Sprintf("--m %d", slices.Max(sizes)), 8*mmax*mmax); !ok {
		return st
	}
	level := asm.Current().String()
	if !*asJSON {
		fmt.Fprintf(stdout, "SE kernel matrix exp(-||a_i-a_j||^2/2), m×2 features, SIMD level %s, minimum of %d runs\n", level, *reps)
		fmt.Fprintf(stdout, "%6s  %-11s %12s %14s %8s\n", "m", "impl", "seconds", "entries/s", "speedup")
	}
	const d = 2
	rnd := rand.New(rand.NewPCG(5, 6))
	names := []string{"fused", "sqdist+exp", "generic"}
	for _, m := range sizes {
		a := make([]float64, m*d)
		for i := range a {
			a[i] = rnd.NormFloat64()
		}
		k := make([]float64, m*m)
		best, errs := bench.Alternate(*reps, []bench.Contender{
			{Name: names[0], Run: func() error { asm.SEKernel(k, m, a, d, a, d, m, m, d); return nil }},
			{Name: names[1], Run: func() error {
				asm.SqDist(k, m, a, d, a, d, m, m, d)
				asm.ScalUnitary(-0.5, k)
				asm.Exp(k, k)
				return nil
			}},
			{Name: names[2], Run: func() error { asm.SEKernelGeneric(k, m, a, d, a, d, m, m, d); return nil }},
		})
		for i, name := range names {
			if errs[i] != nil {
				fmt.Fprintf(stderr, "pacpfl bench sekernel: %s: %v\n", name, errs[i])
				return exitError
			}
			if *asJSON {
				bench.JSONLine(stdout, sekernelResult{Kernel: "sekernel", Impl: name, Level: level, M: m, Seconds: best[i]})
				continue
			}
			fmt.Fprintf(stdout, "%6d  %-11s %12.6f %14.4g %7.2fx\n", m, name, best[i], float64(m)*float64(m)/best[i], best[2]/best[i])
		}
	}
	return exitOK
}

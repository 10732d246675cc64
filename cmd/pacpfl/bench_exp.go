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
// repetition, minimum of R runs after one warm-up. --levels runs the SIMD
// contenders at several levels (avx512,avx2,generic or all), alternated in
// the same process, so that levels compare as ratios.
func init() {
	registerBench(&benchKernel{
		name:    "exp",
		summary: "vector exp: asm.Exp at the current SIMD level (or --levels) vs a math.Exp loop (elements/s)",
		run:     runBenchExp,
	})
	registerBench(&benchKernel{
		name:    "sekernel",
		summary: "m×m SE kernel matrix from m×2 features: fused vs SqDist+Exp (at --levels) vs generic",
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
	levelList := levelsFlag(fs)
	asJSON := fs.Bool("json", false, "one JSON object per line instead of a table")
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	if *n < 1 || *reps < 1 {
		fmt.Fprintf(stderr, "pacpfl bench exp: --n %d --reps %d: both must be at least 1\n", *n, *reps)
		return exitUsage
	}
	levels, err := benchLevels(*levelList)
	if err != nil {
		fmt.Fprintf(stderr, "pacpfl bench exp: %v\n", err)
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
	defer asm.SetLevel(asm.Current())
	var cs []bench.Contender
	for _, l := range levels {
		cs = append(cs, bench.Contender{Name: "simd", Setup: func() { asm.SetLevel(l) }, Run: func() error { asm.Exp(dst, x); return nil }})
	}
	cs = append(cs, bench.Contender{Name: "math.Exp", Run: func() error {
		for i, v := range x {
			dst[i] = math.Exp(v)
		}
		return nil
	}})
	best, errs := bench.Alternate(*reps, cs)
	ref := best[len(best)-1]
	if !*asJSON {
		fmt.Fprintf(stdout, "exp of %d elements, SIMD level%s, minimum of %d runs\n", *n, levelsPhrase(levels), *reps)
		fmt.Fprintf(stdout, "%-14s %12s %14s %8s\n", "impl", "seconds", "elements/s", "speedup")
	}
	for i, c := range cs {
		if errs[i] != nil { // the contenders cannot fail; kept for completeness
			fmt.Fprintf(stderr, "pacpfl bench exp: %s: %v\n", c.Name, errs[i])
			return exitError
		}
		r := expResult{Kernel: "exp", Impl: c.Name, N: *n, Seconds: best[i], ElementsPerS: float64(*n) / best[i]}
		label := c.Name
		if i < len(levels) {
			r.Level = levels[i].String()
			label += "/" + r.Level
		}
		if *asJSON {
			bench.JSONLine(stdout, r)
			continue
		}
		fmt.Fprintf(stdout, "%-14s %12.6f %14.4g %7.2fx\n", label, r.Seconds, r.ElementsPerS, ref/best[i])
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
	levelList := levelsFlag(fs)
	asJSON := fs.Bool("json", false, "one JSON object per line instead of a table")
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	if *reps < 1 {
		fmt.Fprintf(stderr, "pacpfl bench sekernel: --reps %d: want at least 1\n", *reps)
		return exitUsage
	}
	levels, err := benchLevels(*levelList)
	if err != nil {
		fmt.Fprintf(stderr, "pacpfl bench sekernel: %v\n", err)
		return exitUsage
	}
	// The m×m matrix at the largest m.
	mmax := float64(slices.Max(sizes))
	if st, ok := checkMemory(stderr, "bench sekernel", fmt.Sprintf("--m %d", slices.Max(sizes)), 8*mmax*mmax); !ok {
		return st
	}
	if !*asJSON {
		fmt.Fprintf(stdout, "SE kernel matrix exp(-||a_i-a_j||^2/2), m×2 features, SIMD level%s, minimum of %d runs\n",
			levelsPhrase(levels), *reps)
		fmt.Fprintf(stdout, "%6s  %-18s %12s %14s %8s\n", "m", "impl", "seconds", "entries/s", "speedup")
	}
	const d = 2
	rnd := rand.New(rand.NewPCG(5, 6))
	defer asm.SetLevel(asm.Current())
	for _, m := range sizes {
		a := make([]float64, m*d)
		for i := range a {
			a[i] = rnd.NormFloat64()
		}
		k := make([]float64, m*m)
		var cs []bench.Contender
		var rowLevel []string
		for _, l := range levels {
			set := func() { asm.SetLevel(l) }
			cs = append(cs,
				bench.Contender{Name: "fused", Setup: set, Run: func() error { asm.SEKernel(k, m, a, d, a, d, m, m, d); return nil }},
				bench.Contender{Name: "sqdist+exp", Setup: set, Run: func() error {
					asm.SqDist(k, m, a, d, a, d, m, m, d)
					asm.ScalUnitary(-0.5, k)
					asm.Exp(k, k)
					return nil
				}})
			rowLevel = append(rowLevel, l.String(), l.String())
		}
		// The generic twin (pure Go whatever the level), once.
		cs = append(cs, bench.Contender{Name: "generic", Run: func() error { asm.SEKernelGeneric(k, m, a, d, a, d, m, m, d); return nil }})
		rowLevel = append(rowLevel, asm.Generic.String())
		best, errs := bench.Alternate(*reps, cs)
		ref := best[len(best)-1]
		for i, c := range cs {
			if errs[i] != nil {
				fmt.Fprintf(stderr, "pacpfl bench sekernel: %s: %v\n", c.Name, errs[i])
				return exitError
			}
			if *asJSON {
				bench.JSONLine(stdout, sekernelResult{Kernel: "sekernel", Impl: c.Name, Level: rowLevel[i], M: m, Seconds: best[i]})
				continue
			}
			label := c.Name
			if c.Name != "generic" {
				label += "/" + rowLevel[i]
			}
			fmt.Fprintf(stdout, "%6d  %-18s %12.6f %14.4g %7.2fx\n", m, label, best[i], float64(m)*float64(m)/best[i], ref/best[i])
		}
	}
	return exitOK
}

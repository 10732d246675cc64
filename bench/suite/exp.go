package suite

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/pacpfl/pacpfl/asm"
	"github.com/pacpfl/pacpfl/bench"
)

// ExpConfig configures Exp. Zero fields take the defaults given.
type ExpConfig struct {
	// N is the vector length (1<<20).
	N int
	// Reps is the repetitions per figure after one warm-up (DefaultReps).
	Reps int
	// Levels are the SIMD levels asm.Exp runs at, alternated (the level
	// in force).
	Levels []asm.Level
}

// DefaultExpN is ExpConfig's default vector length.
const DefaultExpN = 1 << 20

func (c ExpConfig) withDefaults() ExpConfig {
	c.N = orDefault(c.N, DefaultExpN)
	c.Reps = orDefault(c.Reps, DefaultReps)
	c.Levels = levelsOrCurrent(c.Levels)
	return c
}

// MemoryBytes is the memory Exp holds: its input and output vectors.
func (c ExpConfig) MemoryBytes() float64 { return 8 * 2 * float64(c.withDefaults().N) }

// ExpRow is one implementation's figure in Exp; its JSON form is a line of
// `bench exp --json`.
type ExpRow struct {
	Kernel       string  `json:"kernel"`
	Impl         string  `json:"impl"`
	Level        string  `json:"level,omitempty"`
	N            int     `json:"n"`
	Seconds      float64 `json:"seconds"`
	ElementsPerS float64 `json:"elements_per_s"`
	// Speedup is the math.Exp loop's time over this row's.
	Speedup float64 `json:"-"`
}

// WriteText writes r as a line of Exp's table.
func (r ExpRow) WriteText(w io.Writer) {
	label := r.Impl
	if r.Level != "" {
		label += "/" + r.Level
	}
	fmt.Fprintf(w, "%-14s %12.6f %14.4g %7.2fx\n", label, r.Seconds, r.ElementsPerS, r.Speedup)
}

// Exp times asm.Exp of N elements uniform in (−50, 50) at each level
// against a math.Exp loop, alternated within each repetition: one row
// "simd" per level, then the "math.Exp" row. The level in force is
// restored after.
func Exp(ctx context.Context, cfg ExpConfig, out Output) ([]ExpRow, error) {
	cfg = cfg.withDefaults()
	if err := checkPositive("n", cfg.N); err != nil {
		return nil, err
	}
	if err := checkPositive("reps", cfg.Reps); err != nil {
		return nil, err
	}
	if err := checkLevels(cfg.Levels); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rnd := rand.New(rand.NewPCG(3, 4))
	x := make([]float64, cfg.N)
	for i := range x {
		x[i] = -50 + 100*rnd.Float64()
	}
	dst := make([]float64, cfg.N)
	defer asm.SetLevel(asm.Current())
	var cs []bench.Contender
	for _, l := range cfg.Levels {
		cs = append(cs, bench.Contender{Name: "simd", Setup: func() { asm.SetLevel(l) },
			Run: func() error { asm.Exp(dst, x); return nil }})
	}
	cs = append(cs, bench.Contender{Name: "math.Exp", Run: func() error {
		for i, v := range x {
			dst[i] = math.Exp(v)
		}
		return nil
	}})
	best, errs := bench.Alternate(cfg.Reps, cs)
	ref := best[len(best)-1]
	out.printf("exp of %d elements, SIMD level%s, minimum of %d runs\n", cfg.N, levelsPhrase(cfg.Levels), cfg.Reps)
	out.printf("%-14s %12s %14s %8s\n", "impl", "seconds", "elements/s", "speedup")
	rows := make([]ExpRow, len(cs))
	for i, c := range cs {
		if errs[i] != nil { // the contenders cannot fail; kept for completeness
			return rows[:i], fmt.Errorf("%s: %w", c.Name, errs[i])
		}
		r := ExpRow{Kernel: "exp", Impl: c.Name, N: cfg.N, Seconds: best[i], ElementsPerS: float64(cfg.N) / best[i],
			Speedup: ref / best[i]}
		if i < len(cfg.Levels) {
			r.Level = cfg.Levels[i].String()
		}
		out.row(r, r.WriteText)
		rows[i] = r
	}
	return rows, nil
}

// SEKernelConfig configures SEKernel. Zero fields take the defaults given.
type SEKernelConfig struct {
	// Sizes are the numbers of points m; the matrix is m×m
	// (DefaultSEKernelSizes).
	Sizes []int
	// Reps is the repetitions per figure after one warm-up (DefaultReps).
	Reps int
	// Levels are the SIMD levels of the fused and SqDist+Exp contenders,
	// alternated (the level in force).
	Levels []asm.Level
}

// DefaultSEKernelSizes are SEKernelConfig's default numbers of points.
var DefaultSEKernelSizes = []int{1000, 4000}

func (c SEKernelConfig) withDefaults() SEKernelConfig {
	c.Sizes = orDefaultList(c.Sizes, DefaultSEKernelSizes)
	c.Reps = orDefault(c.Reps, DefaultReps)
	c.Levels = levelsOrCurrent(c.Levels)
	return c
}

// MemoryBytes is a lower bound of SEKernel's memory: the m×m matrix at the
// largest m.
func (c SEKernelConfig) MemoryBytes() float64 {
	m := float64(slices.Max(c.withDefaults().Sizes))
	return 8 * m * m
}

// SEKernelRow is one implementation's figure in SEKernel; its JSON form is a
// line of `bench sekernel --json`.
type SEKernelRow struct {
	Kernel  string  `json:"kernel"`
	Impl    string  `json:"impl"`
	Level   string  `json:"level"`
	M       int     `json:"m"`
	Seconds float64 `json:"seconds"`
	// EntriesPerS is m²/Seconds; Speedup the generic twin's time over
	// this row's.
	EntriesPerS float64 `json:"-"`
	Speedup     float64 `json:"-"`
}

// WriteText writes r as a line of SEKernel's table.
func (r SEKernelRow) WriteText(w io.Writer) {
	label := r.Impl
	if r.Impl != "generic" {
		label += "/" + r.Level
	}
	fmt.Fprintf(w, "%6d  %-18s %12.6f %14.4g %7.2fx\n", r.M, label, r.Seconds, r.EntriesPerS, r.Speedup)
}

// SEKernel times the GP's m×m squared-exponential kernel matrix
// exp(−‖a_i − a_j‖²/2) of m×2 standard normal features: fused (asm.SEKernel)
// and SqDist-then-Exp at each level, and the pure-Go generic twin once,
// alternated within each repetition; rows per m in that order. The level in
// force is restored after.
func SEKernel(ctx context.Context, cfg SEKernelConfig, out Output) ([]SEKernelRow, error) {
	cfg = cfg.withDefaults()
	if err := checkPositive("m", cfg.Sizes...); err != nil {
		return nil, err
	}
	if err := checkPositive("reps", cfg.Reps); err != nil {
		return nil, err
	}
	if err := checkLevels(cfg.Levels); err != nil {
		return nil, err
	}
	out.printf("SE kernel matrix exp(-||a_i-a_j||^2/2), m×2 features, SIMD level%s, minimum of %d runs\n",
		levelsPhrase(cfg.Levels), cfg.Reps)
	out.printf("%6s  %-18s %12s %14s %8s\n", "m", "impl", "seconds", "entries/s", "speedup")
	const d = 2
	rnd := rand.New(rand.NewPCG(5, 6))
	defer asm.SetLevel(asm.Current())
	var rows []SEKernelRow
	for _, m := range cfg.Sizes {
		if err := ctx.Err(); err != nil {
			return rows, err
		}
		a := make([]float64, m*d)
		for i := range a {
			a[i] = rnd.NormFloat64()
		}
		k := make([]float64, m*m)
		var cs []bench.Contender
		var rowLevel []string
		for _, l := range cfg.Levels {
			set := func() { asm.SetLevel(l) }
			cs = append(cs,
				bench.Contender{Name: "fused", Setup: set, Run: func() error {
					asm.SEKernel(k, m, a, d, a, d, m, m, d)
					return nil
				}},
				bench.Contender{Name: "sqdist+exp", Setup: set, Run: func() error {
					asm.SqDist(k, m, a, d, a, d, m, m, d)
					asm.ScalUnitary(-0.5, k)
					asm.Exp(k, k)
					return nil
				}})
			rowLevel = append(rowLevel, l.String(), l.String())
		}
		// The generic twin (pure Go whatever the level), once.
		cs = append(cs, bench.Contender{Name: "generic", Run: func() error {
			asm.SEKernelGeneric(k, m, a, d, a, d, m, m, d)
			return nil
		}})
		rowLevel = append(rowLevel, asm.Generic.String())
		best, errs := bench.Alternate(cfg.Reps, cs)
		ref := best[len(best)-1]
		for i, c := range cs {
			if errs[i] != nil {
				return rows, fmt.Errorf("%s: %w", c.Name, errs[i])
			}
			mm := float64(m) * float64(m)
			r := SEKernelRow{Kernel: "sekernel", Impl: c.Name, Level: rowLevel[i], M: m, Seconds: best[i],
				EntriesPerS: mm / best[i], Speedup: ref / best[i]}
			out.row(r, r.WriteText)
			rows = append(rows, r)
		}
	}
	return rows, nil
}

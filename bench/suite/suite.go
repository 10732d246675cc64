// Package suite holds pacpfl's benchmarks of its kernels and backends: the
// problems they measure, the alternated timing of the contenders (package
// bench's Alternate), the figures (GFLOP/s, percentage of the machine peak)
// and the text and JSON rendering of the rows.
//
// Each benchmark has a config struct whose zero fields take documented
// defaults and a function that measures and returns typed rows, writing
// them to an Output as they are measured (a table or one JSON object per
// row), so that a long sweep shows its progress. A configuration the
// benchmark refuses is an error matching ErrInvalid; a contender that fails
// is reported in its row. The package is apart from bench because the
// benchmarks import the packages (linalg, cholesky, conv, lml, rpc) whose own
// tests import bench.
package suite

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/pacpfl/pacpfl/asm"
	"github.com/pacpfl/pacpfl/bench"
	"github.com/pacpfl/pacpfl/linalg"
)

// ErrInvalid matches (errors.Is) every error about a configuration a
// benchmark refuses before measuring: bad sizes, an unknown or missing
// backend, an unsupported SIMD level.
var ErrInvalid = errors.New("invalid benchmark configuration")

// ErrRowFailed is what a benchmark returns, with all its rows, when a
// contender failed (or, for RPC, an update): the failing rows say why.
var ErrRowFailed = errors.New("a benchmark row failed")

// rowsErr is ErrRowFailed if failed holds for a row of rows, else nil.
func rowsErr[R any](rows []R, failed func(R) bool) error {
	if slices.ContainsFunc(rows, failed) {
		return ErrRowFailed
	}
	return nil
}

type invalidError struct{ msg string }

func (e invalidError) Error() string        { return e.msg }
func (e invalidError) Is(target error) bool { return target == ErrInvalid }

func invalidf(format string, a ...any) error { return invalidError{fmt.Sprintf(format, a...)} }

// Output is where a benchmark writes while it measures. With JSON false, W
// gets the text table: a header, then each row as soon as it is measured;
// with JSON true, one JSON object per row (package bench's JSONLine). Notes
// gets advice about the measurement itself (e.g. a backend that can slow the
// next contender). A nil writer discards what would go to it.
type Output struct {
	W     io.Writer
	JSON  bool
	Notes io.Writer
}

// text reports whether the table is written.
func (o Output) text() bool { return o.W != nil && !o.JSON }

func (o Output) printf(format string, a ...any) {
	if o.text() {
		fmt.Fprintf(o.W, format, a...)
	}
}

func (o Output) println(s string) {
	if o.text() {
		fmt.Fprintln(o.W, s)
	}
}

func (o Output) note(s string) {
	if o.Notes != nil {
		fmt.Fprintln(o.Notes, s)
	}
}

// row writes r as a JSON line in JSON mode, or calls text otherwise.
func (o Output) row(r any, text func(io.Writer)) {
	switch {
	case o.W == nil:
	case o.JSON:
		bench.JSONLine(o.W, r)
	default:
		text(o.W)
	}
}

// DefaultReps is the repetitions per figure of most benchmarks (the minimum
// is reported), after one warm-up.
const DefaultReps = 5

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func orDefaultList[T any](v, def []T) []T {
	if len(v) == 0 {
		return slices.Clone(def)
	}
	return v
}

// checkPositive refuses a value below 1 of a list or a count.
func checkPositive(name string, vs ...int) error {
	for _, v := range vs {
		if v < 1 {
			return invalidf("%s %d: want at least 1", name, v)
		}
	}
	return nil
}

// pctOfPeak is gflops as a percentage of the peak, 0 when the peak is
// unknown.
// Rate is what every row with a FLOP rate carries beside it: the machine's
// measured peak, the rate as a percentage of it and where the native BLAS's
// kernel and blocks came from (linalg.TuningSource).
type Rate struct {
	PeakGFLOPS  float64 `json:"peak_gflops,omitempty"`
	PercentPeak float64 `json:"percent_peak,omitempty"`
	Tuning      string  `json:"tuning,omitempty"`
}

// rate is the Rate of gflops against peak.
func rate(gflops float64, peak bench.Peak) Rate {
	return Rate{PeakGFLOPS: peak.GFLOPS(), PercentPeak: pctOfPeak(gflops, peak), Tuning: linalg.TuningSource()}
}

// printPeak prints the header lines of a table of rates: the peak and the
// tuning source.
func printPeak(out Output, peak bench.Peak) {
	out.println(peak.String())
	out.println("BLAS tuning: " + linalg.TuningSource())
}

func pctOfPeak(gflops float64, peak bench.Peak) float64 {
	if p := peak.GFLOPS(); p > 0 {
		return 100 * gflops / p
	}
	return 0
}

// ParseLevels resolves a list of SIMD level names: nil for an empty list
// (the benchmark runs at the level in force), every level this CPU and build
// support for "all", else each named level, which must be supported here
// (the error names the one that is not, and why, and matches ErrInvalid).
func ParseLevels(names []string) ([]asm.Level, error) {
	if len(names) == 0 {
		return nil, nil
	}
	if len(names) == 1 && names[0] == "all" {
		return asm.Supported(), nil
	}
	var ls []asm.Level
	for _, name := range names {
		l, err := asm.ParseLevel(strings.ToLower(name))
		if err != nil {
			return nil, invalidf("unknown SIMD level %q (known: %s)", name, levelNames(asm.ArchLevels()))
		}
		if why := asm.Unsupported(l); why != "" {
			return nil, invalidError{why}
		}
		if slices.Contains(ls, l) {
			return nil, invalidf("%s given twice", l)
		}
		ls = append(ls, l)
	}
	return ls, nil
}

// checkLevels refuses a level this CPU or build cannot run.
func checkLevels(ls []asm.Level) error {
	for _, l := range ls {
		if why := asm.Unsupported(l); why != "" {
			return invalidError{why}
		}
	}
	return nil
}

// levelsOrCurrent is ls, or the level in force when ls is empty.
func levelsOrCurrent(ls []asm.Level) []asm.Level {
	if len(ls) == 0 {
		return []asm.Level{asm.Current()}
	}
	return ls
}

func levelNames(ls []asm.Level) string {
	s := make([]string, len(ls))
	for i, l := range ls {
		s[i] = l.String()
	}
	return strings.Join(s, ", ")
}

// levelsPhrase completes "SIMD level": " avx2", or "s avx512, avx2 alternated".
func levelsPhrase(ls []asm.Level) string {
	if len(ls) == 1 {
		return " " + ls[0].String()
	}
	return "s " + levelNames(ls) + " alternated"
}

// atLevel is c run at level l: named c.Name+"/"+l, its Setup setting the
// level first (the native BLAS follows: its kernel and cache blocks are
// those of the level in force).
func atLevel(c bench.Contender, l asm.Level) bench.Contender {
	setup := c.Setup
	c.Name += "/" + l.String()
	c.Setup = func() {
		asm.SetLevel(l)
		if setup != nil {
			setup()
		}
	}
	return c
}

// perLevel replaces each contender of cs for which atLevels holds by one per
// level (atLevel), in order, when levels are given; otherwise it returns cs
// as they are, run at the level in force.
func perLevel(cs []bench.Contender, levels []asm.Level, atLevels func(bench.Contender) bool) []bench.Contender {
	if len(levels) == 0 {
		return cs
	}
	var out []bench.Contender
	for _, c := range cs {
		if !atLevels(c) {
			out = append(out, c)
			continue
		}
		for _, l := range levels {
			out = append(out, atLevel(c, l))
		}
	}
	return out
}

// splitLevel splits a contender name "native/avx512" into "native" and
// "avx512" (level "" when the name has none).
func splitLevel(name string) (base, level string) {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		return name[:i], name[i+1:]
	}
	return name, ""
}

func contenderNames(cs []bench.Contender) []string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.Name
	}
	return names
}

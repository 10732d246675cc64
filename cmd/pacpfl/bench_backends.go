package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/pacpfl/pacpfl/asm"
	"github.com/pacpfl/pacpfl/bench"
	"github.com/pacpfl/pacpfl/linalg"
)

// backendResult is one JSON line of a backend sweep (`bench gemm`,
// `bench cholesky`): a figure, or the error that replaced it.
type backendResult struct {
	Kernel  string  `json:"kernel"`
	Op      string  `json:"op,omitempty"`
	N       int     `json:"n,omitempty"`
	M       int     `json:"m,omitempty"` // a non-square GEMM: C is m×n, the inner dimension k
	K       int     `json:"k,omitempty"`
	Backend string  `json:"backend"`
	Level   string  `json:"level,omitempty"` // with --levels: the SIMD level of a native row
	Threads int     `json:"threads"`
	Seconds float64 `json:"seconds,omitempty"`
	GFLOPS  float64 `json:"gflops,omitempty"`
	Error   string  `json:"error,omitempty"`
}

// backendSweep holds what `bench gemm` and `bench cholesky` share: the checks
// of --reps, --threads and --backends, one thread count for every backend,
// the header with the machine peak and the thread count, and one table row
// or JSON line per backend and size.
type backendSweep struct {
	cmd, kernel, op string // op "" leaves the op column out
	json            bool
	stdout, stderr  io.Writer
	peak            bench.Peak
	threads         int
	levels          string // with --levels: a header line naming them
}

// isNative tells the contenders that run at each --levels level: the native
// backend's (OpenBLAS and gonum have no SIMD level of ours).
func isNative(c bench.Contender) bool { return c.Name == "native" }

func contenderNames(cs []bench.Contender) []string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.Name
	}
	return names
}

// levelsNote is the header line of a --levels sweep ("" without --levels).
func levelsNote(levels []asm.Level, explicit bool) string {
	if !explicit {
		return ""
	}
	return "native at SIMD level" + levelsPhrase(levels) + " (kernels and cache blocks of each level)"
}

// checkArgs validates --reps, --threads and the requested backend names:
// a typo, a name given twice or a backend this build lacks is a usage error
// (a missing one used to print an error line, an empty table and exit 0).
func (s *backendSweep) checkArgs(reps, threads int, names, known, compiled []string, lookup func(string) error) (status int, ok bool) {
	err := checkNames("backend", names, known)
	if err == nil && reps < 1 {
		err = usagef("--reps %d: want at least 1", reps)
	}
	if err == nil {
		err = checkThreads("--threads", threads)
	}
	for _, name := range names {
		if err == nil && !slices.Contains(compiled, name) {
			err = usageError{lookup(name)}
		}
	}
	if err != nil {
		return fail(s.stderr, s.cmd, err), false
	}
	return exitOK, true
}

// setThreads gives every backend the same number of threads (0: GOMAXPROCS):
// native and gonum follow GOMAXPROCS, OpenBLAS its own setting, which
// ignores GOMAXPROCS (with GOMAXPROCS=1 it still ran two threads). The
// returned function restores GOMAXPROCS.
func (s *backendSweep) setThreads(threads int, names []string) (restore func(), err error) {
	old := runtime.GOMAXPROCS(0)
	if threads == 0 {
		threads = old
	}
	runtime.GOMAXPROCS(threads)
	s.threads = threads
	restore = func() { runtime.GOMAXPROCS(old) }
	if slices.Contains(names, "openblas") {
		linalg.SetOpenBLASThreads(threads)
		if got := linalg.OpenBLASThreads(); got != threads {
			restore()
			return nil, usagef("OpenBLAS runs %d threads, not the %d asked for (OPENBLAS_NUM_THREADS or its build caps it): give --threads %d", got, threads, got)
		}
	}
	return restore, nil
}

// header prints the peak, the thread count and the column titles (nothing
// with --json).
func (s *backendSweep) header(order []string) {
	s.peak = machinePeak()
	if len(order) > 1 && slices.Contains(order, "openblas") && os.Getenv("OPENBLAS_THREAD_TIMEOUT") == "" {
		// Measured: with the default timeout a contender run right after
		// OpenBLAS lost up to 40% (Cholesky, n = 1000) and up to half (GEMM,
		// n = 500) of its speed to OpenBLAS's spinning threads.
		fmt.Fprintln(s.stderr, "note: OpenBLAS's idle threads spin after each call and can slow the contender "+
			"run after it; set OPENBLAS_THREAD_TIMEOUT=4 for a fair alternation")
	}
	if s.json {
		return
	}
	fmt.Fprintln(s.stdout, s.peak.String())
	fmt.Fprintf(s.stdout, "threads: %d for every backend (native and gonum through GOMAXPROCS, openblas through openblas_set_num_threads)\n", s.threads)
	if s.levels != "" {
		fmt.Fprintln(s.stdout, s.levels)
	}
	if s.op != "" {
		fmt.Fprintf(s.stdout, "%6s  %-6s %-13s %12s %10s %8s\n", "n", "op", "backend", "seconds", "GFLOP/s", "% peak")
	} else {
		fmt.Fprintf(s.stdout, "%6s  %-13s %12s %10s %8s\n", "n", "backend", "seconds", "GFLOP/s", "% peak")
	}
}

// rows reports one size: each backend's best time, or its error.
func (s *backendSweep) rows(n int, names []string, best []float64, errs []error, flops float64) {
	s.shapeRows(gemmShape{n, n, n}, names, best, errs, flops)
}

// shapeRows reports one shape (m×n×k: the n column shows "MxNxK" when the
// shape is not square, and JSON carries m and k too).
func (s *backendSweep) shapeRows(sh gemmShape, names []string, best []float64, errs []error, flops float64) {
	for i, name := range names {
		r := backendResult{Kernel: s.kernel, Op: s.op, N: sh.n, Threads: s.threads}
		r.Backend, r.Level = splitLevel(name)
		if !sh.square() {
			r.M, r.K = sh.m, sh.k
		}
		if errs[i] != nil {
			r.Error = errs[i].Error()
		} else {
			r.Seconds = best[i]
			r.GFLOPS = flops / best[i] / 1e9
		}
		if s.json {
			bench.JSONLine(s.stdout, r)
			continue
		}
		lead := fmt.Sprintf("%6s  %-13s", sh, name)
		if s.op != "" {
			lead = fmt.Sprintf("%6s  %-6s %-13s", sh, s.op, name)
		}
		if r.Error != "" {
			fmt.Fprintf(s.stdout, "%s error: %s\n", lead, r.Error)
			continue
		}
		pct := 0.0
		if p := s.peak.GFLOPS(); p > 0 {
			pct = 100 * r.GFLOPS / p
		}
		fmt.Fprintf(s.stdout, "%s %12.6f %10.2f %7.1f%%\n", lead, r.Seconds, r.GFLOPS, pct)
	}
}

// gemmShape is C (m×n) = A (m×k) · B (k×n).
type gemmShape struct{ m, n, k int }

func (sh gemmShape) square() bool { return sh.m == sh.n && sh.n == sh.k }

// String is "n" for a square shape, else "MxNxK".
func (sh gemmShape) String() string {
	if sh.square() {
		return strconv.Itoa(sh.n)
	}
	return fmt.Sprintf("%dx%dx%d", sh.m, sh.n, sh.k)
}

// shapeList is a flag.Value for comma-separated GEMM shapes MxNxK
// ("256x256x2000": C is 256×256, the inner dimension 2000).
type shapeList []gemmShape

func (l *shapeList) String() string {
	s := make([]string, len(*l))
	for i, v := range *l {
		s[i] = fmt.Sprintf("%dx%dx%d", v.m, v.n, v.k)
	}
	return strings.Join(s, ",")
}

func (l *shapeList) Set(v string) error {
	var out []gemmShape
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		parts := strings.Split(strings.ToLower(f), "x")
		if len(parts) != 3 {
			return fmt.Errorf("%q is not a shape MxNxK", f)
		}
		var d [3]int
		for i, p := range parts {
			n, err := strconv.Atoi(p)
			if err != nil || n < 1 {
				return fmt.Errorf("%q is not a shape MxNxK of positive integers", f)
			}
			d[i] = n
		}
		out = append(out, gemmShape{d[0], d[1], d[2]})
	}
	*l = out
	return nil
}

package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/pacpfl/pacpfl/bench"
)

// backendResult is one JSON line of a backend sweep (`bench gemm`,
// `bench cholesky`): a figure, or the error that replaced it.
type backendResult struct {
	Kernel  string  `json:"kernel"`
	Op      string  `json:"op,omitempty"`
	N       int     `json:"n,omitempty"`
	Backend string  `json:"backend"`
	Seconds float64 `json:"seconds,omitempty"`
	GFLOPS  float64 `json:"gflops,omitempty"`
	Error   string  `json:"error,omitempty"`
}

// backendSweep holds what `bench gemm` and `bench cholesky` share: the checks
// of --reps and --backends, the header with the machine peak, the report of
// backends missing from this build, and one table row or JSON line per
// backend and size.
type backendSweep struct {
	cmd, kernel, op string // op "" leaves the op column out
	json            bool
	stdout, stderr  io.Writer
	peak            bench.Peak
}

// checkArgs validates --reps and the requested backend names against the
// known ones; a typo is a usage error, a known backend missing from this
// build is not (it is reported as an error line).
func (s *backendSweep) checkArgs(reps int, names, known []string) (status int, ok bool) {
	if reps < 1 {
		fmt.Fprintf(s.stderr, "pacpfl %s: --reps %d: want at least 1\n", s.cmd, reps)
		return exitUsage, false
	}
	for _, name := range names {
		if !slices.Contains(known, name) {
			fmt.Fprintf(s.stderr, "pacpfl %s: unknown backend %q (known: %s)\n", s.cmd, name, strings.Join(known, ", "))
			return exitUsage, false
		}
	}
	return exitOK, true
}

// header prints the peak, the backends that could not be had, and the
// column titles (or, with --json, the error lines only).
func (s *backendSweep) header(missing map[string]error, order []string) {
	s.peak = machinePeak()
	var failed []backendResult
	for _, name := range order {
		if err, ok := missing[name]; ok {
			failed = append(failed, backendResult{Kernel: s.kernel, Op: s.op, Backend: name, Error: err.Error()})
		}
	}
	if len(order)-len(missing) > 1 &&
		slices.Contains(order, "openblas") && missing["openblas"] == nil && os.Getenv("OPENBLAS_THREAD_TIMEOUT") == "" {
		// Measured: with the default timeout a contender run right after
		// OpenBLAS lost up to 40% (Cholesky, n = 1000) and up to half (GEMM,
		// n = 500) of its speed to OpenBLAS's spinning threads.
		fmt.Fprintln(s.stderr, "note: OpenBLAS's idle threads spin after each call and can slow the contender "+
			"run after it; set OPENBLAS_THREAD_TIMEOUT=4 for a fair alternation")
	}
	if s.json {
		for _, f := range failed {
			bench.JSONLine(s.stdout, f)
		}
		return
	}
	fmt.Fprintln(s.stdout, s.peak.String())
	for _, f := range failed {
		fmt.Fprintf(s.stdout, "error: backend %s: %s\n", f.Backend, f.Error)
	}
	if s.op != "" {
		fmt.Fprintf(s.stdout, "%6s  %-6s %-10s %12s %10s %8s\n", "n", "op", "backend", "seconds", "GFLOP/s", "% peak")
	} else {
		fmt.Fprintf(s.stdout, "%6s  %-10s %12s %10s %8s\n", "n", "backend", "seconds", "GFLOP/s", "% peak")
	}
}

// rows reports one size: each backend's best time, or its error.
func (s *backendSweep) rows(n int, names []string, best []float64, errs []error, flops float64) {
	for i, name := range names {
		r := backendResult{Kernel: s.kernel, Op: s.op, N: n, Backend: name}
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
		lead := fmt.Sprintf("%6d  %-10s", n, name)
		if s.op != "" {
			lead = fmt.Sprintf("%6d  %-6s %-10s", n, s.op, name)
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

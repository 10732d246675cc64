package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestBenchDispatch(t *testing.T) {
	st, _, errs := runCLI("bench")
	assert.Equal(t, exitUsage, st)
	assert.Contains(t, errs, "usage: pacpfl bench")
	st, _, errs = runCLI("bench", "nope")
	assert.Equal(t, exitUsage, st)
	assert.Contains(t, errs, `unknown kernel "nope"`)
	st, out, _ := runCLI("bench", "-h")
	assert.Equal(t, exitOK, st)
	for _, n := range benchKernels.Names() {
		assert.Contains(t, out, n)
	}
}

// A size whose buffers cannot fit in memory is a usage error with a message,
// not a "fatal error: out of memory" crash (or the OOM killer) mid-run. The
// machine is pretended to have 1 GiB available, so the refused sizes stay
// modest and the test is the same everywhere.
func TestBenchRefusesSizesBeyondMemory(t *testing.T) {
	saved := availableMemory
	defer func() { availableMemory = saved }()
	availableMemory = func() float64 { return 1 << 30 }
	for _, args := range [][]string{
		{"gemm", "--n", "8,20000", "--backends", "native"},
		{"cholesky", "--n", "20000", "--backends", "native"},
		{"exp", "--n", "200000000"},
		{"sekernel", "--m", "20000"},
		{"lml", "--m", "20000", "--k", "1"},
		{"conv", "--batch", "1000000"},
	} {
		st, out, errs := runCLI(append([]string{"bench"}, args...)...)
		if st != exitUsage || out != "" || !strings.Contains(errs, "GiB") {
			t.Errorf("bench %v: exit %d, stdout %q, stderr %q; want 2 and a message about memory", args, st, out, errs)
		}
	}
	// Sizes that fit still run.
	if st, _, errs := runCLI("bench", "gemm", "--n", "8", "--backends", "native", "--reps", "1"); st != exitOK {
		t.Errorf("bench gemm --n 8: exit %d, stderr %q", st, errs)
	}
	// A negative thread count was accepted and quietly meant "all cores".
	if st, _, errs := runCLI("bench", "lml", "--threads", "-1", "--m", "8", "--k", "1", "--reps",
		"1"); st != exitUsage || errs == "" {
		t.Errorf("bench lml --threads -1: exit %d, stderr %q; want 2 with a message", st, errs)
	}
}

// `bench all` takes only --json and --reps, and checks them before running
// anything: a kernel-specific flag used to run the kernels that accept it and
// then fail in the others.
func TestBenchAllChecksFlagsFirst(t *testing.T) {
	for _, args := range [][]string{{"--n", "5"}, {"--reps", "0"}, {"extra"}} {
		st, out, errs := runCLI(append([]string{"bench", "all"}, args...)...)
		if st != exitUsage || out != "" || errs == "" {
			t.Errorf("bench all %v: exit %d, stdout %q, stderr %q; want 2, nothing run, a message", args, st, out, errs)
		}
	}
	if st, _, _ := runCLI("bench", "all", "-h"); st != exitOK {
		t.Errorf("bench all -h: exit %d", st)
	}
}

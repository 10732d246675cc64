package main

import (
	"runtime"
	"slices"
	"strings"

	"github.com/pacpfl/pacpfl/data"
)

// checkSeeds validates --seeds and --seed-base: the seeds base … base+n−1
// must not wrap around 2⁶⁴.
func checkSeeds(seeds int, base uint64) error {
	if seeds < 1 {
		return usagef("--seeds %d must be at least 1", seeds)
	}
	if base+uint64(seeds-1) < base {
		return usagef("--seed-base %d with --seeds %d passes the largest seed 2⁶⁴−1", base, seeds)
	}
	return nil
}

// checkNames refuses a list flag's unknown and repeated names.
func checkNames(flagName string, names, known []string) error {
	for i, n := range names {
		if !slices.Contains(known, n) {
			return usagef("unknown %s %q (known: %s)", flagName, n, strings.Join(known, ", "))
		}
		if slices.Contains(names[:i], n) {
			return usagef("%s lists %q twice", flagName, n)
		}
	}
	return nil
}

// checkThreads refuses a thread count beyond the machine's CPUs (0: all).
func checkThreads(flagName string, n int) error {
	if n < 0 || n > runtime.NumCPU() {
		return usagef("%s %d: want 0 (GOMAXPROCS) up to the %d CPUs of this machine", flagName, n, runtime.NumCPU())
	}
	return nil
}

// checkData checks the flags that depend on the data: c against the n
// existing clients, a --batch given against the m_i (a default batch is
// capped at m_i; skipped for a stand-in data set without samples).
func (f *trainFlags) checkData(ds *data.Dataset) error {
	n, maxM := len(ds.Existing), 0
	for i := range ds.Existing {
		maxM = max(maxM, ds.Existing[i].M())
	}
	if f.clientsPerRound > n {
		return usagef("--clients-per-round %d exceeds the %d existing clients", f.clientsPerRound, n)
	}
	if f.given["batch"] && maxM > 0 && f.batch > maxM {
		return usagef("--batch %d exceeds every client's sample count (at most %d; 0 uses all of S_i)", f.batch, maxM)
	}
	return nil
}

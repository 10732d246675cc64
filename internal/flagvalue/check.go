package flagvalue

import (
	"flag"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// The checks below refuse flag values that parse but make no sense; each
// error names the flag as the user wrote it ("--threads").

// CheckNames refuses a list flag's unknown and repeated names.
func CheckNames(flagName string, names, known []string) error {
	for i, n := range names {
		if !slices.Contains(known, n) {
			return fmt.Errorf("unknown %s %q (known: %s)", flagName, n, strings.Join(known, ", "))
		}
		if slices.Contains(names[:i], n) {
			return fmt.Errorf("%s lists %q twice", flagName, n)
		}
	}
	return nil
}

// CheckThreads refuses a thread count beyond the machine's CPUs (0 means
// all of them).
func CheckThreads(flagName string, n int) error {
	if n < 0 || n > runtime.NumCPU() {
		return fmt.Errorf("%s %d: want 0 (GOMAXPROCS) up to the %d CPUs of this machine", flagName, n, runtime.NumCPU())
	}
	return nil
}

// CheckSeeds refuses a seed count below 1 and seeds base … base+n−1 that
// wrap around 2⁶⁴.
func CheckSeeds(seeds int, base uint64) error {
	if seeds < 1 {
		return fmt.Errorf("--seeds %d must be at least 1", seeds)
	}
	if base+uint64(seeds-1) < base {
		return fmt.Errorf("--seed-base %d with --seeds %d passes the largest seed 2⁶⁴−1", base, seeds)
	}
	return nil
}

// CheckPositive refuses a value below 1 of the named integer flags of fs,
// in the order named.
func CheckPositive(fs *flag.FlagSet, names ...string) error {
	for _, name := range names {
		if v, err := strconv.Atoi(fs.Lookup(name).Value.String()); err != nil || v < 1 {
			return fmt.Errorf("--%s %s: want at least 1", name, fs.Lookup(name).Value)
		}
	}
	return nil
}

package main

import (
	"flag"
	"math"
	"runtime"
	"slices"
	"strings"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
)

// The one validation of the shared training flags (train, experiment, tune):
// every value is checked, by the name the user typed, before any data are
// made or read; what depends on the data (c ≤ n, the batch against m_i, the
// bound assumptions, memory) is checked by options on the first seed's data,
// still before any work.

// validate checks the training flags that do not depend on the data. fs
// tells which flags were given.
func (f *trainFlags) validate(fs *flag.FlagSet) error {
	given := func(name string) bool { return flagSet(fs, name) }
	for _, pair := range [][2]string{{"rounds", "T"}, {"clients-per-round", "c"}} {
		if given(pair[0]) && given(pair[1]) {
			// The flag package lets the last one win, silently.
			return usagef("--%s and -%s are the same flag: give one", pair[0], pair[1])
		}
	}
	positive := func(name string, v float64) error {
		if !(v > 0) || math.IsInf(v, 0) {
			return usagef("--%s %v must be positive and finite", name, v)
		}
		return nil
	}
	switch {
	case f.k < 1:
		return usagef("--k %d must be at least 1", f.k)
	case f.rounds < 0:
		return usagef("--rounds %d must be ≥ 0", f.rounds)
	case f.clientsPerRound < 0:
		return usagef("--clients-per-round %d must be at least 1 (or 0: min(n, %d))", f.clientsPerRound, fl.DefaultClientsPerRound)
	case f.batch < 0:
		return usagef("--batch %d must be at least 1 (or 0: all of S_i, the exact LML)", f.batch)
	case f.optimizer != "adam" && f.optimizer != "sgd":
		return usagef("unknown --optimizer %q (want adam or sgd)", f.optimizer)
	case f.aggregate != "sum" && f.aggregate != "mean":
		return usagef("unknown --aggregate %q (want sum or mean)", f.aggregate)
	case f.clients < 1:
		return usagef("--clients %d must be at least 1", f.clients)
	case f.newClients < 0:
		return usagef("--new-clients %d must be ≥ 0", f.newClients)
	case f.extra < 0:
		return usagef("--extra %d must be ≥ 0", f.extra)
	case f.boundSamples < 0:
		return usagef("--bound-samples %d must be ≥ 0 (0: skip the bounds)", f.boundSamples)
	case f.funcSamples < 1:
		return usagef("--func-samples %d must be at least 1", f.funcSamples)
	case f.learnedSamples < 0:
		return usagef("--bound-trained-samples %d must be ≥ 0 (0: skip that bound)", f.learnedSamples)
	case !(f.delta > 0 && f.delta < 1):
		return usagef("--delta %v must lie in (0, 1)", f.delta)
	case !(f.lambda >= 0) || math.IsInf(f.lambda, 0):
		return usagef("--lambda %v must be positive and finite (0: use --tau)", f.lambda)
	case !(f.dpEpsilon >= 0) || math.IsInf(f.dpEpsilon, 0):
		// NaN used to run silently without DP.
		return usagef("--dp-epsilon %v must be positive and finite (0: no DP)", f.dpEpsilon)
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"lr", f.lr}, {"tau", f.tau}, {"sigma-p", f.sigmaP}, {"dp-clip", f.dpClip}} {
		if err := positive(p.name, p.v); err != nil {
			return err
		}
	}
	if given("dp-delta") && !(f.dpDelta > 0 && f.dpDelta < 1) {
		return usagef("--dp-delta %v must lie in (0, 1)", f.dpDelta)
	}
	if f.dpEpsilon == 0 && !f.dpSweep {
		for _, name := range []string{"dp-mechanism", "dp-delta", "dp-clip", "dp-noise-seed"} {
			if given(name) {
				return usagef("--%s needs --dp-epsilon > 0 (without it training is not private)", name)
			}
		}
	}
	if _, _, err := parseRange(f.lossRange); err != nil {
		return usageError{err}
	}
	if _, err := fl.ParseTemperature(f.beta); err != nil {
		return usagef("--beta: %v", err)
	}
	if f.lambda != 0 && f.tauSet {
		return usagef("--lambda and --tau both set τ: give only one")
	}
	return nil
}

// dropFlags returns fs without the named flags: flags that a shared helper
// registers but the command does not use. Offered, they were accepted and
// silently ignored (experiment --seed 99 ran seed 1).
func dropFlags(fs *flag.FlagSet, names ...string) *flag.FlagSet {
	out := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	out.SetOutput(fs.Output())
	out.Usage = fs.Usage
	fs.VisitAll(func(f *flag.Flag) {
		if !slices.Contains(names, f.Name) {
			out.Var(f.Value, f.Name, f.Usage)
			out.Lookup(f.Name).DefValue = f.DefValue
		}
	})
	return out
}

// boundFlags are the flags of the bounds, which the comparisons (experiment,
// tune) do not compute.
var boundFlags = []string{"bound-samples", "func-samples", "delta", "bound-trained-samples", "loss-range"}

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

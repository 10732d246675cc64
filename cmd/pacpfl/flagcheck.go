package main

import (
	"errors"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/internal/flagvalue"
	"github.com/pacpfl/pacpfl/option"
)

// Checks of flag values (package flagvalue's), as usage errors.

func checkSeeds(seeds int, base uint64) error { return asUsage(flagvalue.CheckSeeds(seeds, base)) }

func checkNames(flagName string, names, known []string) error {
	return asUsage(flagvalue.CheckNames(flagName, names, known))
}

func checkThreads(flagName string, n int) error { return asUsage(flagvalue.CheckThreads(flagName, n)) }

// fieldUsage is err, if not nil, as a usage error; an
// *option.FieldError's message names the fields by their flags (flag gives
// a field's flag without the dashes).
func fieldUsage(err error, flag func(field string) string) error {
	var fe *option.FieldError
	if !errors.As(err, &fe) {
		return asUsage(err)
	}
	names := make([]string, len(fe.Fields))
	for i, f := range fe.Fields {
		names[i] = "--" + flag(f)
	}
	return usagef("%s", fe.Message(names...))
}

// asUsage is err, if not nil, as a usage error (exit status 2).
func asUsage(err error) error {
	if err == nil {
		return nil
	}
	return usageError{err}
}

// checkData checks the flags that depend on the data: c against the n
// existing clients, a --batch given against the m_i (a default batch is
// capped at m_i; skipped for a stand-in data set without samples).
func (f *trainFlags) checkData(ds *data.Dataset) error {
	n, maxM := len(ds.Existing), 0
	for i := range ds.Existing {
		maxM = max(maxM, ds.Existing[i].M())
	}
	if f.o.Server.ClientsPerRound > n {
		return usagef("--clients-per-round %d exceeds the %d existing clients", f.o.Server.ClientsPerRound, n)
	}
	if f.given["batch"] && maxM > 0 && f.o.Server.Batch > maxM {
		return usagef("--batch %d exceeds every client's sample count (at most %d; 0 uses all of S_i)",
			f.o.Server.Batch, maxM)
	}
	return nil
}

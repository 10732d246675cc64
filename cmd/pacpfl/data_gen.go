package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/pacpfl/pacpfl/data"
)

// `pacpfl data generate`: a large federated regression data set (data.Large)
// as the CSV file that --data reads, written as it is generated.
func init() {
	register(&command{
		name:    "data",
		summary: "write data sets: 'pacpfl data generate' a large federated regression CSV (smooth or pv)",
		run:     runData,
	})
}

func dataUsage(w io.Writer) {
	fmt.Fprintln(w, `usage: pacpfl data generate --kind smooth|pv --clients N --samples M [--new-clients K]
                           [--test-fraction F] [--seed S] --out FILE.csv|-`)
}

func runData(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "pacpfl data: which action? generate (pacpfl data generate -h for its flags)")
		return exitUsage
	}
	switch args[0] {
	case "generate":
		return runDataGenerate(args[1:], stdout, stderr)
	case "-h", "--help", "-help", "help":
		dataUsage(stdout)
		fmt.Fprintln(stdout)
		return runDataGenerate([]string{"-h"}, stdout, stderr)
	}
	fmt.Fprintf(stderr, "pacpfl data: unknown action %q (generate; pacpfl data generate -h for its flags)\n", args[0])
	return exitUsage
}

// dataGenFlags are the flags of data generate.
type dataGenFlags struct {
	cfg   data.LargeConfig
	seed  uint64
	out   string
	quiet bool
}

// Flags of one kind only: given with the other, they are refused rather
// than ignored.
var (
	smoothOnlyFlags = []string{"inputs", "noise"}
	pvOnlyFlags     = []string{"step-minutes", "year", "min-elevation", "variant"}
)

func parseDataGenerate(args []string, stderr io.Writer) (*dataGenFlags, int, bool) {
	fs := newFlagSet("data generate", stderr)
	def := data.DefaultLarge(data.LargeSmooth)
	f := &dataGenFlags{}
	c := &f.cfg
	fs.StringVar(&c.Kind, "kind", data.LargeSmooth, "smooth (each client a nonlinear function of --inputs inputs around a shared task family, plus noise) or pv (simulated rooftop PV, a house per client, --step-minutes steps over as many years as --samples daylight steps take)")
	fs.IntVar(&c.Clients, "clients", def.Clients, "existing clients (IDs client001… or house001…)")
	fs.IntVar(&c.Samples, "samples", def.Samples, fmt.Sprintf("rows per client, training and test rows together (at most %d)", data.MaxLargeSamples))
	fs.IntVar(&c.NewClients, "new-clients", 0, "new clients besides them (IDs new001… or newhouse001…, to hold out with train --new-clients; the command prints the list)")
	fs.Float64Var(&c.TestFraction, "test-fraction", def.TestFraction, "fraction of each client's rows marked test in the split column (smooth: at random; pv: the last rows in time)")
	fs.Uint64Var(&f.seed, "seed", def.Seed, "seed: the same flags write the same bytes")
	fs.StringVar(&f.out, "out", "", "the CSV file to write (- for standard output); replaced atomically")
	fs.IntVar(&c.Inputs, "inputs", def.Inputs, "smooth: number of inputs (feature columns x1…)")
	fs.Float64Var(&c.Noise, "noise", def.Noise, "smooth: typical noise std (each client's varies around it)")
	fs.IntVar(&c.StepMinutes, "step-minutes", def.StepMinutes, "pv: simulation step in minutes, a divisor of 60 (5 and 10 make about 43,000 and 22,000 daylight rows a year)")
	fs.IntVar(&c.Year, "year", def.Year, "pv: first simulated year, from January 1")
	fs.Float64Var(&c.MinElevation, "min-elevation", def.MinElevation, "pv: a row is a step with the Sun above this many degrees")
	fs.StringVar(&c.Variant, "variant", def.Variant, "pv: roofs facing s (south) or ew (east or west)")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress on standard error")
	if st, ok := parseFlags(fs, args, false); !ok {
		return nil, st, false
	}
	c.Seed = f.seed
	if err := f.validate(fs); err != nil {
		fmt.Fprintf(stderr, "pacpfl data generate: %v\n", err)
		badUsage(fs)
		return nil, exitUsage, false
	}
	return f, exitOK, true
}

// validate checks every flag by the name it was given, before any work.
func (f *dataGenFlags) validate(fs *flag.FlagSet) error {
	c := f.cfg
	if c.Kind != data.LargeSmooth && c.Kind != data.LargePV {
		return usagef("unknown --kind %q (want smooth or pv)", c.Kind)
	}
	other := pvOnlyFlags
	if c.Kind == data.LargePV {
		other = smoothOnlyFlags
	}
	for _, name := range other {
		if flagSet(fs, name) {
			return usagef("--%s is not a flag of --kind %s", name, c.Kind)
		}
	}
	switch {
	case f.out == "":
		return usagef("--out FILE.csv is required (- for standard output)")
	case c.Clients < 1:
		return usagef("--clients %d must be at least 1", c.Clients)
	case c.NewClients < 0:
		return usagef("--new-clients %d must be ≥ 0", c.NewClients)
	case c.Clients+c.NewClients > data.MaxLargeClients:
		return usagef("--clients %d and --new-clients %d: at most %d clients in all", c.Clients, c.NewClients, data.MaxLargeClients)
	case c.Samples < 2 || c.Samples > data.MaxLargeSamples:
		return usagef("--samples %d must lie in 2…%d", c.Samples, data.MaxLargeSamples)
	case !(c.TestFraction >= 0 && c.TestFraction < 1):
		return usagef("--test-fraction %v must lie in [0, 1)", c.TestFraction)
	}
	if c.Kind == data.LargeSmooth {
		switch {
		case c.Inputs < 1 || c.Inputs > data.MaxLargeInputs:
			return usagef("--inputs %d must lie in 1…%d", c.Inputs, data.MaxLargeInputs)
		case !(c.Noise >= 0) || math.IsInf(c.Noise, 0):
			return usagef("--noise %v must be finite and ≥ 0", c.Noise)
		}
	} else {
		switch {
		case c.StepMinutes < 1 || c.StepMinutes > 60 || 60%c.StepMinutes != 0:
			return usagef("--step-minutes %d must divide 60 (1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30 or 60)", c.StepMinutes)
		case c.Year < 1900 || c.Year > 2099:
			return usagef("--year %d must lie in 1900…2099 (the solar algorithm's range)", c.Year)
		case !(c.MinElevation >= 0 && c.MinElevation < 60):
			return usagef("--min-elevation %v must lie in [0, 60) degrees", c.MinElevation)
		case c.Variant != "s" && c.Variant != "ew":
			return usagef("unknown --variant %q (want s or ew)", c.Variant)
		}
	}
	if err := c.Validate(); err != nil {
		return usageError{err} // a check above missed it
	}
	if err := memoryError(fmt.Sprintf("--kind pv --samples %d", c.Samples), c.MemoryBytes()); err != nil {
		return err
	}
	return checkOutput("--out", f.out)
}

func runDataGenerate(args []string, stdout, stderr io.Writer) int {
	f, st, ok := parseDataGenerate(args, stderr)
	if !ok {
		return st
	}
	start := time.Now()
	g, err := data.NewLarge(f.cfg)
	if err != nil {
		return fail(stderr, "data generate", usageError{err})
	}
	ctx, stop := signalContext()
	defer stop()
	total := g.Rows()
	prog := newProgress(stderr, "data generate", int(total), f.quiet)
	prog.unit, prog.hideLML = "row", true
	shown := false // no progress for a file written in a moment
	report := func(done, total int64) {
		if shown || time.Since(start) > 2*time.Second {
			shown = true
			prog.update(int(done), 0)
		}
	}
	cw := &data.CountingWriter{}
	err = writeOutputStream(stdout, "--out", f.out, func(w io.Writer) error {
		cw.W = w
		return g.WriteCSV(ctx, cw, report)
	})
	prog.done()
	if errors.Is(err, context.Canceled) {
		err = fmt.Errorf("interrupted; %s not replaced", f.out)
		if d, derr := resolveOutput("--out", f.out); derr == nil && d.kind != outReplace {
			err = errors.New("interrupted; the output is incomplete")
		}
		fmt.Fprintf(stderr, "pacpfl data generate: %v\n", err)
		return exitInterrupted
	}
	text := stdout
	if f.out == "-" {
		text = stderr
	}
	if err == nil {
		err = g.WriteSummary(text, f.out, cw.N, time.Since(start))
	}
	if err != nil {
		return fail(stderr, "data generate", err)
	}
	return exitOK
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/internal/cliprogress"
	"github.com/pacpfl/pacpfl/option"
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

func parseDataGenerate(args []string, stderr io.Writer) (*dataGenFlags, int, bool) {
	fs := newFlagSet("data generate", stderr)
	def := data.DefaultLarge(data.LargeSmooth)
	f := &dataGenFlags{}
	c := &f.cfg
	fs.StringVar(&c.Kind, "kind", data.LargeSmooth, "smooth (each client a nonlinear function of --inputs inputs "+
		"around a shared task family, plus noise) or pv (simulated rooftop PV, a house per client, --step-minutes "+
		"steps over as many years as --samples daylight steps take)")
	fs.IntVar(&c.Clients, "clients", def.Clients, "existing clients (IDs client001… or house001…)")
	fs.IntVar(&c.Samples, "samples", def.Samples,
		fmt.Sprintf("rows per client, training and test rows together (at most %d)", data.MaxLargeSamples))
	fs.IntVar(&c.NewClients, "new-clients", 0, "new clients besides them (IDs new001… or newhouse001…, to hold out "+
		"with train --new-clients; the command prints the list)")
	fs.Float64Var(&c.TestFraction, "test-fraction", def.TestFraction,
		"fraction of each client's rows marked test in the split column (smooth: at random; pv: the last rows in time)")
	fs.Uint64Var(&f.seed, "seed", def.Seed, "seed: the same flags write the same bytes")
	fs.StringVar(&f.out, "out", "", "the CSV file to write (- for standard output); replaced atomically")
	fs.IntVar(&c.Inputs, "inputs", def.Inputs, "smooth: number of inputs (feature columns x1…)")
	fs.Float64Var(&c.Noise, "noise", def.Noise, "smooth: typical noise std (each client's varies around it)")
	fs.IntVar(&c.StepMinutes, "step-minutes", def.StepMinutes,
		"pv: simulation step in minutes, a divisor of 60 (5 and 10 make about 43,000 and 22,000 daylight rows a year)")
	fs.IntVar(&c.Year, "year", def.Year, "pv: first simulated year, from January 1")
	fs.Float64Var(&c.MinElevation, "min-elevation", def.MinElevation,
		"pv: a row is a step with the Sun above this many degrees")
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

// validate checks every flag by the name it was given, before any work: the
// configuration's rules are data.LargeConfig.Validate's, with its fields
// named by their flags.
func (f *dataGenFlags) validate(fs *flag.FlagSet) error {
	c := f.cfg
	err := fieldUsage(c.Validate(), option.Kebab)
	if c.Kind != data.LargeSmooth && c.Kind != data.LargePV {
		return err
	}
	for _, field := range c.ForeignFields() { // the other kind's flags are refused, not ignored
		if name := option.Kebab(field); flagSet(fs, name) {
			return usagef("--%s is not a flag of --kind %s", name, c.Kind)
		}
	}
	if f.out == "" {
		return usagef("--out FILE.csv is required (- for standard output)")
	} else if err != nil {
		return err
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
	bar := cliprogress.New(stderr, "data generate", int(g.Rows()), f.quiet)
	bar.Unit, bar.HideValue, bar.Delay = "row", true, 2*time.Second // none for a file written in a moment
	report := func(done, _ int64) { bar.Update(int(done), 0) }
	err = writeOutputStream(stdout, "--out", f.out, func(w io.Writer) error { return g.WriteCSV(ctx, w, report) })
	bar.Done()
	if errors.Is(err, context.Canceled) { // outfile.InterruptedError: what became of --out
		fmt.Fprintf(stderr, "pacpfl data generate: %v\n", err)
		return exitInterrupted
	}
	text, _ := reportStreams(f.out, stdout, stderr) // with --out - the CSV alone goes to stdout
	if err == nil {
		err = g.WriteSummary(text, f.out, time.Since(start))
	}
	if err != nil {
		return fail(stderr, "data generate", err)
	}
	return exitOK
}

package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/harness"
	"github.com/pacpfl/pacpfl/internal/cliprogress"
	"github.com/pacpfl/pacpfl/methods"
	"github.com/pacpfl/pacpfl/report"
	"github.com/pacpfl/pacpfl/runlog"
)

// runSweep is --k-sweep or --dp-sweep (name): PAC-PFL trained with the
// flags of every level, named by its label, on every seed (methods.Sweep,
// every level's options validated on the first seed's data before any
// training), the report made by mk and written as text and, with --json,
// as JSON. hidePrivate: the progress hides the private levels' LMLs.
func runSweep(x *regressionExperiment, name string, labels []string, levels []trainFlags, hidePrivate bool,
	mk func(*harness.Report) (*report.Sweep, error), stdout, stderr io.Writer) int {
	start := time.Now()
	ds0, err := levels[0].dataset(x.seedBase)
	if err != nil {
		return fail(stderr, "experiment", err)
	}
	sw := methods.Sweep{Data: levels[0].dataset, Seeds: harness.Seeds(x.seeds, x.seedBase)}
	for i := range levels {
		m, err := levels[i].pacpfl(ds0, x.seedBase)
		if err != nil {
			return fail(stderr, "experiment", fmt.Errorf("%s: %w", labels[i], err))
		}
		m.Key = labels[i]
		sw.Levels = append(sw.Levels, m)
	}
	var hide func(string) bool
	if hidePrivate {
		hide = sw.Private
	}
	hr, err := x.run(name, hide, sw.Run, stderr)
	var rep *report.Sweep
	if err == nil {
		rep, err = mk(hr)
	}
	if err != nil {
		return fail(stderr, "experiment", err)
	}
	rep.Seconds = time.Since(start).Seconds()
	return emitReport("experiment", x.jsonPath, rep, rep.WriteText, stdout, stderr)
}

// run runs an experiment (run) with its progress on stderr, a sweep's
// (sweep: its name) or the table's with a line per seed, until SIGINT or
// SIGTERM; hide tells the methods whose round values must not be shown.
func (x *regressionExperiment) run(sweep string, hide func(string) bool,
	run func(context.Context, harness.Observer) (*harness.Report, error), stderr io.Writer) (*harness.Report, error) {
	obs := &runlog.Regression{W: stderr, Quiet: x.quiet, NewBar: cliprogress.Maker(stderr, x.quiet), Sweep: sweep,
		HideValue: hide, SeedLines: sweep == ""}
	ctx, stop := signalContext()
	defer stop()
	return run(ctx, obs)
}

// runKSweep trains PAC-PFL with each number of particles k on every seed:
// the paper's Fig. 3 (existing-client RSMSE against k).
func runKSweep(x *regressionExperiment, stdout, stderr io.Writer) int {
	f := &x.f
	var labels []string
	var levels []trainFlags
	for _, k := range x.kSweep {
		g := *f
		g.o.Server.K = k
		labels, levels = append(labels, fmt.Sprintf("k=%d", k)), append(levels, g)
	}
	return runSweep(x, "k-sweep", labels, levels, false, func(hr *harness.Report) (*report.Sweep, error) {
		return report.NewKSweep(f.datasetKey(), f.poly.Existing, x.kSweep, hr)
	}, stdout, stderr)
}

// runDPSweep trains PAC-PFL at each guaranteed ε (and once without DP) on
// every seed and prints the utility at each level: the paper's Fig. 4, with
// an ε that holds.
func runDPSweep(x *regressionExperiment, stdout, stderr io.Writer) int {
	f := &x.f
	if f.dp.Epsilon != 0 {
		return fail(stderr, "experiment", usagef("--dp-sweep sets ε itself: drop --dp-epsilon"))
	}
	eps := append([]float64{0}, x.dpSweep...) // 0: no DP
	var labels []string
	var levels []trainFlags
	for _, e := range eps {
		label := "no DP"
		if e > 0 {
			label = fmt.Sprintf("ε=%g", e)
		}
		labels, levels = append(labels, label), append(levels, f.atEpsilon(e))
	}
	return runSweep(x, "dp-sweep", labels, levels, true, func(hr *harness.Report) (*report.Sweep, error) {
		return report.NewDPSweep(f.datasetKey(), f.poly.Existing, eps, string(f.dp.Mechanism), f.dp.Delta, hr)
	}, stdout, stderr)
}

// atEpsilon is a copy of the flags training at DP level e; e = 0 is the
// non-private reference run, without the DP-only flags.
func (f *trainFlags) atEpsilon(e float64) trainFlags {
	g := *f
	g.dp.Epsilon = e
	if e == 0 {
		g.dp.Mechanism, g.dpDeltaSet, g.dpNoiseSeed = fl.DPLaplace, false, 0
	}
	return g
}

// emitReport writes rep as text (write) to stdout — to stderr when
// --json - sends the JSON there — and, with --json, as JSON; it returns
// the exit status.
func emitReport(cmd, jsonPath string, rep any, write func(io.Writer), stdout, stderr io.Writer) int {
	text, js := reportStreams(jsonPath, stdout, stderr)
	write(text)
	if jsonPath != "" {
		if err := writeJSON(js, jsonPath, rep); err != nil {
			return fail(stderr, cmd, err)
		}
	}
	return exitOK
}

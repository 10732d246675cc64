package main

import (
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

// sweepLevel is one setting of a PAC-PFL sweep (--dp-sweep, --k-sweep): a
// row label and the training flags at that setting.
type sweepLevel struct {
	label   string
	hideLML bool // under DP the client LMLs are not covered by the guarantee
	flags   trainFlags
}

// runSweep is --k-sweep or --dp-sweep (name): PAC-PFL trained at every
// level on every seed (methods.Sweep, every level's options validated on
// the first seed's data before any training), the report made by mk and
// written as text by write and, with --json, as JSON.
func runSweep(x *regressionExperiment, name string, levels []sweepLevel,
	mk func(*harness.Report) (*report.Sweep, error),
	write func(io.Writer, *report.Sweep, *harness.Report), stdout, stderr io.Writer) int {
	start := time.Now()
	f0 := &levels[0].flags
	ds0, err := f0.dataset(x.seedBase)
	if err != nil {
		return fail(stderr, "experiment", err)
	}
	sw := methods.Sweep{Data: f0.dataset, Seeds: harness.Seeds(x.seeds, x.seedBase)}
	hide := map[string]bool{}
	for i := range levels {
		lv := &levels[i]
		lv.flags.o.Bounds.PriorSamples, lv.flags.learnedSamples = 0, 0
		m, err := lv.flags.pacpfl(ds0, x.seedBase)
		if err != nil {
			return fail(stderr, "experiment", fmt.Errorf("%s: %w", lv.label, err))
		}
		m.Key = lv.label
		sw.Levels = append(sw.Levels, m)
		hide[lv.label] = lv.hideLML
	}
	obs := &runlog.Regression{W: stderr, Quiet: x.quiet, NewBar: cliprogress.Maker(stderr, x.quiet), Sweep: name,
		HideValue: func(m string) bool { return hide[m] }}
	ctx, stop := signalContext()
	defer stop()
	hr, err := sw.Run(ctx, obs)
	var rep *report.Sweep
	if err == nil {
		rep, err = mk(hr)
	}
	if err != nil {
		return fail(stderr, "experiment", err)
	}
	rep.Seconds = time.Since(start).Seconds()
	return emitReport("experiment", x.jsonPath, rep, func(w io.Writer) { write(w, rep, hr) }, stdout, stderr)
}

// runKSweep trains PAC-PFL with each number of particles k on every seed:
// the paper's Fig. 3 (existing-client RSMSE against k).
func runKSweep(x *regressionExperiment, stdout, stderr io.Writer) int {
	f := &x.f
	var levels []sweepLevel
	for _, k := range x.kSweep {
		g := *f
		g.o.Server.K = k
		levels = append(levels, sweepLevel{label: fmt.Sprintf("k=%d", k), flags: g})
	}
	return runSweep(x, "k-sweep", levels, func(hr *harness.Report) (*report.Sweep, error) {
		return report.NewKSweep(f.datasetKey(), f.poly.Existing, x.kSweep, hr)
	}, func(w io.Writer, rep *report.Sweep, hr *harness.Report) {
		rep.WriteKTable(w, func(i int) string { return report.ModeLine(hr.Methods[i].PerSeed) })
		fmt.Fprintf(w, "wall time %.0fs\n", rep.Seconds)
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
	var levels []sweepLevel
	for _, e := range eps {
		label := "no DP"
		if e > 0 {
			label = fmt.Sprintf("ε=%g", e)
		}
		levels = append(levels, sweepLevel{label: label, hideLML: e > 0, flags: f.atEpsilon(e)})
	}
	return runSweep(x, "dp-sweep", levels, func(hr *harness.Report) (*report.Sweep, error) {
		return report.NewDPSweep(f.datasetKey(), f.poly.Existing, eps, string(f.dp.Mechanism), f.dp.Delta, hr)
	}, func(w io.Writer, rep *report.Sweep, _ *harness.Report) { rep.WriteDPTable(w, string(f.dp.Mechanism)) }, stdout,
		stderr)
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

package main

import (
	"fmt"
	"io"
	"time"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/harness"
	"github.com/pacpfl/pacpfl/methods"
	"github.com/pacpfl/pacpfl/report"
)

// sweepLevel is one setting of a PAC-PFL sweep (--dp-sweep, --k-sweep): a
// row label and the training flags at that setting.
type sweepLevel struct {
	label   string
	hideLML bool // under DP the client LMLs are not covered by the guarantee
	flags   trainFlags
}

// sweepReport trains PAC-PFL at every level on every seed (methods.Sweep).
// Every level's options are validated on the first seed's data before any
// training.
func sweepReport(name string, levels []sweepLevel, seeds int, seedBase uint64, quiet bool, stderr io.Writer) (*harness.Report, error) {
	f0 := &levels[0].flags
	ds0, err := f0.dataset(seedBase)
	if err != nil {
		return nil, err
	}
	sw := methods.Sweep{Data: f0.dataset, Seeds: seedRange(seeds, seedBase)}
	hide := map[string]bool{}
	for i := range levels {
		lv := &levels[i]
		lv.flags.o.Bounds.PriorSamples, lv.flags.learnedSamples = 0, 0
		hm, err := lv.flags.pacpflMethod(fl.MethodPACPFL, ds0, seedBase)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", lv.label, err)
		}
		m := hm.(methods.PACPFL)
		m.Key = lv.label
		sw.Levels = append(sw.Levels, m)
		hide[lv.label] = lv.hideLML
	}
	obs := &progressObserver{w: stderr, quiet: quiet,
		label: func(ev harness.Event) string {
			return fmt.Sprintf("%s seed %d/%d %s", name, ev.SeedIndex+1, ev.Seeds, ev.Method)
		},
		hideLML: func(ev harness.Event) bool { return hide[ev.Method] },
	}
	ctx, stop := signalContext()
	defer stop()
	return sw.Run(ctx, obs)
}

// runKSweep trains PAC-PFL with each number of particles k on every seed:
// the paper's Fig. 3 (existing-client RSMSE against k).
func runKSweep(ks []int, f *trainFlags, seeds int, seedBase uint64, quiet bool, jsonPath string, stdout, stderr io.Writer) int {
	stdout, jsonOut := reportStreams(jsonPath, stdout, stderr)
	start := time.Now()
	var levels []sweepLevel
	for _, k := range ks {
		g := *f
		g.o.Server.K = k
		levels = append(levels, sweepLevel{label: fmt.Sprintf("k=%d", k), flags: g})
	}
	hr, err := sweepReport("k-sweep", levels, seeds, seedBase, quiet, stderr)
	if err != nil {
		return fail(stderr, "experiment", err)
	}
	rep, err := report.NewKSweep(f.datasetKey(), f.poly.Existing, ks, hr)
	if err != nil {
		return fail(stderr, "experiment", err)
	}
	rep.WriteKTable(stdout, func(i int) string { return modeLine(hr.Methods[i].PerSeed) })
	rep.Seconds = time.Since(start).Seconds()
	fmt.Fprintf(stdout, "wall time %.0fs\n", rep.Seconds)
	if jsonPath != "" {
		if err := writeJSON(jsonOut, jsonPath, rep); err != nil {
			return fail(stderr, "experiment", err)
		}
	}
	return exitOK
}

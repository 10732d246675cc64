package main

import (
	"fmt"
	"io"
	"time"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/report"
)

// runDPSweep trains PAC-PFL at each guaranteed ε (and once without DP) on
// every seed and prints the utility at each level: the paper's Fig. 4, with
// an ε that holds.
func runDPSweep(eps []float64, f *trainFlags, seeds int, seedBase uint64, quiet bool, jsonPath string, stdout, stderr io.Writer) int {
	if f.dp.Epsilon != 0 {
		return fail(stderr, "experiment", usagef("--dp-sweep sets ε itself: drop --dp-epsilon"))
	}
	stdout, jsonOut := reportStreams(jsonPath, stdout, stderr)
	levels := append([]float64{0}, eps...) // 0: no DP
	start := time.Now()
	var sl []sweepLevel
	for _, e := range levels {
		label := "no DP"
		if e > 0 {
			label = fmt.Sprintf("ε=%g", e)
		}
		sl = append(sl, sweepLevel{label: label, hideLML: e > 0, flags: f.atEpsilon(e)})
	}
	hr, err := sweepReport("dp-sweep", sl, seeds, seedBase, quiet, stderr)
	if err != nil {
		return fail(stderr, "experiment", err)
	}
	rep, err := report.NewDPSweep(f.datasetKey(), f.poly.Existing, levels, string(f.dp.Mechanism), f.dp.Delta, hr)
	if err != nil {
		return fail(stderr, "experiment", err)
	}
	rep.Seconds = time.Since(start).Seconds()
	rep.WriteDPTable(stdout, string(f.dp.Mechanism))
	if jsonPath != "" {
		if err := writeJSON(jsonOut, jsonPath, rep); err != nil {
			return fail(stderr, "experiment", err)
		}
	}
	return exitOK
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

package main

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/report"
)

// runDPSweep trains PAC-PFL at each guaranteed ε (and once without DP) on
// every seed and prints the utility at each level: the paper's Fig. 4, with
// an ε that holds.
func runDPSweep(eps []float64, f *trainFlags, seeds int, seedBase uint64, quiet bool, jsonPath string, stdout, stderr io.Writer) int {
	if f.dpEpsilon != 0 {
		return fail(stderr, "experiment", usagef("--dp-sweep sets ε itself: drop --dp-epsilon"))
	}
	stdout, jsonOut := reportStreams(jsonPath, stdout, stderr)
	levels := append([]float64{0}, eps...) // 0: no DP
	start := time.Now()
	rep := report.Sweep{Dataset: f.datasetKey(), Clients: f.clients}
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
	rep.Seeds = hr.Seeds
	mech := f.dpMechanism
	for li, e := range levels {
		mr := hr.Methods[li]
		row := report.DPLevel{Epsilon: report.Float(e), Mechanism: mech, Statement: mr.Results[0].Train.Privacy.Statement,
			Seconds: mr.Seconds, PerSeed: report.PerSeed(mr.PerSeed)}
		row.Existing, row.New = report.Groups(mr)
		if e == 0 {
			row.Epsilon, row.Mechanism = report.Float(math.Inf(1)), ""
		} else if mech == string(fl.DPGaussian) {
			row.Delta = f.dpDelta
		}
		rep.DP = append(rep.DP, row)
	}
	rep.Seconds = time.Since(start).Seconds()
	fmt.Fprintf(stdout, "PAC-PFL under differential privacy (%s mechanism), %s, %d existing clients, mean ± 95%% CI over %d seeds; ε is the guarantee that holds (see the statement below)\n\n", mech, datasetTitle(f.datasetKey()), f.clients, seeds)
	fmt.Fprintln(stdout, "| ε | RSMSE existing | RSMSE new | CE existing | CE new |")
	fmt.Fprintln(stdout, "|---|---|---|---|---|")
	for _, r := range rep.DP {
		lab := "no DP"
		if !math.IsInf(float64(r.Epsilon), 1) {
			lab = fmt.Sprintf("%g", float64(r.Epsilon))
		}
		fmt.Fprintf(stdout, "| %s | %s | %s | %s | %s |\n", lab, fmtSummary(r.Existing.RSMSE), fmtSummary(r.New.RSMSE), fmtSummary(r.Existing.CE), fmtSummary(r.New.CE))
	}
	if len(rep.DP) > 1 {
		fmt.Fprintf(stdout, "\nguarantee (ε = %g shown): %s\n", float64(rep.DP[1].Epsilon), rep.DP[1].Statement)
	}
	fmt.Fprintf(stdout, "wall time %.0fs\n", rep.Seconds)
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
	g.dpEpsilon = e
	if e == 0 {
		g.dpMechanism, g.dpDeltaSet, g.dpNoiseSeed = string(fl.DPLaplace), false, 0
	}
	return g
}

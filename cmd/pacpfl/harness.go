package main

import (
	"fmt"
	"io"

	"github.com/pacpfl/pacpfl/harness"
	"github.com/pacpfl/pacpfl/methods"
	"github.com/pacpfl/pacpfl/report"
)

// progressObserver prints an experiment's progress as train does: one
// progress line (or bar) per method and seed while it trains, then onDone
// (if set and not quiet) when it has finished on the seed.
type progressObserver struct {
	w     io.Writer
	quiet bool
	// label names a run in its progress line (default "method seed i/n");
	// hideLML hides the round's LML (DP runs: not covered by the
	// guarantee).
	label   func(harness.Event) string
	hideLML func(harness.Event) bool
	onDone  func(harness.Event)
	prog    *progress
}

// Observe implements harness.Observer.
func (p *progressObserver) Observe(ev harness.Event) {
	switch ev.Kind {
	case harness.Round:
		if p.prog == nil {
			label := fmt.Sprintf("%s seed %d/%d", ev.Method, ev.SeedIndex+1, ev.Seeds)
			if p.label != nil {
				label = p.label(ev)
			}
			p.prog = newProgress(p.w, label, ev.Rounds, p.quiet)
			p.prog.hideLML = p.hideLML != nil && p.hideLML(ev)
		}
		p.prog.update(ev.Round, ev.Value)
	case harness.Done:
		if p.prog != nil {
			p.prog.done()
			p.prog = nil
		}
		if p.onDone != nil && !p.quiet {
			p.onDone(ev)
		}
	}
}

// seedRange is seeds consecutive seeds from base.
func seedRange(seeds int, base uint64) []uint64 {
	out := make([]uint64, seeds)
	for i := range out {
		out[i] = base + uint64(i)
	}
	return out
}

// Formatting shared with plot and the sweeps (report's).

// methodLabel is the table label of method m (methods.Label).
func methodLabel(m string) string { return methods.Label(m) }

// datasetTitle is the data set's name as the paper writes it.
func datasetTitle(key string) string { return report.DatasetTitle(key) }

// fmtSummary is s with two decimals, "–" for an undefined figure.
func fmtSummary(s report.Summary) string { return s.Text("%.2f") }

// modeLine describes the mode specialisation among a method's per-seed
// values, or is empty when there is none (report.ModeLine).
func modeLine(v map[string][]float64) string { return report.ModeLine(v) }

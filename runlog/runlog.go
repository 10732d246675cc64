// Package runlog reports the progress of long runs as log lines: Phases
// for a run made of named phases of counted steps (GenFL's prior, its
// rounds, FEDBOUND's sampling); GenFL, the observer of pacpfl experiment
// genfl built on it; and Classification, the observer of experiment
// fmnist, which shows each method's rounds on a Bar the program supplies.
// Phases writes a phase's lines at most once per Every, and always its
// last step; Quiet writes nothing.
//
// Concurrency: a Phases or an observer is used by one goroutine at a time
// (the harness calls its observer from the goroutine that called Run).
package runlog

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/pacpfl/pacpfl/harness"
	"github.com/pacpfl/pacpfl/methods"
	"github.com/pacpfl/pacpfl/report"
)

// Every is the interval between two lines of one phase.
const Every = 5 * time.Second

// Phases reports the phases of one run: a line when a phase starts, then
// lines of its steps with a bar, the elapsed time and an estimate of the
// time left.
type Phases struct {
	w      io.Writer
	label  string
	quiet  bool
	last   time.Time
	pstart time.Time
}

// NewPhases reports to w, each line starting with label; quiet: nothing.
func NewPhases(w io.Writer, label string, quiet bool) *Phases {
	now := time.Now()
	return &Phases{w: w, label: label, quiet: quiet, last: now, pstart: now}
}

// Phase starts the phase name.
func (p *Phases) Phase(name string) {
	p.pstart = time.Now()
	p.last = time.Time{}
	if !p.quiet {
		fmt.Fprintf(p.w, "%s: %s…\n", p.label, name)
	}
}

func (p *Phases) line(what string, done, total int, extra string) {
	if p.quiet {
		return
	}
	now := time.Now()
	if now.Sub(p.last) < Every && done != total {
		return
	}
	p.last = now
	el := now.Sub(p.pstart)
	eta := time.Duration(0)
	if done > 0 {
		eta = time.Duration(float64(el) * float64(total-done) / float64(done))
	}
	const width = 20
	filled := width * done / max(1, total)
	fmt.Fprintf(p.w, "%s: %s [%s%s] %d/%d%s, elapsed %s, ETA %s\n", p.label, what, strings.Repeat("=", filled),
		strings.Repeat(" ", width-filled),
		done, total, extra, el.Round(time.Second), eta.Round(time.Second))
}

// Round reports round of rounds of what (GenFL, prior ERM) with the mean
// of value ("loss", "objective") v.
func (p *Phases) Round(what, value string, round, rounds int, v float64) {
	p.line(what+" round", round, rounds, fmt.Sprintf(", mean %s %.4f", value, v))
}

// Count reports done of total units (pairs, users) of what.
func (p *Phases) Count(what, unit string, done, total int) {
	p.line(what+" "+unit, done, total, "")
}

// GenFL is the observer of an experiment of methods.GenFLBound: each
// phase as it starts, its rounds or counts, then each seed's figures.
type GenFL struct {
	W     io.Writer
	Quiet bool
	// Full: FEDBOUND draws weights (genfl.Full) rather than pairs.
	Full bool
	p    *Phases
}

// Observe implements harness.Observer.
func (o *GenFL) Observe(ev harness.Event) {
	if o.p == nil {
		o.p = NewPhases(o.W, fmt.Sprintf("seed %d (%d/%d)", ev.Seed, ev.SeedIndex+1, ev.Seeds), o.Quiet)
	}
	switch ev.Kind {
	case harness.Phase:
		o.p.Phase(ev.Phase)
	case harness.Round:
		switch ev.Phase {
		case methods.PhasePriorERM:
			o.p.Round("prior ERM", "loss", ev.Round, ev.Rounds, ev.Value)
		case methods.PhasePACPFLServer:
			o.p.Round("PAC-PFL server", "ln Z^C", ev.Round, ev.Rounds, ev.Value)
		case "":
			o.p.Round("GenFL", "objective", ev.Round, ev.Rounds, ev.Value)
		case methods.PhaseSampling:
			unit := "pairs"
			if o.Full {
				unit = "weight draws"
			}
			o.p.Count("FEDBOUND sampling", unit, ev.Round, ev.Rounds)
		case methods.PhasePerUser:
			o.p.Count("per-user", "users", ev.Round, ev.Rounds)
		}
	case harness.Done:
		o.p = nil
		if r, err := report.NewGenFLSeed(ev.Seed, ev.Result); err == nil && !o.Quiet {
			fmt.Fprintf(o.W,
				"experiment genfl: seed %d: bound %.4f, test error %.4f, train error %.4f, KL %.1f (%.0fs)\n",
				ev.Seed, r.Bound, r.TestError, r.TrainError, r.KL, r.TotalSeconds)
		}
	}
}

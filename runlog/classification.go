package runlog

import (
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/harness"
	"github.com/pacpfl/pacpfl/methods"
	"github.com/pacpfl/pacpfl/report"
)

// Bar shows the progress of one run of counted steps (a program's
// terminal bar or log lines).
type Bar interface {
	// Update reports step of the total, with the step's value (NaN: none).
	Update(step int, value float64)
	// Done ends the display.
	Done()
}

// BarMaker makes the Bar of label over total steps of unit ("round",
// "client"); hideValue: the steps' values are not shown.
type BarMaker func(label string, total int, unit string, hideValue bool) Bar

// Classification is the observer of a classification experiment (pacpfl
// experiment fmnist): a Bar per method and seed (PAC-PFL's
// personalisation after its rounds with a Bar of its own, GenFL's phases
// as Phases lines), then each seed's figures on a line. OnDone, if set,
// receives every Done event first. Each note of the seeds' data sets
// (data.Dataset.Notes) is written once, when it first appears, even when
// Quiet: a note qualifies the results.
type Classification struct {
	W      io.Writer
	Quiet  bool
	NewBar BarMaker
	OnDone func(harness.Event)
	bar    Bar
	phase  string
	gp     *Phases
	notes  []string
}

// Observe implements harness.Observer.
func (o *Classification) Observe(ev harness.Event) {
	switch ev.Kind {
	case harness.DataReady:
		for _, n := range ev.Data.Notes {
			if !slices.Contains(o.notes, n) {
				o.notes = append(o.notes, n)
				fmt.Fprintf(o.W, "note: %s\n", n)
			}
		}
	case harness.Phase:
		o.genfl(ev).Phase(ev.Phase)
	case harness.Round:
		if ev.Phase == methods.PhasePriorERM {
			o.genfl(ev).Round("prior ERM", "loss", ev.Round, ev.Rounds, ev.Value)
			return
		}
		if o.bar == nil || ev.Phase != o.phase {
			o.start(ev)
		}
		o.bar.Update(ev.Round, ev.Value)
	case harness.Done:
		if o.bar != nil {
			o.bar.Done()
		}
		o.bar, o.gp, o.phase = nil, nil, ""
		if o.OnDone != nil {
			o.OnDone(ev)
		}
		if !o.Quiet {
			res := ev.Result
			ex, nw := report.NewClassMetrics(res.ExistingClass), report.NewClassMetrics(res.NewClass)
			fmt.Fprintf(o.W,
				"experiment: seed %d %-8s existing accuracy %.2f%% CE %.4f | new accuracy %.2f%% CE %.4f%s (%.0fs)\n",
				ev.Seed, ev.Method, ex.Accuracy, ex.CE, nw.Accuracy, nw.CE, globalText(res), res.Seconds)
		}
	}
}

// globalText is the global model's accuracy for a seed's line.
func globalText(r *fl.MethodResult) string {
	if r.GlobalClass == nil {
		return ""
	}
	return fmt.Sprintf(" | global model accuracy %.2f%%", r.GlobalClass.MeanAccuracy)
}

// start begins the Bar of ev's method (or phase) on its seed.
func (o *Classification) start(ev harness.Event) {
	if o.bar != nil {
		o.bar.Done()
	}
	name := ev.Method
	if ev.Method == methods.MethodFedVIFedAvg || ev.Method == methods.MethodFedVIFedAvgFT {
		name = "fedavg (FedVI's CNN)"
	}
	label := fmt.Sprintf("%s seed %d/%d", name, ev.SeedIndex+1, ev.Seeds)
	if ev.Phase != "" {
		label += " " + ev.Phase
	}
	unit := ""
	if ev.Phase == methods.PhasePersonalisation {
		unit = "client"
	}
	o.bar, o.phase = o.NewBar(label, ev.Rounds, unit, math.IsNaN(ev.Value)), ev.Phase
}

func (o *Classification) genfl(ev harness.Event) *Phases {
	if o.gp == nil {
		o.gp = NewPhases(o.W, fmt.Sprintf("genfl seed %d", ev.Seed), o.Quiet)
	}
	return o.gp
}

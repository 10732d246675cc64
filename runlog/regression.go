package runlog

import (
	"fmt"
	"io"

	"github.com/pacpfl/pacpfl/harness"
	"github.com/pacpfl/pacpfl/report"
)

// Regression is the observer of a regression experiment or of a sweep
// (pacpfl experiment polynomial|pv, --k-sweep, --dp-sweep): a Bar per
// method and seed over its rounds, then, with SeedLines and not Quiet,
// each seed's figures on a line.
type Regression struct {
	W      io.Writer
	Quiet  bool
	NewBar BarMaker
	// Sweep, if set, names a sweep: a Bar is then labelled "<Sweep> seed
	// i/n <level>" instead of "<method> seed i/n".
	Sweep string
	// HideValue, if set, tells the methods whose round values must not be
	// shown (a DP run's client LMLs, which its guarantee does not cover).
	HideValue func(method string) bool
	SeedLines bool
	bar       Bar
}

// Observe implements harness.Observer.
func (o *Regression) Observe(ev harness.Event) {
	switch ev.Kind {
	case harness.Round:
		if o.bar == nil {
			label := fmt.Sprintf("%s seed %d/%d", ev.Method, ev.SeedIndex+1, ev.Seeds)
			if o.Sweep != "" {
				label = fmt.Sprintf("%s seed %d/%d %s", o.Sweep, ev.SeedIndex+1, ev.Seeds, ev.Method)
			}
			o.bar = o.NewBar(label, ev.Rounds, "", o.HideValue != nil && o.HideValue(ev.Method))
		}
		o.bar.Update(ev.Round, ev.Value)
	case harness.Done:
		if o.bar != nil {
			o.bar.Done()
			o.bar = nil
		}
		if o.SeedLines && !o.Quiet {
			res, m := ev.Result, func(x float64) string { return report.Metric("%.3f", x) }
			fmt.Fprintf(o.W, "experiment: seed %d %-8s existing RSMSE %s CE %s | new RSMSE %s CE %s (%.1fs)\n",
				ev.Seed, ev.Method, m(res.Existing.MeanRSMSE), m(res.Existing.MeanCE),
				m(res.New.MeanRSMSE), m(res.New.MeanCE), res.Seconds)
		}
	}
}

package plot

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/pacpfl/pacpfl/report"
)

// sweepFile is a sweep report as ReadSweep reads it, with the keys that
// give away a report of another kind.
type sweepFile struct {
	report.Sweep
	Methods    *json.RawMessage `json:"methods"`     // an experiment report
	LMLHistory *json.RawMessage `json:"lml_history"` // a train report
}

// ReadSweep reads the sweep report (pacpfl experiment --k-sweep or
// --dp-sweep --json) at path and checks that it is one sweep; its errors
// name the file and say when it is a report of another kind. Sweep checks
// the levels.
func ReadSweep(path string) (*report.Sweep, error) {
	var sf sweepFile
	if err := report.ReadFile(path, &sf); err != nil {
		return nil, err
	}
	switch {
	case sf.K != nil && sf.DP != nil:
		return nil, fmt.Errorf("%s has both \"k_sweep\" and \"dp_sweep\": not a report pacpfl writes", path)
	case sf.K == nil && sf.DP == nil && sf.Methods != nil:
		return nil, fmt.Errorf("%s is an experiment report: plot it with pacpfl plot experiment", path)
	case sf.K == nil && sf.DP == nil && sf.LMLHistory != nil:
		return nil, fmt.Errorf("%s is a train report: plot it with pacpfl plot training", path)
	case sf.K == nil && sf.DP == nil:
		return nil, fmt.Errorf("%s has no \"k_sweep\" or \"dp_sweep\": is it the --json of pacpfl experiment "+
			"--k-sweep or --dp-sweep?", path)
	}
	return &sf.Sweep, nil
}

// sweepPoint is one level of a sweep: its x and each group's mean and
// half-width of the 95 % interval (NaN: none).
type sweepPoint struct {
	x        float64
	mean, ci [2]float64 // existing, new
}

// sweepData is a sweep report checked and reduced to one metric.
type sweepData struct {
	kind   string // "k" or "dp"
	points []sweepPoint
	// ref is the non-private run of a DP sweep (x unused); nil without one.
	ref *sweepPoint
	// mech names a DP sweep's mechanism and δ, for the axis label.
	mech string
}

// sweepGroups are the two client groups of every sweep figure.
var sweepGroups = [2]plotColor{{colBlue, "existing clients"}, {colOrange, "new clients"}}

// metricOf is metric ("rsmse" or "ce") of a group.
func metricOf(g *report.Group, metric string) report.Summary {
	if metric == "ce" {
		return g.CE
	}
	return g.RSMSE
}

// sweepLevel is one level of s as a point and, for a DP sweep, its ε
// (NaN: the non-private run), mechanism and δ.
type sweepLevel struct {
	existing, new report.Group
	k             int
	eps           float64
	mech          string
	delta         float64
}

// levels is s's levels in file order.
func levels(s *report.Sweep) []sweepLevel {
	var ls []sweepLevel
	for _, l := range s.K {
		ls = append(ls, sweepLevel{existing: l.Existing, new: l.New, k: l.K})
	}
	for _, l := range s.DP {
		ls = append(ls, sweepLevel{existing: l.Existing, new: l.New, eps: float64(l.Epsilon),
			mech: l.Mechanism, delta: l.Delta})
	}
	return ls
}

// sweepSeries checks a sweep and returns metric ("rsmse" or "ce") at every
// level.
func sweepSeries(s *report.Sweep, metric string) (*sweepData, error) {
	switch {
	case metric != "rsmse" && metric != "ce":
		return nil, fmt.Errorf("metric %q: want rsmse or ce", metric)
	case s.K != nil && s.DP != nil:
		return nil, fmt.Errorf("both a k-sweep and a dp-sweep: not a report pacpfl writes")
	}
	d := &sweepData{kind: "k"}
	if s.K == nil {
		d.kind = "dp"
	}
	seen := map[float64]bool{}
	for i, r := range levels(s) {
		p, err := r.point(i, metric)
		if err != nil {
			return nil, err
		}
		switch {
		case d.kind == "k" && r.k < 1:
			return nil, fmt.Errorf("row %d of \"k_sweep\" has no k ≥ 1", i+1)
		case d.kind == "k":
			p.x = float64(r.k)
		case math.IsNaN(r.eps):
			if d.ref != nil {
				return nil, fmt.Errorf("\"dp_sweep\" has two non-private rows (epsilon null)")
			}
			ref := p
			d.ref = &ref
			continue
		case !(r.eps > 0) || math.IsInf(r.eps, 0):
			return nil, fmt.Errorf("row %d of \"dp_sweep\": ε = %v, want a finite ε > 0 "+
				"(null for the non-private run)", i+1, r.eps)
		default:
			p.x = r.eps
			if d.mech == "" && r.mech != "" {
				d.mech = r.mech + " mechanism"
				if r.delta > 0 {
					d.mech += fmt.Sprintf(", δ = %g", r.delta)
				}
			}
		}
		if seen[p.x] {
			return nil, fmt.Errorf("the level %s=%g appears twice", d.kind, p.x)
		}
		seen[p.x] = true
		d.points = append(d.points, p)
	}
	return d, d.check(metric)
}

// point is metric of both groups of level i.
func (r *sweepLevel) point(i int, metric string) (sweepPoint, error) {
	var p sweepPoint
	for g, grp := range [2]*report.Group{&r.existing, &r.new} {
		s := metricOf(grp, metric)
		p.mean[g], p.ci[g] = float64(s.Mean), float64(s.CI95)
		if m, c := p.mean[g], p.ci[g]; math.IsInf(m, 0) || math.IsInf(c, 0) || c < 0 {
			return p, fmt.Errorf("row %d: %s %s = %v ± %v is not a mean and a non-negative interval",
				i+1, sweepGroups[g].label, metric, m, c)
		}
	}
	return p, nil
}

// check reports a sweep with nothing to draw.
func (d *sweepData) check(metric string) error {
	if len(d.points) == 0 {
		what := "no k"
		if d.kind == "dp" {
			what = "no private level (only the non-private run)"
		}
		return fmt.Errorf("the sweep has %s: nothing to plot", what)
	}
	for _, p := range d.points {
		if !math.IsNaN(p.mean[0]) || !math.IsNaN(p.mean[1]) {
			return nil
		}
	}
	return fmt.Errorf("no level has a value of %s (null everywhere): nothing to plot", metric)
}

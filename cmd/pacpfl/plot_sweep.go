package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/pacpfl/pacpfl/report"
)

// pacpfl plot sweep: the figures of `experiment --k-sweep` (the paper's
// Fig. 3, RSMSE against the number of particles k) and `experiment
// --dp-sweep` (Fig. 4, RSMSE against the guaranteed ε, the non-private run
// as a reference line) from their --json reports.

// sweepMetric is one metric of a sweep level over the seeds; nil is JSON
// null (no value, or no interval with one seed).
type sweepMetric struct {
	Mean *float64 `json:"mean"`
	CI95 *float64 `json:"ci95"`
}

// sweepLevelFile is one row of a sweep report: k or ε and both groups.
type sweepLevelFile struct {
	K        *int                   `json:"k"`
	Epsilon  *float64               `json:"epsilon"` // null: the non-private run
	Mech     string                 `json:"mechanism"`
	Delta    float64                `json:"delta"`
	Existing map[string]sweepMetric `json:"existing"`
	New      map[string]sweepMetric `json:"new"`
}

// sweepFile is what plot sweep reads of a sweep report.
type sweepFile struct {
	Dataset    string            `json:"dataset"`
	Seeds      []uint64          `json:"seeds"`
	Clients    int               `json:"clients"`
	K          *[]sweepLevelFile `json:"k_sweep"`
	DP         *[]sweepLevelFile `json:"dp_sweep"`
	Methods    *json.RawMessage  `json:"methods"`     // an experiment report: the wrong file
	LMLHistory *json.RawMessage  `json:"lml_history"` // a train report: the wrong file
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

// metricValue is a group's metric of one level as (mean, ci), NaN where the
// report has null.
func metricValue(g map[string]sweepMetric, metric string) (mean, ci float64) {
	mean, ci = math.NaN(), math.NaN()
	if m, ok := g[metric]; ok {
		if m.Mean != nil {
			mean = *m.Mean
		}
		if m.CI95 != nil {
			ci = *m.CI95
		}
	}
	return mean, ci
}

// sweepSeries checks a sweep report and returns metric at every level.
func sweepSeries(path string, sf *sweepFile, metric string) (*sweepData, error) {
	switch {
	case sf.K != nil && sf.DP != nil:
		return nil, fmt.Errorf("%s has both \"k_sweep\" and \"dp_sweep\": not a report pacpfl writes", path)
	case sf.K == nil && sf.DP == nil && sf.Methods != nil:
		return nil, fmt.Errorf("%s is an experiment report: plot it with pacpfl plot experiment", path)
	case sf.K == nil && sf.DP == nil && sf.LMLHistory != nil:
		return nil, fmt.Errorf("%s is a train report: plot it with pacpfl plot training", path)
	case sf.K == nil && sf.DP == nil:
		return nil, fmt.Errorf("%s has no \"k_sweep\" or \"dp_sweep\": is it the --json of pacpfl experiment --k-sweep or --dp-sweep?", path)
	}
	d := &sweepData{kind: "k"}
	rows := sf.K
	if sf.DP != nil {
		d.kind, rows = "dp", sf.DP
	}
	seen := map[float64]bool{}
	for i, r := range *rows {
		var p sweepPoint
		for g, grp := range [2]map[string]sweepMetric{r.Existing, r.New} {
			p.mean[g], p.ci[g] = metricValue(grp, metric)
			if m, c := p.mean[g], p.ci[g]; math.IsInf(m, 0) || math.IsInf(c, 0) || c < 0 {
				return nil, fmt.Errorf("%s: row %d: %s %s = %v ± %v is not a mean and a non-negative interval", path, i+1, sweepGroups[g].label, metric, m, c)
			}
		}
		switch {
		case d.kind == "k" && (r.K == nil || *r.K < 1):
			return nil, fmt.Errorf("%s: row %d of \"k_sweep\" has no k ≥ 1", path, i+1)
		case d.kind == "k":
			p.x = float64(*r.K)
		case r.Epsilon == nil:
			if d.ref != nil {
				return nil, fmt.Errorf("%s: \"dp_sweep\" has two non-private rows (epsilon null)", path)
			}
			ref := p
			d.ref = &ref
			continue
		case !(*r.Epsilon > 0) || math.IsInf(*r.Epsilon, 0):
			return nil, fmt.Errorf("%s: row %d of \"dp_sweep\": ε = %v, want a finite ε > 0 (null for the non-private run)", path, i+1, *r.Epsilon)
		default:
			p.x = *r.Epsilon
			if d.mech == "" && r.Mech != "" {
				d.mech = r.Mech + " mechanism"
				if r.Delta > 0 {
					d.mech += fmt.Sprintf(", δ = %g", r.Delta)
				}
			}
		}
		if seen[p.x] {
			return nil, fmt.Errorf("%s: the level %s=%g appears twice", path, d.kind, p.x)
		}
		seen[p.x] = true
		d.points = append(d.points, p)
	}
	if len(d.points) == 0 {
		what := "no k"
		if d.kind == "dp" {
			what = "no private level (only the non-private run)"
		}
		return nil, fmt.Errorf("%s: the sweep has %s: nothing to plot", path, what)
	}
	finite := false
	for _, p := range d.points {
		finite = finite || !math.IsNaN(p.mean[0]) || !math.IsNaN(p.mean[1])
	}
	if !finite {
		return nil, fmt.Errorf("%s: no level has a value of %s (null everywhere): nothing to plot", path, metric)
	}
	return d, nil
}

// sweepXY is a group's finite means with their intervals (0 where there is
// none), x shifted by shift so the two groups' bars do not overlap.
type sweepXY struct {
	plotter.XYs
	plotter.YErrors
}

func (d *sweepData) series(g int, shift func(float64) float64) (sweepXY, bool) {
	var s sweepXY
	anyCI := false
	for _, p := range d.points {
		if math.IsNaN(p.mean[g]) {
			continue
		}
		c := p.ci[g]
		if math.IsNaN(c) {
			c = 0
		} else {
			anyCI = true
		}
		s.XYs = append(s.XYs, plotter.XY{X: shift(p.x), Y: p.mean[g]})
		s.YErrors = append(s.YErrors, struct{ Low, High float64 }{c, c})
	}
	return s, anyCI
}

// sweepFigure draws metric against k (linear axis) or ε (log axis): each
// group's mean over the seeds with its 95 % interval, and for a DP sweep the
// non-private run as horizontal lines.
func sweepFigure(sf *sweepFile, d *sweepData, metric string) (*plot.Plot, error) {
	name := map[string]string{"rsmse": "RSMSE", "ce": "calibration error"}[metric]
	seeds := fmt.Sprintf("mean ± 95%% CI over %d seeds", len(sf.Seeds))
	if len(sf.Seeds) == 1 {
		seeds = "1 seed"
	}
	ds := datasetTitle(sf.Dataset)
	ylabel := fmt.Sprintf("%s (%s)", name, seeds)
	var p *plot.Plot
	lo, hi := math.Inf(1), math.Inf(-1)
	xmin, xmax := math.Inf(1), math.Inf(-1)
	for _, pt := range d.points {
		xmin, xmax = math.Min(xmin, pt.x), math.Max(xmax, pt.x)
		for g := range 2 {
			if !math.IsNaN(pt.mean[g]) {
				c := pt.ci[g]
				if math.IsNaN(c) {
					c = 0
				}
				lo, hi = math.Min(lo, pt.mean[g]-c), math.Max(hi, pt.mean[g]+c)
			}
		}
	}
	var shift [2]func(float64) float64
	if d.kind == "k" {
		p = newFigure(fmt.Sprintf("%s: PAC-PFL's %s against the number of particles k", ds, name), "number of SVGD particles k", ylabel)
		w := 0.015 * math.Max(xmax-xmin, 1)
		shift = [2]func(float64) float64{func(x float64) float64 { return x - w }, func(x float64) float64 { return x + w }}
		var ticks []plot.Tick
		for _, pt := range d.points {
			ticks = append(ticks, plot.Tick{Value: pt.x, Label: strconv.Itoa(int(pt.x))})
		}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
		pad := 0.06 * math.Max(xmax-xmin, 1)
		p.X.Min, p.X.Max = xmin-pad, xmax+pad
	} else {
		title := fmt.Sprintf("%s: PAC-PFL's %s against the guaranteed ε", ds, name)
		if d.mech != "" {
			title += ", " + d.mech
		}
		p = newFigure(title, "guaranteed ε (log scale; smaller is more private)", ylabel)
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
		f := math.Pow(xmax/xmin, 0.008)
		if xmax == xmin {
			f = 1.02
		}
		shift = [2]func(float64) float64{func(x float64) float64 { return x / f }, func(x float64) float64 { return x * f }}
		p.X.Min, p.X.Max = xmin/math.Pow(f, 6), xmax*math.Pow(f, 6)
		if r := d.ref; r != nil {
			for g := range 2 {
				if !math.IsNaN(r.mean[g]) {
					lo, hi = math.Min(lo, r.mean[g]), math.Max(hi, r.mean[g])
				}
			}
		}
	}
	p.Add(plotter.NewGrid())
	bars := false
	for g := range 2 {
		s, anyCI := d.series(g, shift[g])
		if len(s.XYs) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(s.XYs)
		if err != nil {
			return nil, err
		}
		line.Color, line.Width = sweepGroups[g].c, vg.Points(2)
		points.Color, points.Radius = sweepGroups[g].c, vg.Points(3.5)
		p.Add(line, points)
		p.Legend.Add(sweepGroups[g].label, line, points)
		if anyCI {
			eb, err := plotter.NewYErrorBars(s)
			if err != nil {
				return nil, err
			}
			eb.Color, eb.Width, eb.CapWidth = sweepGroups[g].c, vg.Points(1.5), vg.Points(8)
			p.Add(eb)
			bars = true
		}
	}
	if r := d.ref; r != nil {
		for g := range 2 {
			if math.IsNaN(r.mean[g]) {
				continue
			}
			ref := plotter.NewFunction(func(float64) float64 { return r.mean[g] })
			ref.Color, ref.Width = colRed, vg.Points(1.5)
			if g == 1 {
				ref.Dashes = []vg.Length{vg.Points(6), vg.Points(4)}
			}
			p.Add(ref)
			p.Legend.Add(fmt.Sprintf("non-private run, %s", sweepGroups[g].label), ref)
		}
	}
	if !bars && len(sf.Seeds) > 1 {
		p.Legend.Add("(no intervals in the report)")
	}
	legendRoom(p, lo, hi)
	p.Legend.Left = false
	return p, nil
}

func runPlotSweep(args []string, stdout, stderr io.Writer) int {
	var metric *string
	jsonPath, out, format, st, ok := reportFlags("sweep", args, stderr, func(fs *flag.FlagSet) {
		metric = fs.String("metric", "rsmse", "the metric: rsmse or ce")
	})
	if !ok {
		return st
	}
	if *metric != "rsmse" && *metric != "ce" {
		return fail(stderr, "plot sweep", usagef("--metric %q: want rsmse or ce", *metric))
	}
	var sf sweepFile
	if err := report.ReadFile(jsonPath, &sf); err != nil {
		return fail(stderr, "plot sweep", err)
	}
	d, err := sweepSeries(jsonPath, &sf, *metric)
	if err != nil {
		return fail(stderr, "plot sweep", err)
	}
	p, err := sweepFigure(&sf, d, *metric)
	if err == nil {
		err = writeFigure(stdout, p, format, out)
	}
	if err != nil {
		return fail(stderr, "plot sweep", fmt.Errorf("%s: %w", jsonPath, err))
	}
	what := map[string]string{"k": "k", "dp": "ε"}[d.kind]
	fmt.Fprintf(stdout, "%s at %d values of %s plotted into %s\n", *metric, len(d.points), what, out)
	return exitOK
}

package plot

import (
	"fmt"
	"math"
	"strconv"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/pacpfl/pacpfl/report"
)

// SweepInfo says what Sweep drew: the swept parameter ("k" or "ε") and the
// number of its levels (without a DP sweep's non-private run).
type SweepInfo struct {
	Param  string
	Levels int
}

// Sweep draws metric ("rsmse" or "ce") of a k- or DP sweep in format ("png"
// or "svg"): against k (the paper's Fig. 3, linear axis) or the guaranteed
// ε (Fig. 4, log axis), each group's mean over the seeds with its 95 %
// interval, and for a DP sweep the non-private run as horizontal lines. Its
// errors say which level of s is wrong and how.
func Sweep(s *report.Sweep, metric, format string) ([]byte, SweepInfo, error) {
	d, err := sweepSeries(s, metric)
	if err != nil {
		return nil, SweepInfo{}, err
	}
	p, err := sweepFigure(s, d, metric)
	if err != nil {
		return nil, SweepInfo{}, err
	}
	img, err := render(p, format)
	info := SweepInfo{Param: map[string]string{"k": "k", "dp": "ε"}[d.kind], Levels: len(d.points)}
	return img, info, err
}

// sweepXY is a group's finite means with their intervals (0 where there is
// none), x shifted so the two groups' bars do not overlap.
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

// ranges is the x range of the levels and the y range of the means with
// their intervals.
func (d *sweepData) ranges() (xmin, xmax, lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	xmin, xmax = math.Inf(1), math.Inf(-1)
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
	return xmin, xmax, lo, hi
}

// sweepAxes is the figure with its x axis: linear with a tick at each k,
// or logarithmic in ε; shift moves each group's points apart.
func sweepAxes(s *report.Sweep, d *sweepData, name, ylabel string) (
	p *gplot.Plot, shift [2]func(float64) float64, lo, hi float64) {
	ds := report.DatasetTitle(s.Dataset)
	xmin, xmax, lo, hi := d.ranges()
	if d.kind == "k" {
		title := fmt.Sprintf("%s: PAC-PFL's %s against the number of particles k", ds, name)
		p = newFigure(title, "number of SVGD particles k", ylabel)
		w := 0.015 * math.Max(xmax-xmin, 1)
		shift[0], shift[1] = func(x float64) float64 { return x - w }, func(x float64) float64 { return x + w }
		var ticks []gplot.Tick
		for _, pt := range d.points {
			ticks = append(ticks, gplot.Tick{Value: pt.x, Label: strconv.Itoa(int(pt.x))})
		}
		p.X.Tick.Marker = gplot.ConstantTicks(ticks)
		pad := 0.06 * math.Max(xmax-xmin, 1)
		p.X.Min, p.X.Max = xmin-pad, xmax+pad
		return p, shift, lo, hi
	}
	title := fmt.Sprintf("%s: PAC-PFL's %s against the guaranteed ε", ds, name)
	if d.mech != "" {
		title += ", " + d.mech
	}
	p = newFigure(title, "guaranteed ε (log scale; smaller is more private)", ylabel)
	p.X.Scale, p.X.Tick.Marker = gplot.LogScale{}, gplot.LogTicks{Prec: -1}
	f := math.Pow(xmax/xmin, 0.008)
	if xmax == xmin {
		f = 1.02
	}
	shift[0], shift[1] = func(x float64) float64 { return x / f }, func(x float64) float64 { return x * f }
	p.X.Min, p.X.Max = xmin/math.Pow(f, 6), xmax*math.Pow(f, 6)
	if r := d.ref; r != nil {
		for g := range 2 {
			if !math.IsNaN(r.mean[g]) {
				lo, hi = math.Min(lo, r.mean[g]), math.Max(hi, r.mean[g])
			}
		}
	}
	return p, shift, lo, hi
}

// sweepFigure is Sweep's figure.
func sweepFigure(s *report.Sweep, d *sweepData, metric string) (*gplot.Plot, error) {
	name := map[string]string{"rsmse": "RSMSE", "ce": "calibration error"}[metric]
	seeds := fmt.Sprintf("mean ± 95%% CI over %d seeds", len(s.Seeds))
	if len(s.Seeds) == 1 {
		seeds = "1 seed"
	}
	p, shift, lo, hi := sweepAxes(s, d, name, fmt.Sprintf("%s (%s)", name, seeds))
	p.Add(plotter.NewGrid())
	bars := false
	for g := range 2 {
		xy, anyCI := d.series(g, shift[g])
		if len(xy.XYs) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(xy.XYs)
		if err != nil {
			return nil, err
		}
		line.Color, line.Width = sweepGroups[g].c, vg.Points(2)
		points.Color, points.Radius = sweepGroups[g].c, vg.Points(3.5)
		p.Add(line, points)
		p.Legend.Add(sweepGroups[g].label, line, points)
		if anyCI {
			eb, err := plotter.NewYErrorBars(xy)
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
	if !bars && len(s.Seeds) > 1 {
		p.Legend.Add("(no intervals in the report)")
	}
	legendRoom(p, lo, hi)
	p.Legend.Left = false
	return p, nil
}

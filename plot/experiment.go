package plot

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/methods"
	"github.com/pacpfl/pacpfl/report"
)

// ReadResults reads the experiment report (pacpfl experiment polynomial,
// pv, fmnist or genfl --json) at path and checks that it has methods with
// per-client values; its errors name the file.
func ReadResults(path string) (*report.Results, error) {
	var r report.Results
	if err := report.ReadFile(path, &r); err != nil {
		return nil, err
	}
	if len(r.Methods) == 0 {
		return nil, fmt.Errorf("%s has no \"methods\": is it the --json of pacpfl experiment polynomial, "+
			"pv or fmnist?", path)
	}
	if len(ExperimentMetrics(&r)) == 0 {
		return nil, fmt.Errorf("%s has no per-client values (\"per_client\"): it was written by an older pacpfl "+
			"or by a sweep; run the experiment again", path)
	}
	return &r, nil
}

// metricTitles are the axis labels of the per-client metrics.
var metricTitles = map[string]string{
	"rsmse":    "RSMSE per client",
	"ce":       "calibration error per client",
	"accuracy": "accuracy per client (%)",
}

// ExperimentMetrics is the metrics r has per-client values of (rsmse, ce,
// accuracy, …), sorted.
func ExperimentMetrics(r *report.Results) []string {
	var ms []string
	for _, m := range r.Methods {
		for key := range m.PerClient {
			if k, ok := strings.CutPrefix(key, "existing_"); ok && !slices.Contains(ms, k) {
				ms = append(ms, k)
			} else if k, ok := strings.CutPrefix(key, "new_"); ok && !slices.Contains(ms, k) {
				ms = append(ms, k)
			}
		}
	}
	sort.Strings(ms)
	return ms
}

// DefaultMetric is the metric of metrics Experiment draws when none is
// asked for: rsmse for regression, accuracy for classification, else the
// first.
func DefaultMetric(metrics []string) string {
	for _, d := range []string{"rsmse", "accuracy"} {
		if slices.Contains(metrics, d) {
			return d
		}
	}
	if len(metrics) == 0 {
		return ""
	}
	return metrics[0]
}

// experimentMethods is the methods of a report in table order (regression
// methods, then classification ones, then any others by name).
func experimentMethods(r *report.Results) []string {
	order := slices.Concat(methods.Names(methods.Regression),
		[]string{fl.MethodPACPFL, fl.MethodVanilla, fl.MethodPooled, "genfl"})
	var ms []string
	for _, m := range order {
		if _, ok := r.Methods[m]; ok && !slices.Contains(ms, m) {
			ms = append(ms, m)
		}
	}
	var rest []string
	for m := range r.Methods {
		if !slices.Contains(ms, m) {
			rest = append(rest, m)
		}
	}
	sort.Strings(rest)
	return append(ms, rest...)
}

// pooledValues is the finite values of every seed (a null in the report
// is NaN).
func pooledValues(seeds [][]report.Float) plotter.Values {
	var vs plotter.Values
	for _, s := range seeds {
		for _, v := range s {
			if x := float64(v); !math.IsNaN(x) && !math.IsInf(x, 0) {
				vs = append(vs, x)
			}
		}
	}
	return vs
}

// Experiment draws box plots of metric's per-client values over all seeds,
// each method's existing and new clients side by side (the paper's Fig. 2),
// in format ("png" or "svg"). skipped lists the methods without a value of
// the metric (a point predictor has no calibration error).
func Experiment(r *report.Results, metric, format string) (img []byte, skipped []string, err error) {
	p, skipped, err := experimentFigure(r, metric)
	if err != nil {
		return nil, nil, err
	}
	img, err = render(p, format)
	return img, skipped, err
}

// experimentGroups are the two client groups of the box plots.
var experimentGroups = [2]struct {
	key  string
	fill plotColor
}{{"existing", plotColor{colBlue, "existing clients"}}, {"new", plotColor{colOrange, "new clients"}}}

// experimentBoxes is the box plots of metric, the method labels on the x
// axis, the range of the values and which groups have a box.
func experimentBoxes(r *report.Results, metric string) (
	boxes []*plotter.BoxPlot, names, skipped []string, lo, hi float64, used [2]bool, err error) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, m := range experimentMethods(r) {
		pc := r.Methods[m].PerClient
		var vs [2]plotter.Values
		for g := range experimentGroups {
			vs[g] = pooledValues(pc[experimentGroups[g].key+"_"+metric])
		}
		if len(vs[0]) == 0 && len(vs[1]) == 0 {
			skipped = append(skipped, m)
			continue
		}
		for _, v := range slices.Concat(vs[0], vs[1]) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
		loc := float64(len(names))
		label := methods.Label(m)
		if label == "" {
			label = m
		}
		names = append(names, label)
		for g, grp := range experimentGroups {
			if len(vs[g]) == 0 {
				continue
			}
			b, err := plotter.NewBoxPlot(vg.Points(26), loc, vs[g])
			if err != nil {
				return nil, nil, nil, 0, 0, used, err
			}
			b.Offset = vg.Points(float64(2*g-1) * 15)
			b.FillColor = grp.fill.light()
			b.BoxStyle.Color, b.MedianStyle.Color = grp.fill.c, grp.fill.c
			b.MedianStyle.Width = vg.Points(2)
			b.GlyphStyle.Color = grp.fill.c
			boxes = append(boxes, b)
			used[g] = true
		}
	}
	return boxes, names, skipped, lo, hi, used, nil
}

// experimentFigure is Experiment's figure.
func experimentFigure(r *report.Results, metric string) (p *gplot.Plot, skipped []string, err error) {
	boxes, names, skipped, lo, hi, used, err := experimentBoxes(r, metric)
	if err != nil {
		return nil, nil, err
	}
	if len(names) == 0 {
		return nil, skipped, fmt.Errorf("no method has per-client values of %s", metric)
	}
	seeds := "1 seed"
	if n := len(r.Seeds); n != 1 {
		seeds = fmt.Sprintf("%d seeds", n)
	}
	title := fmt.Sprintf("%s: %s, all clients of %s", r.Dataset, metricTitles[metric], seeds)
	ylabel := metricTitles[metric]
	if ylabel == "" {
		ylabel = metric + " per client"
		title = fmt.Sprintf("%s: %s per client, %s", r.Dataset, metric, seeds)
	}
	p = newFigure(title, "method", ylabel)
	p.Add(plotter.NewGrid())
	for _, b := range boxes {
		p.Add(b)
	}
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.6, float64(len(names))-0.4
	legendRoom(p, lo, hi)
	for g, grp := range experimentGroups {
		if used[g] {
			p.Legend.Add(grp.fill.label, swatch{grp.fill.light()})
		}
	}
	return p, skipped, nil
}

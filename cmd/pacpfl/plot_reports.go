package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/pacpfl/pacpfl/report"
)

// pacpfl plot experiment and plot training: figures of the --json reports
// of experiment and train.

// reportFlags parses the flags of plot experiment and plot training.
func reportFlags(name string, args []string, stderr io.Writer, extra func(fs *flag.FlagSet)) (jsonPath, out, format string, status int, ok bool) {
	fs := newFlagSet("plot "+name, stderr)
	jp := fs.String("json", "", "the `FILE` written by --json")
	o := fs.String("out", "", "the figure `FILE`: .png or .svg")
	if extra != nil {
		extra(fs)
	}
	if st, ok := parseFlags(fs, args, false); !ok {
		return "", "", "", st, false
	}
	if *jp == "" {
		return "", "", "", fail(stderr, "plot "+name, usagef("--json FILE is required")), false
	}
	format, err := checkFigureOut(*o)
	if err != nil {
		return "", "", "", fail(stderr, "plot "+name, err), false
	}
	return *jp, *o, format, exitOK, true
}

// trainFile is a train report as plot training reads it, with the key that
// gives away an experiment report handed to it by mistake.
type trainFile struct {
	report.Train
	Methods *json.RawMessage `json:"methods"`
}

// trainingSeries checks a train report and returns its per-round mean
// client LML (NaN for a round without one).
func trainingSeries(path string, tf *trainFile) ([]float64, error) {
	switch {
	case tf.Methods != nil:
		return nil, fmt.Errorf("%s is an experiment report: plot it with pacpfl plot experiment", path)
	case tf.LMLHistory == nil && tf.Epsilon != nil:
		return nil, fmt.Errorf("%s: a differentially private run does not release its client LMLs (they are not covered by the guarantee): nothing to plot", path)
	case tf.LMLHistory == nil:
		return nil, fmt.Errorf("%s has no \"lml_history\": is it the --json of pacpfl train?", path)
	case len(tf.LMLHistory) == 0:
		return nil, fmt.Errorf("%s: the run had no rounds (--rounds 0): nothing to plot", path)
	}
	ys := report.Float64s(tf.LMLHistory)
	if !slices.ContainsFunc(ys, func(y float64) bool { return !math.IsNaN(y) }) {
		return nil, fmt.Errorf("%s: no round has a finite mean LML: nothing to plot", path)
	}
	return ys, nil
}

// movingAverage is the mean of the last w values at each point (NaNs
// skipped; NaN where the window has none).
func movingAverage(ys []float64, w int) []float64 {
	out := make([]float64, len(ys))
	for i := range ys {
		s, n := 0.0, 0
		for _, v := range ys[max(0, i-w+1) : i+1] {
			if !math.IsNaN(v) {
				s += v
				n++
			}
		}
		out[i] = math.NaN()
		if n > 0 {
			out[i] = s / float64(n)
		}
	}
	return out
}

// seriesXY is (i+1, ys[i]) for the finite ys: rounds count from 1.
func seriesXY(ys []float64) plotter.XYs {
	var xy plotter.XYs
	for i, v := range ys {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			xy = append(xy, plotter.XY{X: float64(i + 1), Y: v})
		}
	}
	return xy
}

// trainingFigure draws the mean client LML per round and, for longer runs,
// its moving average.
func trainingFigure(title string, ys []float64) (*plot.Plot, error) {
	p := newFigure(title, "round", "mean client log marginal likelihood")
	p.Add(plotter.NewGrid())
	raw, err := plotter.NewLine(seriesXY(ys))
	if err != nil {
		return nil, err
	}
	raw.Color, raw.Width = colBlue, vg.Points(1)
	p.Add(raw)
	p.Legend.Add("per round (mean over the round's clients)", raw)
	if w := min(50, len(ys)/20); w > 1 {
		ma, err := plotter.NewLine(seriesXY(movingAverage(ys, w)))
		if err != nil {
			return nil, err
		}
		ma.Color, ma.Width = colRed, vg.Points(2.5)
		p.Add(ma)
		p.Legend.Add(fmt.Sprintf("moving average over %d rounds", w), ma)
	}
	p.Legend.Left, p.Legend.Top = false, false
	return p, nil
}

func runPlotTraining(args []string, stdout, stderr io.Writer) int {
	jsonPath, out, format, st, ok := reportFlags("training", args, stderr, nil)
	if !ok {
		return st
	}
	var tf trainFile
	if err := report.ReadFile(jsonPath, &tf); err != nil {
		return fail(stderr, "plot training", err)
	}
	ys, err := trainingSeries(jsonPath, &tf)
	if err != nil {
		return fail(stderr, "plot training", err)
	}
	title := "Training"
	if tf.Dataset != "" {
		title += " on " + filepath.Base(tf.Dataset)
	}
	title += fmt.Sprintf(": %d rounds", len(ys))
	p, err := trainingFigure(title, ys)
	if err == nil {
		err = writeFigure(stdout, p, format, out)
	}
	if err != nil {
		return fail(stderr, "plot training", err)
	}
	fmt.Fprintf(stdout, "mean client LML of %d rounds plotted into %s\n", len(ys), out)
	return exitOK
}

// metricTitles are the axis labels of the per-client metrics.
var metricTitles = map[string]string{
	"rsmse":    "RSMSE per client",
	"ce":       "calibration error per client",
	"accuracy": "accuracy per client (%)",
}

// experimentMethods is the methods of a report in table order (regression
// methods, then classification ones, then any others by name).
func experimentMethods(ef *report.Results) []string {
	order := slices.Concat(regressionMethods, bnnMethods, []string{"genfl"})
	var ms []string
	for _, m := range order {
		if _, ok := ef.Methods[m]; ok && !slices.Contains(ms, m) {
			ms = append(ms, m)
		}
	}
	var rest []string
	for m := range ef.Methods {
		if !slices.Contains(ms, m) {
			rest = append(rest, m)
		}
	}
	sort.Strings(rest)
	return append(ms, rest...)
}

// experimentMetrics is the metrics a report has per-client values of.
func experimentMetrics(ef *report.Results) []string {
	var ms []string
	for _, m := range ef.Methods {
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

// experimentFigure draws box plots of metric's per-client values, each
// method's existing and new clients side by side (the paper's Fig. 2).
// skipped lists the methods without a value of the metric.
func experimentFigure(ef *report.Results, metric string) (p *plot.Plot, skipped []string, err error) {
	var names []string
	var boxes []*plotter.BoxPlot
	groups := []struct {
		key  string
		fill plotColor
	}{{"existing", plotColor{colBlue, "existing clients"}}, {"new", plotColor{colOrange, "new clients"}}}
	used := make([]bool, len(groups))
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, m := range experimentMethods(ef) {
		pc := ef.Methods[m].PerClient
		var vs [2]plotter.Values
		for g := range groups {
			vs[g] = pooledValues(pc[groups[g].key+"_"+metric])
		}
		if len(vs[0]) == 0 && len(vs[1]) == 0 {
			skipped = append(skipped, m)
			continue
		}
		for _, v := range slices.Concat(vs[0], vs[1]) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
		loc := float64(len(names))
		label := methodLabel(m)
		if label == "" {
			label = m
		}
		names = append(names, label)
		for g := range groups {
			if len(vs[g]) == 0 {
				continue
			}
			b, err := plotter.NewBoxPlot(vg.Points(26), loc, vs[g])
			if err != nil {
				return nil, nil, err
			}
			b.Offset = vg.Points(float64(2*g-1) * 15)
			b.FillColor = groups[g].fill.light()
			b.BoxStyle.Color, b.MedianStyle.Color = groups[g].fill.c, groups[g].fill.c
			b.MedianStyle.Width = vg.Points(2)
			b.GlyphStyle.Color = groups[g].fill.c
			boxes = append(boxes, b)
			used[g] = true
		}
	}
	if len(names) == 0 {
		return nil, skipped, fmt.Errorf("no method has per-client values of %s", metric)
	}
	seeds := "1 seed"
	if n := len(ef.Seeds); n != 1 {
		seeds = fmt.Sprintf("%d seeds", n)
	}
	title := fmt.Sprintf("%s: %s, all clients of %s", ef.Dataset, metricTitles[metric], seeds)
	ylabel := metricTitles[metric]
	if ylabel == "" {
		ylabel = metric + " per client"
		title = fmt.Sprintf("%s: %s per client, %s", ef.Dataset, metric, seeds)
	}
	p = newFigure(title, "method", ylabel)
	p.Add(plotter.NewGrid())
	for _, b := range boxes {
		p.Add(b)
	}
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.6, float64(len(names))-0.4
	legendRoom(p, lo, hi)
	for g := range groups {
		if used[g] {
			p.Legend.Add(groups[g].fill.label, swatch{groups[g].fill.light()})
		}
	}
	return p, skipped, nil
}

// plotColor is a series' colour and legend label.
type plotColor struct {
	c     color.RGBA
	label string
}

// light is the colour at a third of its opacity (box fills).
func (pc plotColor) light() color.Color {
	c := pc.c
	return color.NRGBA{R: c.R, G: c.G, B: c.B, A: 90}
}

func runPlotExperiment(args []string, stdout, stderr io.Writer) int {
	var metric *string
	jsonPath, out, format, st, ok := reportFlags("experiment", args, stderr, func(fs *flag.FlagSet) {
		metric = fs.String("metric", "", "the per-client metric: rsmse or ce (regression), accuracy or ce (fmnist); default rsmse or accuracy")
	})
	if !ok {
		return st
	}
	var ef report.Results
	if err := report.ReadFile(jsonPath, &ef); err != nil {
		return fail(stderr, "plot experiment", err)
	}
	if len(ef.Methods) == 0 {
		return fail(stderr, "plot experiment", fmt.Errorf("%s has no \"methods\": is it the --json of pacpfl experiment polynomial, pv or fmnist?", jsonPath))
	}
	metrics := experimentMetrics(&ef)
	if len(metrics) == 0 {
		return fail(stderr, "plot experiment", fmt.Errorf("%s has no per-client values (\"per_client\"): it was written by an older pacpfl or by a sweep; run the experiment again", jsonPath))
	}
	m := *metric
	if m == "" {
		m = metrics[0]
		for _, d := range []string{"rsmse", "accuracy"} {
			if slices.Contains(metrics, d) {
				m = d
				break
			}
		}
	} else if !slices.Contains(metrics, m) {
		return fail(stderr, "plot experiment", usagef("--metric %q: %s has per-client values of %s", m, jsonPath, strings.Join(metrics, ", ")))
	}
	p, skipped, err := experimentFigure(&ef, m)
	if err == nil {
		err = writeFigure(stdout, p, format, out)
	}
	if err != nil {
		return fail(stderr, "plot experiment", fmt.Errorf("%s: %w", jsonPath, err))
	}
	for _, s := range skipped {
		fmt.Fprintf(stderr, "note: %s has no per-client %s (a point predictor has no calibration error): not drawn\n", s, m)
	}
	fmt.Fprintf(stdout, "per-client %s of %d method(s) plotted into %s\n", m, len(ef.Methods)-len(skipped), out)
	return exitOK
}

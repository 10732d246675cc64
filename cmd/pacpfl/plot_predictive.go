package main

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/predict"
)

// pacpfl plot predictive: one client's personalised predictive against its
// data. The client's training data are the rows the model stored for it
// (train --save-clients) and its context rows; its test data are its other
// rows with a target. A row of the file identical to a stored training row
// counts as training data (the training file can be plotted as it is).

// predictiveInfo counts what a predictive figure shows.
type predictiveInfo struct {
	train, test int
	// One input: the curve's grid and the predictive there (data units).
	grid, mean, q025, q975 []float64
}

// predictiveFigure draws client id's predictive: over its one input the
// mean and the central 95 % band of the mixture predictive with its
// training and test points; with more inputs the predicted mean (and 95 %
// interval) against the observed target of each of its rows.
func predictiveFigure(pr *predict.Predictor, rec *data.Records, id string, grid int) (*plot.Plot, predictiveInfo, error) {
	pts, err := pr.ClientPoints(rec, id)
	if err != nil {
		return nil, predictiveInfo{}, err
	}
	info := predictiveInfo{train: len(pts.TrainY), test: len(pts.TestY)}
	target := pr.Model().Target
	if target == "" {
		target = "target"
	}
	known := "an existing client"
	if !pts.Known {
		known = "a new client, personalised on its context rows"
	}
	if d := len(pr.Model().Features); d == 1 {
		fig, err := curveFigure(pr, pts, id, target, known, grid, &info)
		return fig, info, err
	}
	fig, err := parityFigure(pr, pts, id, target, known)
	return fig, info, err
}

// curveFigure is the 1-D figure.
func curveFigure(pr *predict.Predictor, cp *predict.Points, id, target, known string, grid int, info *predictiveInfo) (*plot.Plot, error) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range append(append([]float64(nil), cp.TrainX...), cp.TestX...) {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if pad := 0.05 * (hi - lo); pad > 0 {
		lo, hi = lo-pad, hi+pad
	} else {
		lo, hi = lo-1, hi+1
	}
	xs := make([]float64, grid)
	for i := range xs {
		xs[i] = lo + (hi-lo)*float64(i)/float64(grid-1)
	}
	info.grid = xs
	job := cp.Client
	job.XTest = pr.ScaleX(xs)
	outs, err := pr.PredictClients([]predict.Client{job})
	if err != nil {
		return nil, err
	}
	mean, band := make(plotter.XYs, grid), make(plotter.XYs, 2*grid)
	ylo, yhi := math.Inf(1), math.Inf(-1)
	for _, y := range append(append([]float64(nil), cp.TrainY...), cp.TestY...) {
		ylo, yhi = math.Min(ylo, y), math.Max(yhi, y)
	}
	for i, x := range xs {
		r := pr.Summary(outs[0].Mixture, i)
		info.mean, info.q025, info.q975 = append(info.mean, r.Mean), append(info.q025, r.Q025), append(info.q975, r.Q975)
		ylo, yhi = math.Min(ylo, r.Q025), math.Max(yhi, r.Q975)
		mean[i] = plotter.XY{X: x, Y: r.Mean}
		band[i] = plotter.XY{X: x, Y: r.Q975}
		band[2*grid-1-i] = plotter.XY{X: x, Y: r.Q025}
	}
	p := newFigure(fmt.Sprintf("Client %s (%s)", id, known), pr.Model().Features[0], target)
	p.Add(plotter.NewGrid())
	poly, err := plotter.NewPolygon(band)
	if err != nil {
		return nil, err
	}
	poly.Color, poly.LineStyle.Width, poly.LineStyle.Color = colBand, 0, nil
	p.Add(poly)
	p.Legend.Add("95 % predictive interval", poly)
	line, err := plotter.NewLine(mean)
	if err != nil {
		return nil, err
	}
	line.Color, line.Width = colBlue, vg.Points(2)
	p.Add(line)
	p.Legend.Add("predictive mean", line)
	if err := addPoints(p, cp.TrainX, cp.TrainY, "training data", colGrey, draw.CircleGlyph{}); err != nil {
		return nil, err
	}
	if err := addPoints(p, cp.TestX, cp.TestY, "test data", colRed, draw.PyramidGlyph{}); err != nil {
		return nil, err
	}
	legendRoom(p, ylo, yhi)
	return p, nil
}

// addPoints scatters (x, y) with a legend entry (nothing when empty).
func addPoints(p *plot.Plot, x, y []float64, label string, c color.Color, shape draw.GlyphDrawer) error {
	if len(y) == 0 {
		return nil
	}
	xy := make(plotter.XYs, len(y))
	for i := range y {
		xy[i] = plotter.XY{X: x[i], Y: y[i]}
	}
	s, err := plotter.NewScatter(xy)
	if err != nil {
		return err
	}
	s.GlyphStyle.Shape, s.GlyphStyle.Radius = shape, vg.Points(3.5)
	s.GlyphStyle.Color = c
	p.Add(s)
	p.Legend.Add(fmt.Sprintf("%s (%d)", label, len(y)), s)
	return nil
}

// parityFigure is predicted against observed with 95 % error bars.
func parityFigure(pr *predict.Predictor, cp *predict.Points, id, target, known string) (*plot.Plot, error) {
	d := len(pr.Model().Features)
	job := cp.Client
	job.XTest = pr.ScaleX(append(append([]float64(nil), cp.TrainX...), cp.TestX...))
	if len(job.XTest) == 0 {
		return nil, fmt.Errorf("client %q has no rows with a target to plot", id)
	}
	outs, err := pr.PredictClients([]predict.Client{job})
	if err != nil {
		return nil, err
	}
	nTrain := len(cp.TrainY)
	p := newFigure(fmt.Sprintf("Client %s (%s): %d inputs", id, known, d), "observed "+target, "predicted "+target+" (mean, 95 % interval)")
	p.Add(plotter.NewGrid())
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, grp := range []struct {
		y      []float64
		off    int
		label  string
		col    color.Color
		marker draw.GlyphDrawer
	}{{cp.TrainY, 0, "training data", colGrey, draw.CircleGlyph{}}, {cp.TestY, nTrain, "test data", colRed, draw.PyramidGlyph{}}} {
		if len(grp.y) == 0 {
			continue
		}
		pts := make(errPoints, len(grp.y))
		for i, y := range grp.y {
			r := pr.Summary(outs[0].Mixture, grp.off+i)
			pts[i] = errPoint{x: y, y: r.Mean, lo: r.Mean - r.Q025, hi: r.Q975 - r.Mean}
			lo, hi = math.Min(lo, math.Min(y, r.Q025)), math.Max(hi, math.Max(y, r.Q975))
		}
		bars, err := plotter.NewYErrorBars(pts)
		if err != nil {
			return nil, err
		}
		bars.LineStyle.Color = grp.col
		bars.CapWidth = vg.Points(4)
		p.Add(bars)
		xs, ys := make([]float64, len(pts)), make([]float64, len(pts))
		for i, q := range pts {
			xs[i], ys[i] = q.x, q.y
		}
		if err := addPoints(p, xs, ys, grp.label, grp.col, grp.marker); err != nil {
			return nil, err
		}
	}
	diag, err := plotter.NewLine(plotter.XYs{{X: lo, Y: lo}, {X: hi, Y: hi}})
	if err != nil {
		return nil, err
	}
	diag.Color, diag.Dashes = colGreen, []vg.Length{vg.Points(6), vg.Points(4)}
	p.Add(diag)
	p.Legend.Add("predicted = observed", diag)
	p.Legend.Left = true
	legendRoom(p, lo, hi)
	return p, nil
}

// errPoints are points with asymmetric vertical error bars.
type errPoint struct{ x, y, lo, hi float64 }
type errPoints []errPoint

func (e errPoints) Len() int                        { return len(e) }
func (e errPoints) XY(i int) (float64, float64)     { return e[i].x, e[i].y }
func (e errPoints) YError(i int) (float64, float64) { return e[i].lo, e[i].hi }

func runPlotPredictive(args []string, stdout, stderr io.Writer) int {
	const cmd = "plot predictive"
	fs := newFlagSet(cmd, stderr)
	model := fs.String("model", "", "the model `FILE` (pacpfl train --data FILE.csv --save FILE)")
	dataPath := fs.String("data", "", "the CSV `FILE` with the client's rows (the model's client, feature and target columns)")
	client := fs.String("client", "", "the client `ID` to plot")
	out := fs.String("out", "", "the figure `FILE`: .png or .svg")
	contextCol := fs.String("context-column", "", "a column marking a client's own labelled rows (1, true, yes, train or context): the model personalises on them; needed for clients the model never saw")
	grid := fs.Int("grid", 200, "points of the predictive curve (one input)")
	inf := addInferenceOverride(fs)
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	switch {
	case *model == "":
		return fail(stderr, cmd, usagef("--model FILE is required"))
	case *dataPath == "":
		return fail(stderr, cmd, usagef("--data FILE.csv is required"))
	case *client == "":
		return fail(stderr, cmd, usagef("--client ID is required"))
	case *grid < 2 || *grid > 100000:
		return fail(stderr, cmd, usagef("--grid %d: want 2 to 100000 points", *grid))
	}
	if err := inf.check(); err != nil {
		return fail(stderr, cmd, err)
	}
	format, err := checkFigureOut(*out)
	if err != nil {
		return fail(stderr, cmd, err)
	}
	pr, err := loadPredictor(*model, inf)
	if err != nil {
		return fail(stderr, cmd, err)
	}
	if !pr.Regression() {
		return fail(stderr, cmd, usagef("%s is a classification model: plot predictive draws regression predictives only (pacpfl predict writes the class probabilities)", *model))
	}
	rec, err := pr.ReadCSV(*dataPath, *contextCol)
	if err != nil {
		return fail(stderr, cmd, err)
	}
	found := false
	for _, c := range rec.Clients {
		found = found || c == *client
	}
	if !found {
		return fail(stderr, cmd, usagef("--client %q: no row of %s has it in column %q (clients: %s)", *client, *dataPath, pr.Model().ClientColumn, listSome(rec.Clients, 12)))
	}
	p, info, err := predictiveFigure(pr, rec, *client, *grid)
	if err != nil {
		return fail(stderr, cmd, predictError(err))
	}
	if err := writeFigure(stdout, p, format, *out); err != nil {
		return fail(stderr, cmd, err)
	}
	fmt.Fprintf(stdout, "client %s: predictive with %d training and %d test points plotted into %s\n", *client, info.train, info.test, *out)
	return exitOK
}

// listSome is the first n names, quoted, and how many more there are.
func listSome(names []string, n int) string {
	q := make([]string, min(n, len(names)))
	for i := range q {
		q[i] = strconv.Quote(names[i])
	}
	s := strings.Join(q, ", ")
	if len(names) > n {
		s += fmt.Sprintf(" and %d more", len(names)-n)
	}
	return strings.TrimSpace(s)
}

package plot

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/predict"
)

// Predictive draws the personalised predictive of client id of a regression
// model against its rows of rec, in format ("png" or "svg"). The client's
// training data are the rows the model stored for it and its context rows;
// its test data are its other rows with a target (a row identical to a
// stored training row counts as training data, so the training file can be
// plotted as it is). With one input the figure is the mean and central
// 95 % band of the mixture predictive on grid points over the data, with
// the training and test points; with more, the predicted mean and 95 %
// interval against the observed target of each of the client's rows.
func Predictive(pr *predict.Predictor, rec *data.Records, id string, grid int, format string) (
	[]byte, PredictiveInfo, error) {
	switch {
	case pr == nil || rec == nil:
		return nil, PredictiveInfo{}, fmt.Errorf("plot: Predictive needs a predictor and the client's records")
	case !pr.Regression():
		return nil, PredictiveInfo{}, fmt.Errorf("a classification model has no predictive curve to draw")
	case grid < 2:
		return nil, PredictiveInfo{}, fmt.Errorf("a grid of %d points: want at least 2", grid)
	case !slices.Contains(rec.Clients, id):
		return nil, PredictiveInfo{}, &UnknownClientError{Client: id, Source: rec.Source,
			Column: pr.Model().ClientColumn, Clients: rec.Clients}
	}
	p, info, err := predictiveFigure(pr, rec, id, grid)
	if err != nil {
		return nil, info, err
	}
	img, err := render(p, format)
	return img, info, err
}

// UnknownClientError is Predictive's error for a client without a row in
// the records.
type UnknownClientError struct {
	Client, Source, Column string
	Clients                []string // the clients the records have
}

func (e *UnknownClientError) Error() string {
	q := make([]string, min(12, len(e.Clients)))
	for i := range q {
		q[i] = strconv.Quote(e.Clients[i])
	}
	list := strings.Join(q, ", ")
	if len(e.Clients) > len(q) {
		list += fmt.Sprintf(" and %d more", len(e.Clients)-len(q))
	}
	return fmt.Sprintf("%q: no row of %s has it in column %q (clients: %s)",
		e.Client, e.Source, e.Column, strings.TrimSpace(list))
}

// PredictiveInfo says what Predictive drew: the client's training and test
// points and, for a model of one input, the curve's grid and the
// predictive's mean and 2.5 % and 97.5 % quantiles there (data units).
type PredictiveInfo struct {
	Train, Test            int
	Grid, Mean, Q025, Q975 []float64
}

// predictiveFigure draws client id's predictive: over its one input the
// mean and the central 95 % band of the mixture predictive with its
// training and test points; with more inputs the predicted mean (and 95 %
// interval) against the observed target of each of its rows.
func predictiveFigure(pr *predict.Predictor, rec *data.Records, id string, grid int) (
	*gplot.Plot, PredictiveInfo, error) {
	pts, err := pr.ClientPoints(rec, id)
	if err != nil {
		return nil, PredictiveInfo{}, err
	}
	info := PredictiveInfo{Train: len(pts.TrainY), Test: len(pts.TestY)}
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
func curveFigure(pr *predict.Predictor, cp *predict.Points, id, target, known string, grid int,
	info *PredictiveInfo) (*gplot.Plot, error) {
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
	info.Grid = xs
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
		info.Mean = append(info.Mean, r.Mean)
		info.Q025, info.Q975 = append(info.Q025, r.Q025), append(info.Q975, r.Q975)
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
func addPoints(p *gplot.Plot, x, y []float64, label string, c color.Color, shape draw.GlyphDrawer) error {
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
func parityFigure(pr *predict.Predictor, cp *predict.Points, id, target, known string) (*gplot.Plot, error) {
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
	p := newFigure(fmt.Sprintf("Client %s (%s): %d inputs", id, known, d), "observed "+target,
		"predicted "+target+" (mean, 95 % interval)")
	p.Add(plotter.NewGrid())
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, grp := range []struct {
		y      []float64
		off    int
		label  string
		col    color.Color
		marker draw.GlyphDrawer
	}{
		{cp.TrainY, 0, "training data", colGrey, draw.CircleGlyph{}},
		{cp.TestY, nTrain, "test data", colRed, draw.PyramidGlyph{}},
	} {
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

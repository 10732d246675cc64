package plot

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/pacpfl/pacpfl/report"
)

// trainFile is a train report as ReadTrain reads it, with the key that
// gives away an experiment report handed to it by mistake.
type trainFile struct {
	report.Train
	Methods *json.RawMessage `json:"methods"`
}

// ReadTrain reads the train report (pacpfl train --json) at path and checks
// that Training can draw it: its errors name the file and say when it is
// an experiment report, a differentially private run (whose client LMLs
// are not released) or a run without a finite mean LML.
func ReadTrain(path string) (*report.Train, error) {
	var tf trainFile
	if err := report.ReadFile(path, &tf); err != nil {
		return nil, err
	}
	if tf.Methods != nil {
		return nil, fmt.Errorf("%s is an experiment report: plot it with pacpfl plot experiment", path)
	}
	if _, err := trainingSeries(path, &tf.Train); err != nil {
		return nil, err
	}
	return &tf.Train, nil
}

// trainingSeries checks a train report, named name in errors, and returns
// its per-round mean client LML (NaN for a round without one).
func trainingSeries(name string, tr *report.Train) ([]float64, error) {
	switch {
	case tr.LMLHistory == nil && tr.Epsilon != nil:
		return nil, fmt.Errorf("%s: a differentially private run does not release its client LMLs "+
			"(they are not covered by the guarantee): nothing to plot", name)
	case tr.LMLHistory == nil:
		return nil, fmt.Errorf("%s has no \"lml_history\": is it the --json of pacpfl train?", name)
	case len(tr.LMLHistory) == 0:
		return nil, fmt.Errorf("%s: the run had no rounds (--rounds 0): nothing to plot", name)
	}
	ys := report.Float64s(tr.LMLHistory)
	if !slices.ContainsFunc(ys, func(y float64) bool { return !math.IsNaN(y) }) {
		return nil, fmt.Errorf("%s: no round has a finite mean LML: nothing to plot", name)
	}
	return ys, nil
}

// Training draws the mean client LML per round of a training run and, for
// longer runs, its moving average, in format ("png" or "svg"); it returns
// the image and the number of rounds.
func Training(tr *report.Train, format string) (img []byte, rounds int, err error) {
	ys, err := trainingSeries("the train report", tr)
	if err != nil {
		return nil, 0, err
	}
	title := "Training"
	if tr.Dataset != "" {
		title += " on " + filepath.Base(tr.Dataset)
	}
	title += fmt.Sprintf(": %d rounds", len(ys))
	p, err := trainingFigure(title, ys)
	if err != nil {
		return nil, 0, err
	}
	img, err = render(p, format)
	return img, len(ys), err
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
func trainingFigure(title string, ys []float64) (*gplot.Plot, error) {
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

// Package plot draws pacpfl's figures with gonum.org/v1/plot, as PNG or SVG
// images of 800 × 500 pixels (the same size in points × 0.75 in SVG): the
// mean client LML of a training run (Training), the per-client metrics of
// an experiment (Experiment), PAC-PFL's utility against k or ε (Sweep) and
// one client's personalised predictive (Predictive).
//
// The figures take the reports of package report; ReadTrain, ReadResults
// and ReadSweep read and check a report file first, with errors that name
// the file and say when it is a report of another kind.
package plot

import (
	"bytes"
	"fmt"
	"image/color"
	"path/filepath"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The size of every figure: 800 × 500 pixels in PNG (96 dpi), the same
// size in points × 0.75 in SVG.
const (
	WidthPx  = 800
	HeightPx = 500
	DPI      = 96
)

// Format is the image format of a figure file by its extension, "png" or
// "svg"; an error names path and says what is wrong with it.
func Format(path string) (string, error) {
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".png":
		return "png", nil
	case ".svg":
		return "svg", nil
	case "":
		return "", fmt.Errorf("%s: no extension: name the figure FIG.png or FIG.svg", path)
	default:
		return "", fmt.Errorf("%s: unsupported image format %q (want .png or .svg)", path, ext)
	}
}

// newFigure is a plot with the common style: a title, labelled axes, a
// grid, fonts large enough to read at 800 pixels.
func newFigure(title, xlabel, ylabel string) *gplot.Plot {
	p := gplot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(14)
	p.X.Label.Text, p.Y.Label.Text = xlabel, ylabel
	for _, a := range []*gplot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = vg.Points(12)
		a.Tick.Label.Font.Size = vg.Points(10)
	}
	p.Legend.TextStyle.Font.Size = vg.Points(11)
	p.Legend.Top = true
	return p
}

// render encodes p in format ("png" or "svg").
func render(p *gplot.Plot, format string) ([]byte, error) {
	px := func(n int) vg.Length { return vg.Length(n) * vg.Inch / DPI }
	wt, err := p.WriterTo(px(WidthPx), px(HeightPx), format)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if _, err := wt.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("rendering the figure: %w", err)
	}
	return buf.Bytes(), nil
}

// The colours of the figures (colour-blind safe, Okabe–Ito).
var (
	colBlue   = color.RGBA{R: 0, G: 114, B: 178, A: 255}
	colOrange = color.RGBA{R: 230, G: 159, B: 0, A: 255}
	colGreen  = color.RGBA{R: 0, G: 158, B: 115, A: 255}
	colRed    = color.RGBA{R: 213, G: 94, B: 0, A: 255}
	colGrey   = color.RGBA{R: 60, G: 60, B: 60, A: 255}
	colBand   = color.NRGBA{R: 0, G: 114, B: 178, A: 70}
)

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

// legendRoom raises the top of p's y axis by a quarter of its data range,
// so that a legend at the top does not cover the data.
func legendRoom(p *gplot.Plot, lo, hi float64) {
	if hi > lo {
		p.Y.Min, p.Y.Max = lo-0.03*(hi-lo), hi+0.3*(hi-lo)
	}
}

// swatch is a legend entry's filled square (box plots have no thumbnail).
type swatch struct{ fill color.Color }

func (s swatch) Thumbnail(c *draw.Canvas) {
	pts := []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Min.X, Y: c.Max.Y},
		{X: c.Max.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Min.Y}}
	c.FillPolygon(s.fill, c.ClipPolygonXY(pts))
}

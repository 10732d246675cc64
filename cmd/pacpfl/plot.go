package main

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// `pacpfl plot predictive|experiment|training|sweep`: figures with
// gonum.org/v1/plot, PNG or SVG by the extension of --out, written through
// the CLI's one output writer (output.go).
func init() {
	register(&command{
		name:    "plot",
		summary: "draw a figure (PNG or SVG): 'pacpfl plot predictive|experiment|training|sweep'",
		run:     runPlot,
	})
}

func plotUsage(w io.Writer) {
	fmt.Fprintln(w, `usage: pacpfl plot predictive --model FILE --data FILE.csv --client ID --out FIG.png|FIG.svg
       pacpfl plot experiment --json RESULT.json --out FIG.png|FIG.svg
       pacpfl plot training   --json TRAIN.json --out FIG.png|FIG.svg
       pacpfl plot sweep      --json SWEEP.json --out FIG.png|FIG.svg [--metric rsmse|ce]
                              (the report of experiment --k-sweep or --dp-sweep)`)
}

func runPlot(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		// One line, not the whole usage: a usage error must not scroll away.
		fmt.Fprintln(stderr, "pacpfl plot: which figure? predictive, experiment, training or sweep (pacpfl plot -h for their flags)")
		return exitUsage
	}
	switch args[0] {
	case "predictive":
		return runPlotPredictive(args[1:], stdout, stderr)
	case "experiment":
		return runPlotExperiment(args[1:], stdout, stderr)
	case "training":
		return runPlotTraining(args[1:], stdout, stderr)
	case "sweep":
		return runPlotSweep(args[1:], stdout, stderr)
	case "-h", "--help", "-help", "help":
		plotUsage(stdout)
		return exitOK
	}
	fmt.Fprintf(stderr, "pacpfl plot: unknown figure %q (predictive, experiment, training or sweep; pacpfl plot -h for their flags)\n", args[0])
	return exitUsage
}

// The size of every figure: 800 × 500 pixels in PNG (96 dpi), the same
// size in points × 0.75 in SVG.
const (
	plotWidthPx  = 800
	plotHeightPx = 500
	plotDPI      = 96
)

// figureFormat is the image format of an --out path, by its extension.
func figureFormat(path string) (string, error) {
	if path == "" {
		return "", usagef("--out FIG.png or FIG.svg is required")
	}
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".png":
		return "png", nil
	case ".svg":
		return "svg", nil
	case "":
		return "", usagef("--out %s: no extension: name the figure FIG.png or FIG.svg", path)
	default:
		return "", usagef("--out %s: unsupported image format %q (want .png or .svg)", path, ext)
	}
}

// checkFigureOut validates --out before any work: its format and that it
// can be written.
func checkFigureOut(path string) (string, error) {
	format, err := figureFormat(path)
	if err != nil {
		return "", err
	}
	return format, checkOutput("--out", path)
}

// newFigure is a plot with the common style: a title, labelled axes, a
// grid, fonts large enough to read at 800 pixels.
func newFigure(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(14)
	p.X.Label.Text, p.Y.Label.Text = xlabel, ylabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = vg.Points(12)
		a.Tick.Label.Font.Size = vg.Points(10)
	}
	p.Legend.TextStyle.Font.Size = vg.Points(11)
	p.Legend.Top = true
	return p
}

// writeFigure renders p in format and writes it to path.
func writeFigure(stdout io.Writer, p *plot.Plot, format, path string) error {
	px := func(n int) vg.Length { return vg.Length(n) * vg.Inch / plotDPI }
	wt, err := p.WriterTo(px(plotWidthPx), px(plotHeightPx), format)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if _, err := wt.WriteTo(&buf); err != nil {
		return fmt.Errorf("rendering the figure: %w", err)
	}
	return writeOutput(stdout, "--out", path, buf.Bytes())
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

// legendRoom raises the top of p's y axis by a quarter of its data range,
// so that a legend at the top does not cover the data.
func legendRoom(p *plot.Plot, lo, hi float64) {
	if hi > lo {
		p.Y.Min, p.Y.Max = lo-0.03*(hi-lo), hi+0.3*(hi-lo)
	}
}

// swatch is a legend entry's filled square (box plots have no thumbnail).
type swatch struct{ fill color.Color }

func (s swatch) Thumbnail(c *draw.Canvas) {
	pts := []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Min.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Min.Y}}
	c.FillPolygon(s.fill, c.ClipPolygonXY(pts))
}

package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/pacpfl/pacpfl/plot"
)

// `pacpfl plot predictive|experiment|training|sweep`: the figures of
// package plot, PNG or SVG by the extension of --out, written through the
// CLI's one output writer (output.go).
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
	switch {
	case len(args) == 0:
		// One line, not the whole usage: a usage error must not scroll away.
		fmt.Fprintln(stderr, "pacpfl plot: which figure? predictive, experiment, training or sweep (pacpfl plot -h for their flags)")
		return exitUsage
	case args[0] == "predictive":
		return runPlotPredictive(args[1:], stdout, stderr)
	case reportFigures[args[0]].draw != nil:
		return runPlotReport(args[0], args[1:], stdout, stderr)
	case isHelp(args[0]):
		plotUsage(stdout)
		return exitOK
	}
	fmt.Fprintf(stderr, "pacpfl plot: unknown figure %q (predictive, experiment, training or sweep; pacpfl plot -h for their flags)\n", args[0])
	return exitUsage
}

// checkFigureOut validates --out before any work: its format and that it
// can be written.
func checkFigureOut(path string) (string, error) {
	if path == "" {
		return "", usagef("--out FIG.png or FIG.svg is required")
	}
	format, err := plot.Format(path)
	if err != nil {
		return "", usagef("--out %v", err)
	}
	return format, checkOutput("--out", path)
}

// plotJob is a figure's command name, --json report (if any), --out and
// image format.
type plotJob struct{ cmd, json, out, format string }

// reportFigures are the figures of a --json report: --metric's default and
// help ("": no --metric), the drawing, and whether a write error names the
// report.
var reportFigures = map[string]struct {
	metric, metricHelp string
	draw               func(path, metric, format string) ([]byte, plot.Drawn, error)
	named              bool
}{
	"training": {draw: func(path, _, format string) ([]byte, plot.Drawn, error) { return plot.TrainingFile(path, format) }},
	"experiment": {"", "the per-client metric: rsmse or ce (regression), accuracy or ce (fmnist); default rsmse or accuracy",
		plot.ExperimentFile, true},
	"sweep": {"rsmse", "the metric: rsmse or ce", func(path, metric, format string) ([]byte, plot.Drawn, error) {
		if metric != "rsmse" && metric != "ce" {
			return nil, plot.Drawn{}, usagef("--metric %q: want rsmse or ce", metric)
		}
		return plot.SweepFile(path, metric, format)
	}, true},
}

// runPlotReport is plot training, experiment or sweep.
func runPlotReport(name string, args []string, stdout, stderr io.Writer) int {
	fig, j := reportFigures[name], plotJob{cmd: "plot " + name}
	fs := newFlagSet(j.cmd, stderr)
	fs.StringVar(&j.json, "json", "", "the `FILE` written by --json")
	fs.StringVar(&j.out, "out", "", "the figure `FILE`: .png or .svg")
	metric := &fig.metric
	if fig.metricHelp != "" {
		metric = fs.String("metric", fig.metric, fig.metricHelp)
	}
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	var err error
	if j.json == "" {
		err = usagef("--json FILE is required")
	} else {
		j.format, err = checkFigureOut(j.out)
	}
	if err != nil {
		return fail(stderr, j.cmd, err)
	}
	img, d, err := fig.draw(j.json, *metric, j.format)
	return j.finish(stdout, stderr, img, d, err, fig.named)
}

// finish writes the figure img, or reports err (usage for a metric the
// report lacks); a write error names the report if named. It then prints
// d's notes to stderr and "<d.What> plotted into OUT".
func (j *plotJob) finish(stdout, stderr io.Writer, img []byte, d plot.Drawn, err error, named bool) int {
	var me *plot.MetricError
	if errors.As(err, &me) {
		return fail(stderr, j.cmd, usagef("--metric %v", err))
	}
	if err == nil {
		if err = writeOutput(stdout, "--out", j.out, img); err != nil && named {
			err = fmt.Errorf("%s: %w", j.json, err)
		}
	}
	if err != nil {
		return fail(stderr, j.cmd, err)
	}
	for _, n := range d.Notes {
		fmt.Fprintln(stderr, n)
	}
	fmt.Fprintf(stdout, "%s plotted into %s\n", d.What, j.out)
	return exitOK
}

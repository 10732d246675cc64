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
		fmt.Fprintln(stderr,
			"pacpfl plot: which figure? predictive, experiment, training or sweep (pacpfl plot -h for their flags)")
		return exitUsage
	case args[0] == "predictive":
		return runPlotPredictive(args[1:], stdout, stderr)
	case plot.ReportFigures()[args[0]].Draw != nil:
		return runPlotReport(args[0], args[1:], stdout, stderr)
	case isHelp(args[0]):
		plotUsage(stdout)
		return exitOK
	}
	fmt.Fprintf(stderr, "pacpfl plot: unknown figure %q (predictive, experiment, training or sweep; pacpfl plot -h "+
		"for their flags)\n", args[0])
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

// runPlotReport is plot training, experiment or sweep.
func runPlotReport(name string, args []string, stdout, stderr io.Writer) int {
	fig, j := plot.ReportFigures()[name], plotJob{cmd: "plot " + name}
	fs := newFlagSet(j.cmd, stderr)
	fs.StringVar(&j.json, "json", "", "the `FILE` written by --json")
	fs.StringVar(&j.out, "out", "", "the figure `FILE`: .png or .svg")
	metric := &fig.Metric
	if fig.MetricHelp != "" {
		metric = fs.String("metric", fig.Metric, fig.MetricHelp)
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
	img, d, err := fig.Draw(j.json, *metric, j.format)
	// A write error names the report whose figure it is (training's
	// message names its rounds only).
	return j.finish(stdout, stderr, img, d, err, name != "training")
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

// runPlotPredictive is plot predictive: one client's personalised
// predictive against its data (plot.Predictive).
func runPlotPredictive(args []string, stdout, stderr io.Writer) int {
	const cmd = "plot predictive"
	fs := newFlagSet(cmd, stderr)
	model := fs.String("model", "", "the model `FILE` (pacpfl train --data FILE.csv --save FILE)")
	dataPath := fs.String("data", "",
		"the CSV `FILE` with the client's rows (the model's client, feature and target columns)")
	client := fs.String("client", "", "the client `ID` to plot")
	out := fs.String("out", "", "the figure `FILE`: .png or .svg")
	contextCol := fs.String("context-column", "", "a column marking a client's own labelled rows (1, true, yes, "+
		"train or context): the model personalises on them; needed for clients the model never saw")
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
	j := plotJob{cmd: cmd, out: *out}
	var err error
	if j.format, err = checkFigureOut(*out); err != nil {
		return fail(stderr, cmd, err)
	}
	pr, err := loadPredictor(*model, inf)
	if err != nil {
		return fail(stderr, cmd, err)
	}
	if !pr.Regression() {
		return fail(stderr, cmd, usagef("%s is a classification model: plot predictive draws regression predictives "+
			"only (pacpfl predict writes the class probabilities)", *model))
	}
	rec, err := pr.ReadCSV(*dataPath, *contextCol)
	if err != nil {
		return fail(stderr, cmd, err)
	}
	img, info, err := plot.Predictive(pr, rec, *client, *grid, j.format)
	if uc := (*plot.UnknownClientError)(nil); errors.As(err, &uc) {
		return fail(stderr, cmd, usagef("--client %v", err))
	} else if err != nil {
		return fail(stderr, cmd, predictError(err))
	}
	what := fmt.Sprintf("client %s: predictive with %d training and %d test points", *client, info.Train, info.Test)
	return j.finish(stdout, stderr, img, plot.Drawn{What: what}, nil, false)
}

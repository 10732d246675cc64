package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

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

// reportFlags parses the flags of plot experiment, training and sweep.
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

func runPlotTraining(args []string, stdout, stderr io.Writer) int {
	jsonPath, out, format, st, ok := reportFlags("training", args, stderr, nil)
	if !ok {
		return st
	}
	tr, err := plot.ReadTrain(jsonPath)
	if err != nil {
		return fail(stderr, "plot training", err)
	}
	img, rounds, err := plot.Training(tr, format)
	if err == nil {
		err = writeOutput(stdout, "--out", out, img)
	}
	if err != nil {
		return fail(stderr, "plot training", err)
	}
	fmt.Fprintf(stdout, "mean client LML of %d rounds plotted into %s\n", rounds, out)
	return exitOK
}

func runPlotExperiment(args []string, stdout, stderr io.Writer) int {
	var metric *string
	jsonPath, out, format, st, ok := reportFlags("experiment", args, stderr, func(fs *flag.FlagSet) {
		metric = fs.String("metric", "", "the per-client metric: rsmse or ce (regression), accuracy or ce (fmnist); default rsmse or accuracy")
	})
	if !ok {
		return st
	}
	r, err := plot.ReadResults(jsonPath)
	if err != nil {
		return fail(stderr, "plot experiment", err)
	}
	metrics, m := plot.ExperimentMetrics(r), *metric
	if m == "" {
		m = plot.DefaultMetric(metrics)
	} else if !slices.Contains(metrics, m) {
		return fail(stderr, "plot experiment", usagef("--metric %q: %s has per-client values of %s", m, jsonPath, strings.Join(metrics, ", ")))
	}
	img, skipped, err := plot.Experiment(r, m, format)
	if err == nil {
		err = writeOutput(stdout, "--out", out, img)
	}
	if err != nil {
		return fail(stderr, "plot experiment", fmt.Errorf("%s: %w", jsonPath, err))
	}
	for _, s := range skipped {
		fmt.Fprintf(stderr, "note: %s has no per-client %s (a point predictor has no calibration error): not drawn\n", s, m)
	}
	fmt.Fprintf(stdout, "per-client %s of %d method(s) plotted into %s\n", m, len(r.Methods)-len(skipped), out)
	return exitOK
}

func runPlotSweep(args []string, stdout, stderr io.Writer) int {
	var metric *string
	jsonPath, out, format, st, ok := reportFlags("sweep", args, stderr, func(fs *flag.FlagSet) {
		metric = fs.String("metric", "rsmse", "the metric: rsmse or ce")
	})
	if !ok {
		return st
	}
	if *metric != "rsmse" && *metric != "ce" {
		return fail(stderr, "plot sweep", usagef("--metric %q: want rsmse or ce", *metric))
	}
	s, err := plot.ReadSweep(jsonPath)
	if err != nil {
		return fail(stderr, "plot sweep", err)
	}
	img, info, err := plot.Sweep(s, *metric, format)
	if err == nil {
		err = writeOutput(stdout, "--out", out, img)
	}
	if err != nil {
		return fail(stderr, "plot sweep", fmt.Errorf("%s: %w", jsonPath, err))
	}
	fmt.Fprintf(stdout, "%s at %d values of %s plotted into %s\n", *metric, info.Levels, info.Param, out)
	return exitOK
}

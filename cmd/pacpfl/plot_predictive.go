package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/pacpfl/pacpfl/plot"
)

// pacpfl plot predictive: one client's personalised predictive against its
// data (plot.Predictive).

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
		return fail(stderr, cmd, usagef("%s is a classification model: plot predictive draws regression predictives only (pacpfl predict writes the class probabilities)", *model))
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

package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

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
	img, info, err := plot.Predictive(pr, rec, *client, *grid, format)
	if err != nil {
		return fail(stderr, cmd, predictError(err))
	}
	if err := writeOutput(stdout, "--out", *out, img); err != nil {
		return fail(stderr, cmd, err)
	}
	fmt.Fprintf(stdout, "client %s: predictive with %d training and %d test points plotted into %s\n", *client, info.Train, info.Test, *out)
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

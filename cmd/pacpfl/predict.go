package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/predict"
)

func init() {
	register(&command{
		name:    "predict",
		summary: "predict with a saved model (train --data FILE.csv --save) for the rows of a CSV file",
		run:     runPredict,
	})
}

// inferenceOverride is --gp-inference and --inducing of the commands that
// predict with a saved model (predict, plot predictive). Unset, the model
// file's inference applies; each flag given on the command line replaces
// its part of it (the seed of the inducing inputs is always the file's).
type inferenceOverride struct {
	mode     string
	inducing int
	fs       *flag.FlagSet
}

func addInferenceOverride(fs *flag.FlagSet) *inferenceOverride {
	o := &inferenceOverride{fs: fs}
	fs.StringVar(&o.mode, "gp-inference", "", "GP models: how each client is conditioned and predicts: exact, sparse or auto (pacpfl train -h: --gp-inference); "+
		"default: the inference the model file records (a file written before pacpfl recorded it: exact); given, it wins over the file's")
	fs.IntVar(&o.inducing, "inducing", 0, fmt.Sprintf("GP models: inducing inputs M of a sparse client, chosen from its conditioning rows (0: %d, or the client's rows if fewer); "+
		"default: the model file's; given, it wins over the file's; more than a sparse client's rows is an error", fl.DefaultInducing))
	return o
}

// given reports whether flag name was on the command line.
func (o *inferenceOverride) given(name string) bool {
	set := false
	o.fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// check refuses a bad mode or M (a usage error), before any file is read.
func (o *inferenceOverride) check() error {
	if o.given("gp-inference") {
		if err := (fl.GPInference{Mode: o.mode}).Validate(); err != nil || o.mode == "" {
			return usagef("--gp-inference %q: want exact, sparse or auto", o.mode)
		}
	}
	if o.inducing < 0 {
		return usagef("--inducing %d: want at least 1 inducing input (0: the default %d)", o.inducing, fl.DefaultInducing)
	}
	return nil
}

// apply overrides p's inference with the flags given; on a classification
// (BNN) model they are a usage error.
func (o *inferenceOverride) apply(p *predict.Predictor) error {
	var err error
	if o.given("gp-inference") {
		err = p.SetInferenceMode(o.mode)
	}
	if err == nil && o.given("inducing") {
		err = p.SetInducing(o.inducing)
	}
	if errors.Is(err, predict.ErrNotGP) {
		return usagef("--gp-inference and --inducing apply to GP (regression) models; this one has %s clients", p.Model().Kind)
	}
	if err != nil {
		return usageError{err}
	}
	return nil
}

// predictError words the library's errors that the command line can fix
// in terms of its flags: an M from --inducing above a client's rows is a
// usage error.
func predictError(err error) error {
	var ie *predict.InducingError
	var ne *predict.NoContextError
	switch {
	case errors.As(err, &ie) && ie.Requested:
		return usagef("client %q: --inducing %d: the client is conditioned on only %d rows (give --inducing %d or fewer, or --gp-inference exact)", ie.Client, ie.M, ie.Rows, ie.Rows)
	case errors.As(err, &ie):
		return fmt.Errorf("client %q: the model's GP inference is %s, but the client is conditioned on only %d rows (give --inducing %d or fewer, or --gp-inference exact)", ie.Client, ie.Inference, ie.Rows, ie.Rows)
	case errors.As(err, &ne):
		s := fmt.Sprintf("client %q is not one the model was trained on (or its rows were not saved), and no row of it is marked as its own training data: give a --context-column marking some of its labelled rows", ne.Client)
		if ne.Source != "" {
			s = fmt.Sprintf("%s:%d: %s", ne.Source, ne.Line, s)
		}
		return errors.New(s)
	}
	return err
}

// loadPredictor reads the model file of --model and applies the inference
// flags to it.
func loadPredictor(path string, inf *inferenceOverride) (*predict.Predictor, error) {
	p, err := predict.Load(path)
	if err != nil {
		return nil, err
	}
	if err := inf.apply(p); err != nil {
		return nil, err
	}
	return p, nil
}

func runPredict(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("predict", stderr)
	model := fs.String("model", "", "the model `FILE` (pacpfl train --data FILE.csv --save FILE)")
	dataPath := fs.String("data", "", "the CSV `FILE` of rows to predict: the model's client, feature and (for context rows) target columns")
	out := fs.String("out", "-", "write the predictions as CSV to `FILE` (-: standard output)")
	contextCol := fs.String("context-column", "", "a column marking the rows that are a client's own labelled data (1, true, yes, train or context): the model personalises on them and predicts the others; needed for clients the model never saw")
	inf := addInferenceOverride(fs)
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	switch {
	case *model == "":
		return fail(stderr, "predict", usagef("--model FILE is required"))
	case *dataPath == "":
		return fail(stderr, "predict", usagef("--data FILE.csv is required"))
	}
	if err := inf.check(); err != nil {
		return fail(stderr, "predict", err)
	}
	if err := checkOutput("--out", *out); err != nil {
		return fail(stderr, "predict", err)
	}
	p, err := loadPredictor(*model, inf)
	if err != nil {
		return fail(stderr, "predict", err)
	}
	rec, err := p.ReadCSV(*dataPath, *contextCol)
	if err != nil {
		return fail(stderr, "predict", err)
	}
	res, err := p.Predict(rec)
	if err != nil {
		return fail(stderr, "predict", predictError(err))
	}
	var b bytes.Buffer
	err = res.WriteCSV(&b)
	if err == nil {
		err = writeOutput(stdout, "--out", *out, b.Bytes())
	}
	if err != nil {
		return fail(stderr, "predict", err)
	}
	if *out != "-" {
		err = res.WriteSummary(stdout, *out)
	}
	if err != nil {
		return fail(stderr, "predict", err)
	}
	return exitOK
}

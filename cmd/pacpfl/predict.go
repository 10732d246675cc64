package main

import (
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
// predict with a saved model (predict, plot predictive): each flag given
// on the command line replaces its part of the model file's inference.
type inferenceOverride struct {
	o  predict.Override
	fs *flag.FlagSet
}

func addInferenceOverride(fs *flag.FlagSet) *inferenceOverride {
	o := &inferenceOverride{fs: fs}
	fs.StringVar(&o.o.Mode, "gp-inference", "", "GP models: how each client is conditioned and predicts: exact, "+
		"sparse or auto (pacpfl train -h: --gp-inference); "+
		"default: the inference the model file records (a file written before pacpfl recorded it: exact); given, it "+
		"wins over the file's")
	fs.IntVar(&o.o.Inducing, "inducing", 0, fmt.Sprintf("GP models: inducing inputs M of a sparse client, chosen "+
		"from its conditioning rows (0: %d, or the client's rows if fewer); "+
		"default: the model file's; given, it wins over the file's; more than a sparse client's rows is an error",
		fl.DefaultInducing))
	return o
}

// options is the override of the flags given (after parsing).
func (o *inferenceOverride) options() predict.Override {
	o.o.SetMode, o.o.SetInducing = flagSet(o.fs, "gp-inference"), flagSet(o.fs, "inducing")
	return o.o
}

// check refuses a bad mode or M (a usage error), before any file is read.
func (o *inferenceOverride) check() error { return libError(o.options().Check()) }

// predictError words the library's errors that the command line can fix
// in terms of its flags (predict.Explain).
func predictError(err error) error { return libError(predict.Explain(err)) }

// loadPredictor reads the model file of --model and applies the inference
// flags to it.
func loadPredictor(path string, inf *inferenceOverride) (*predict.Predictor, error) {
	p, err := predict.LoadWith(path, inf.options())
	return p, libError(err)
}

func runPredict(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("predict", stderr)
	var o predict.FileOptions
	fs.StringVar(&o.Model, "model", "", "the model `FILE` (pacpfl train --data FILE.csv --save FILE)")
	fs.StringVar(&o.Data, "data", "",
		"the CSV `FILE` of rows to predict: the model's client, feature and (for context rows) target columns")
	out := fs.String("out", "-", "write the predictions as CSV to `FILE` (-: standard output)")
	fs.StringVar(&o.ContextColumn, "context-column", "", "a column marking the rows that are a client's own labelled "+
		"data (1, true, yes, train or context): the model personalises on them and predicts the others; needed for "+
		"clients the model never saw")
	inf := addInferenceOverride(fs)
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	o.Override = inf.options()
	err := o.Check()
	if err == nil {
		err = checkOutput("--out", *out)
	}
	var res *predict.Result
	if err == nil {
		res, err = predict.PredictFile(o)
	}
	if err == nil {
		err = writeOutputStream(stdout, "--out", *out, res.WriteCSV)
	}
	if err == nil && *out != "-" {
		err = res.WriteSummary(stdout, *out)
	}
	if err != nil {
		return fail(stderr, "predict", libError(err))
	}
	return exitOK
}

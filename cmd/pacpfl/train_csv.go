package main

import (
	"flag"
	"io"
	"slices"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/internal/cli"
	"github.com/pacpfl/pacpfl/train"
)

// pacpfl train --data FILE.csv: PAC-PFL on a user's own federated data set
// (README, "Your own data"). Regression trains GP clients, classification
// BNN clients with the MLP; the trained model can be saved (--save) for
// pacpfl predict and pacpfl plot predictive.

// Built-in data sets of --data; any other value is a CSV file.
var builtinData = []string{dataPoly, dataPV, dataFMNIST}

// csvDataArg reports whether args give train a CSV file: --data with a
// value that is not a built-in data set.
func csvDataArg(args []string) bool {
	v, ok := cli.FlagValue(args, "data")
	return ok && v != "" && !slices.Contains(builtinData, v)
}

// csvFlags are the flags of train --data FILE.csv beyond the training ones:
// the source (its Federate.Seed is --seed) and --save.
type csvFlags struct {
	src  train.CSVSource
	save string
}

// register registers the CSV file's flags that a client shares with the
// server (registerTraining adds the server's and train's own).
func (c *csvFlags) register(fs *flag.FlagSet) {
	sp := &c.src.Spec
	fs.StringVar(&c.src.Path, "data", "",
		"the CSV `FILE`: a header naming the columns, then one row per sample (README, \"Your own data\")")
	fs.StringVar(&sp.ClientColumn, "client-column", "", "the column naming each row's client (required)")
	fs.StringVar(&sp.TargetColumn, "target-column", "", "the target column (required)")
	fs.Var((*stringList)(&sp.Features), "features",
		"comma-separated feature columns (default: every column but the client, target and split columns)")
	fs.StringVar((*string)(&sp.Task), "task", string(data.Regression),
		"regression (GP clients) or classification (BNN clients, an MLP; the target holds class labels)")
	fs.Float64Var(&c.src.Federate.TestFraction, "test-fraction", 0.2,
		"fraction of each client's rows drawn (with --seed) as its test rows")
	fs.StringVar(&sp.SplitColumn, "split-column", "", "a column marking each row train or test, instead of "+
		"--test-fraction")
	fs.BoolVar(&sp.DropMissing, "drop-missing", false,
		"drop rows with a missing value (empty, NA, NaN, null, ?) instead of refusing the file")
}

// registerTraining registers the CSV flags of the training run (train and
// server): the new clients and the model file.
func (c *csvFlags) registerTraining(fs *flag.FlagSet) {
	fs.Var((*stringList)(&c.src.Federate.NewClients), "new-clients",
		"comma-separated client IDs held out as new clients: never seen in "+
			"training, scored from their own training rows")
	fs.StringVar(&c.save, "save", "",
		"write the trained model to `FILE` (for pacpfl predict and pacpfl plot predictive)")
	fs.BoolVar(&c.src.SaveClients, "save-clients", true, "store every existing client's training rows in the --save "+
		"file, for their personalised predictions (false: predict treats them like new clients)")
}

// registerCSVRun registers the flags of a run on a CSV file: training's
// without the synthetic data's and the BNN's image data and model choice
// (the file's task decides the model, an MLP); training: also the run's own
// CSV flags (train and server; a client has only the server's columns).
func registerCSVRun(fs *flag.FlagSet, c *csvFlags, f *trainFlags, bf *bnnFlags, training bool) {
	f.registerTraining(fs, false)
	bf.registerNet(fs)
	bf.registerBounds(fs)
	c.register(fs)
	if training {
		c.registerTraining(fs)
	}
}

// check validates the CSV flags (before the file is read; jsonPath:
// --json) and applies the BNN defaults for classification.
func (c *csvFlags) check(fs *flag.FlagSet, jsonPath string, f *trainFlags, bf *bnnFlags) error {
	bf.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { bf.set[fl.Name] = true })
	if err := c.src.Validate(); err != nil {
		return fieldUsage(err, libraryFlag)
	}
	task := c.src.Spec.Task
	switch {
	case c.src.Spec.SplitColumn != "" && bf.set["test-fraction"]:
		return usagef("--split-column and --test-fraction both split the rows: give one")
	case c.save == "-":
		return usagef("--save -: a model file is binary; give a file name")
	case c.save != "" && c.save == jsonPath:
		return usagef("--save and --json name the same file %s", c.save)
	}
	other := bnnOnly
	if task == data.Classification {
		other = gpOnly
		bf.bnnDefaults(f)
		if !bf.set["clients-per-round"] && !bf.set["c"] {
			f.o.Server.ClientsPerRound = 0 // min(n, 24), n known from the file
		}
	}
	for _, name := range other {
		if bf.set[name] {
			return usagef("--%s does not apply to --task %s", name, task)
		}
	}
	if task == data.Classification {
		o := train.BNNOptions{Options: bf.o, Model: bf.bnnModel(), Hidden: bf.net.Hidden}
		if err := o.Validate(); err != nil {
			return fieldUsage(err, libraryFlag)
		}
		if _, err := bf.loss(); err != nil {
			return err
		}
	}
	return nil
}

// csvJob reads the CSV file of --data and builds the training run on it:
// GP clients for regression, BNN clients for classification.
func (p *fedParse) csvJob(stderr io.Writer) (*train.Job, error) {
	c, f, bf := &p.c, &p.f, &p.bf
	src := c.src
	src.Notes, src.Federate.Seed = stderr, f.seed
	return train.NewCSVJob(src, func(ds *data.Dataset) (*train.GPOptions, error) {
		o, err := f.options(ds, f.seed)
		return &train.GPOptions{Options: o, Inference: f.inference()}, err
	}, func(ds *data.Dataset) (*train.BNNOptions, error) {
		o, err := bf.options(f, ds, f.seed)
		return &train.BNNOptions{Options: o, Model: bf.bnnModel(), Hidden: bf.net.Hidden}, err
	})
}

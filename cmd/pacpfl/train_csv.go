package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/modelfile"
	"github.com/pacpfl/pacpfl/train"
)

// pacpfl train --data FILE.csv: PAC-PFL on a user's own federated data set
// (README, "Your own data"). Regression trains GP clients, classification
// BNN clients with the MLP; the trained model can be saved (--save) for
// pacpfl predict and pacpfl plot predictive.

// Built-in data sets of --data; any other value is a CSV file.
var builtinData = []string{dataPoly, dataFMNIST}

// csvDataArg reports whether args give train a CSV file: --data with a
// value that is not a built-in data set.
func csvDataArg(args []string) bool {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return false
		}
		if !strings.HasPrefix(a, "-") {
			continue // a flag's value
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name != "data" {
			continue
		}
		if !hasValue {
			if i+1 >= len(args) {
				return false
			}
			value = args[i+1]
		}
		return value != "" && !slices.Contains(builtinData, value)
	}
	return false
}

// csvFlags are the flags of train --data FILE.csv beyond the training ones.
type csvFlags struct {
	path, clientCol, targetCol, task, splitCol, save string
	features, newClients                             stringList
	testFraction                                     float64
	dropMissing, saveClients                         bool
}

// register registers the CSV file's flags that a client shares with the
// server (registerTraining adds the server's and train's own).
func (c *csvFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.path, "data", "", "the CSV `FILE`: a header naming the columns, then one row per sample (README, \"Your own data\")")
	fs.StringVar(&c.clientCol, "client-column", "", "the column naming each row's client (required)")
	fs.StringVar(&c.targetCol, "target-column", "", "the target column (required)")
	fs.Var(&c.features, "features", "comma-separated feature columns (default: every column but the client, target and split columns)")
	fs.StringVar(&c.task, "task", string(data.Regression), "regression (GP clients) or classification (BNN clients, an MLP; the target holds class labels)")
	fs.Float64Var(&c.testFraction, "test-fraction", 0.2, "fraction of each client's rows drawn (with --seed) as its test rows")
	fs.StringVar(&c.splitCol, "split-column", "", "a column marking each row train or test, instead of --test-fraction")
	fs.BoolVar(&c.dropMissing, "drop-missing", false, "drop rows with a missing value (empty, NA, NaN, null, ?) instead of refusing the file")
}

// registerTraining registers the CSV flags of the training run (train and
// server): the new clients and the model file.
func (c *csvFlags) registerTraining(fs *flag.FlagSet) {
	fs.Var(&c.newClients, "new-clients", "comma-separated client IDs held out as new clients: never seen in training, scored from their own training rows")
	fs.StringVar(&c.save, "save", "", "write the trained model to `FILE` (for pacpfl predict and pacpfl plot predictive)")
	fs.BoolVar(&c.saveClients, "save-clients", true, "store every existing client's training rows in the --save file, for their personalised predictions (false: predict treats them like new clients)")
}

// userRun is a finished training run on a CSV file and its total time.
type userRun struct {
	*train.Result
	seconds float64
}

// csvRun holds the parsed flags of train --data FILE.csv.
type csvRun struct {
	c     csvFlags
	f     trainFlags
	bf    bnnFlags
	quiet bool
	json  string
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

// parseTrainCSV parses and checks the flags; ok=false: exit with status.
func parseTrainCSV(args []string, stderr io.Writer) (r *csvRun, status int, ok bool) {
	r = &csvRun{f: newTrainFlags(), bf: newBNNFlags()}
	fs := newFlagSet("train", stderr)
	registerCSVRun(fs, &r.c, &r.f, &r.bf, true)
	fs.BoolVar(&r.quiet, "quiet", false, "no progress output")
	fs.StringVar(&r.json, "json", "", "also write the results as JSON to `FILE`")
	if st, ok := parseFlags(fs, args, false); !ok {
		return nil, st, false
	}
	if err := r.c.check(fs, &r.f, &r.bf); err != nil {
		return nil, fail(stderr, "train", err), false
	}
	if err := r.f.afterParse(fs, r.json); err != nil {
		return nil, fail(stderr, "train", err), false
	}
	if r.c.save != "" {
		if err := checkOutput("--save", r.c.save); err != nil {
			return nil, fail(stderr, "train", err), false
		}
	}
	return r, exitOK, true
}

func runTrainCSV(args []string, stdout, stderr io.Writer) int {
	r, st, ok := parseTrainCSV(args, stderr)
	if !ok {
		return st
	}
	c := &r.c
	stdout, jsonOut := reportStreams(r.json, stdout, stderr)
	start := time.Now()
	run, err := trainUserData(c, &r.f, &r.bf, r.quiet, stderr)
	if err != nil {
		return fail(stderr, "train", err)
	}
	run.seconds = time.Since(start).Seconds()
	if err := run.write(c, &r.f, stdout, jsonOut, r.json); err != nil {
		return fail(stderr, "train", err)
	}
	return exitOK
}

// write prints the run's report, saves the model (--save) and writes the
// JSON report (--json).
func (run *userRun) write(c *csvFlags, f *trainFlags, stdout, jsonOut io.Writer, jsonPath string) error {
	text, rep := run.Report(train.ReportInfo{Source: c.path, Task: c.task, ClientColumn: c.clientCol, SplitColumn: c.splitCol,
		TestFraction: c.testFraction, Seed: f.seed, TotalSeconds: run.seconds})
	if err := text.WriteText(stdout); err != nil {
		return err
	}
	if c.save != "" {
		b, err := modelfile.Encode(run.Model)
		if err == nil {
			err = writeOutput(stdout, "--save", c.save, b)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "model saved to %s (%d bytes; pacpfl predict --model %s --data FILE.csv)\n", c.save, len(b), c.save)
	}
	if jsonPath != "" {
		return writeJSON(jsonOut, jsonPath, rep)
	}
	return nil
}

// check validates the CSV flags (before the file is read) and applies the
// BNN defaults for classification.
func (c *csvFlags) check(fs *flag.FlagSet, f *trainFlags, bf *bnnFlags) error {
	bf.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { bf.set[fl.Name] = true })
	switch {
	case c.clientCol == "":
		return usagef("--client-column is required: the column naming each row's client")
	case c.targetCol == "":
		return usagef("--target-column is required")
	case !(c.testFraction >= 0 && c.testFraction < 1):
		return usagef("--test-fraction %v must lie in [0, 1)", c.testFraction)
	case c.splitCol != "" && bf.set["test-fraction"]:
		return usagef("--split-column and --test-fraction both split the rows: give one")
	case c.save == "-":
		return usagef("--save -: a model file is binary; give a file name")
	case c.save != "" && c.save == f.jsonPathOf(fs):
		return usagef("--save and --json name the same file %s", c.save)
	}
	var other []string
	switch data.Task(c.task) {
	case data.Regression:
		other = bnnOnly
	case data.Classification:
		other = gpOnly
		bf.bnnDefaults(f)
		if !bf.set["clients-per-round"] && !bf.set["c"] {
			f.o.Server.ClientsPerRound = 0 // min(n, 24), n known from the file
		}
	default:
		return usagef("unknown --task %q (want regression or classification)", c.task)
	}
	for _, name := range other {
		if bf.set[name] {
			return usagef("--%s does not apply to --task %s", name, c.task)
		}
	}
	if data.Task(c.task) == data.Classification {
		m := bf.bnnModel()
		switch {
		case bf.net.Hidden < 0:
			return usagef("--hidden %d must be ≥ 0", bf.net.Hidden)
		case bf.samples < 1:
			return usagef("--samples %d must be at least 1", bf.samples)
		case !(bf.o.SigmaMu > 0) || math.IsInf(bf.o.SigmaMu, 0) || !(bf.o.SigmaOmega > 0) || math.IsInf(bf.o.SigmaOmega, 0):
			return usagef("--sigma-mu %v and --sigma-omega %v must be positive and finite", bf.o.SigmaMu, bf.o.SigmaOmega)
		case bf.o.Bounds.WeightDraws < 1:
			return usagef("--weight-draws %d must be at least 1", bf.o.Bounds.WeightDraws)
		}
		if err := m.Posterior.Validate(); err != nil {
			return usageError{err}
		}
		if _, err := bf.loss(); err != nil {
			return err
		}
	}
	return nil
}

// jsonPathOf is the --json value of fs ("" when absent).
func (f *trainFlags) jsonPathOf(fs *flag.FlagSet) string {
	if fl := fs.Lookup("json"); fl != nil {
		return fl.Value.String()
	}
	return ""
}

// trainUserData reads the file, trains, and evaluates every client's test
// rows through the model that --save writes.
func trainUserData(c *csvFlags, f *trainFlags, bf *bnnFlags, quiet bool, stderr io.Writer) (*userRun, error) {
	_, fed, err := readUserData(c, f, stderr)
	if err != nil {
		return nil, err
	}
	return trainUserFed(c, f, bf, fed, quiet, stderr, nil)
}

// spec is the data.CSVSpec of the flags.
func (c *csvFlags) spec() data.CSVSpec {
	return data.CSVSpec{ClientColumn: c.clientCol, TargetColumn: c.targetCol, Features: c.features,
		SplitColumn: c.splitCol, Task: data.Task(c.task), DropMissing: c.dropMissing}
}

// readUserData reads the CSV file of --data and federates it.
func readUserData(c *csvFlags, f *trainFlags, stderr io.Writer) (*data.Records, *data.Federated, error) {
	rec, fed, err := train.ReadData(c.path, c.spec(),
		data.FederateConfig{NewClients: c.newClients, TestFraction: c.testFraction, Seed: f.seed})
	if rec != nil && rec.Dropped > 0 {
		fmt.Fprintf(stderr, "note: %d row(s) with a missing value dropped (--drop-missing)\n", rec.Dropped)
	}
	var le *train.LabelsError
	if errors.As(err, &le) {
		return nil, nil, fmt.Errorf("%w (--task regression)", err)
	}
	if err != nil {
		return nil, nil, err
	}
	return rec, fed, nil
}

// remoteClients, given the loop's configuration and the local clients,
// adjusts the configuration and returns the clients to train with
// instead (pacpfl server: proxies of the client processes).
type remoteClients func(cfg *fl.Config, local []fl.Client) ([]fl.Client, error)

// trainUserFed trains on the federated file and evaluates every client's
// test rows; remote, if set, supplies the clients.
func trainUserFed(c *csvFlags, f *trainFlags, bf *bnnFlags, fed *data.Federated, quiet bool, stderr io.Writer, remote remoteClients) (*userRun, error) {
	o := train.Options{Source: c.path, ClientColumn: c.clientCol, Seed: f.seed, SaveClients: c.saveClients, Clients: remote}
	var server *fl.Config
	if data.Task(c.task) == data.Regression {
		gpo, err := f.options(fed.Dataset, f.seed)
		if err != nil {
			return nil, err
		}
		o.GP = &train.GPOptions{Options: gpo, Inference: f.inference()}
		server = &o.GP.Options.Server
	} else {
		bno, err := bf.options(f, fed.Dataset, f.seed)
		if err != nil {
			return nil, err
		}
		o.BNN = &train.BNNOptions{Options: bno, Model: bf.bnnModel(), Hidden: bf.net.Hidden}
		server = &o.BNN.Options.Server
	}
	if server.DP != nil && c.saveClients {
		fmt.Fprintln(stderr, "note: the model file holds the existing clients' training rows (--save-clients); the DP guarantee covers the particles, not those rows")
	}
	// A federation server (remote) replaces the round hook with its own,
	// which checkpoints before it stops.
	ctx, stop := signalContext()
	defer stop()
	prog := newProgress(stderr, "train", server.Rounds, quiet)
	prog.hideLML = server.DP != nil
	server.Progress = prog.round
	res, err := train.Run(ctx, fed, o)
	prog.done()
	var ce *train.ConfigError
	if errors.As(err, &ce) {
		return nil, usageError{ce.Err}
	}
	if err != nil {
		return nil, err
	}
	return &userRun{Result: res}, nil
}

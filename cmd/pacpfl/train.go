package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/internal/cliprogress"
	"github.com/pacpfl/pacpfl/report"
)

func init() {
	register(&command{
		name:    "train",
		summary: "train PAC-PFL (GP clients on Polynomial, or --model bnn on Fashion-MNIST) and print metrics and bounds",
		run:     runTrain,
	})
}

// afterParse records which flags were given explicitly, validates them and
// checks, before any work, that the --json output can be created: a run of
// hours should not end in "no such directory".
func (f *trainFlags) afterParse(fs *flag.FlagSet, jsonPath string) error {
	f.given = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) {
		f.given[fl.Name] = true
		switch fl.Name {
		case "tau":
			f.tauSet = true
		case "dp-delta":
			f.dpDeltaSet = true
		}
	})
	if err := f.validate(fs); err != nil {
		return err
	}
	if err := f.net.validate(); err != nil {
		return err
	}
	if fs.Lookup("gp-inference") != nil {
		if f.gi.Inducing < 0 {
			return usagef("--inducing %d: want at least 1 inducing input (0: the default %d)", f.gi.Inducing, fl.DefaultInducing)
		}
		if err := f.inference().Validate(); err != nil {
			return usagef("--gp-inference %q: want exact, sparse or auto", f.gi.Mode)
		}
	}
	if jsonPath == "" {
		return nil
	}
	return checkOutput("--json", jsonPath)
}

// reportStreams splits stdout between the text report and --json: with
// --json - the JSON alone goes to stdout, so that it can be piped, and the
// text goes to stderr.
func reportStreams(jsonPath string, stdout, stderr io.Writer) (text, js io.Writer) {
	if jsonPath == "-" {
		return stderr, stdout
	}
	return stdout, stdout
}

// usageError is bad input: exit status 2.
type usageError struct{ error }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// dataset builds the data set of the flags: Polynomial, or PV when f.pv is
// set.
func (f *trainFlags) dataset(seed uint64) (*data.Dataset, error) {
	if f.pv != nil {
		c := *f.pv
		c.Existing, c.New, c.Seed = f.poly.Existing, f.poly.New, seed
		if err := memoryError(fmt.Sprintf("--clients %d --new-clients %d", c.Existing, c.New), c.MemoryBytes()); err != nil {
			return nil, err
		}
		ds, err := data.PV(c)
		if err != nil {
			return nil, usageError{err}
		}
		return ds, nil
	}
	c := data.DefaultPolynomial()
	c.Existing, c.New, c.Extra, c.Seed = f.poly.Existing, f.poly.New, f.poly.Extra, seed
	// A lower bound that turns an absurd --clients or --extra into a
	// message instead of an out-of-memory crash or hours of data generation.
	if err := memoryError(fmt.Sprintf("--clients %d --new-clients %d --extra %d", c.Existing, c.New, c.Extra), c.MemoryBytes()); err != nil {
		return nil, err
	}
	ds, err := data.Polynomial(c)
	if err != nil {
		return nil, usageError{err}
	}
	return ds, nil
}

// options turns the flags into validated PAC-PFL options for ds.
func (f *trainFlags) options(ds *data.Dataset, seed uint64) (fl.PACPFLOptions, error) {
	o := fl.DefaultPACPFLOptions()
	s, err := f.serverConfig(ds, seed)
	if err != nil {
		return o, err
	}
	o.Server = s
	o.SigmaP = f.o.SigmaP
	if err := checkPositive("sigma-p", f.o.SigmaP); err != nil {
		return o, err
	}
	if err := f.net.validate(); err != nil {
		return o, err
	}
	o.Bounds.PriorSamples, o.Bounds.FuncSamples = f.o.Bounds.PriorSamples, f.o.Bounds.FuncSamples
	plan := o.MemoryPlan(f.gpModel(ds.D, false).Dim())
	what := map[string]string{"particles": fmt.Sprintf("--k %d", f.o.Server.K),
		"bounds": fmt.Sprintf("--bound-samples %d --func-samples %d", f.o.Bounds.PriorSamples, f.o.Bounds.FuncSamples)}
	if err := memoryError(what[plan.Dominant()], plan.Bytes()); err != nil {
		return o, err
	}
	if o.Bounds, err = f.boundOptions(seed); err != nil {
		return o, err
	}
	if o.Beta, err = fl.ParseTemperature(f.beta); err != nil {
		return o, usagef("--beta: %v", err)
	}
	// Check the bound assumptions now rather than after training.
	if err := o.CheckBounds(ds); err != nil {
		return o, usagef("%v (or pass --bound-samples 0 --bound-trained-samples 0 to skip the bounds)", err)
	}
	return o, nil
}

// serverConfig turns the flags of Algorithm 1 (3 with DP) into a validated
// server configuration for the existing clients of ds (--lambda sets τ with
// β = min m_i).
func (f *trainFlags) serverConfig(ds *data.Dataset, seed uint64) (fl.Config, error) {
	n := len(ds.Existing)
	s, err := f.config(seed)
	if err != nil {
		return s, err
	}
	if err := f.checkData(ds); err != nil {
		return s, err
	}
	if s.ClientsPerRound == 0 {
		s.ClientsPerRound = min(n, fl.DefaultClientsPerRound)
	}
	if s.Tau, err = f.serverTau(ds); err != nil {
		return s, err
	}
	if s.DP, err = f.dpConfig(); err != nil {
		return s, err
	}
	if err := s.Validate(n); err != nil {
		return s, usageError{err}
	}
	return s, nil
}

func runTrain(args []string, stdout, stderr io.Writer) int {
	if csvDataArg(args) {
		return runTrainCSV(args, stdout, stderr) // train_csv.go
	}
	fs := newFlagSet("train", stderr)
	f, bf := newTrainFlags(), newBNNFlags()
	f.registerTraining(fs, true)
	bf.registerAll(fs)
	quiet := fs.Bool("quiet", false, "no progress output")
	jsonPath := fs.String("json", "", "also write the results as JSON to `FILE`")
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	if err := bf.resolve(fs); err != nil {
		return fail(stderr, "train", err)
	}
	if err := f.afterParse(fs, *jsonPath); err != nil {
		return fail(stderr, "train", err)
	}
	if bf.model == modelBNN {
		return runTrainBNN(&f, &bf, *quiet, *jsonPath, stdout, stderr)
	}
	stdout, jsonOut := reportStreams(*jsonPath, stdout, stderr)
	start := time.Now()
	ds, err := f.dataset(f.seed)
	if err != nil {
		return fail(stderr, "train", err)
	}
	o, err := f.options(ds, f.seed)
	if err != nil {
		return fail(stderr, "train", err)
	}
	ctx, stop := signalContext()
	defer stop()
	prog := newProgress(stderr, "train", o.Server.Rounds, *quiet)
	prog.hideLML = o.Server.DP != nil
	o.Server.Progress, o.Server.AfterRound = prog.round, stopOn(ctx)
	g := fl.NewGPModel(ds.D)
	g.Inference = f.inference()
	res, err := fl.RunPACPFL(ds, g, o, fl.MethodPACPFL)
	prog.done()
	if err != nil {
		return fail(stderr, "train", err)
	}
	if err := writeTrainReport(stdout, jsonOut, &f, ds, o, res, start, *jsonPath); err != nil {
		return fail(stderr, "train", err)
	}
	return exitOK
}

// writeTrainReport prints the report of a PAC-PFL run on Polynomial and
// writes it as JSON to jsonPath (if set): pacpfl train and pacpfl server.
func writeTrainReport(stdout, jsonOut io.Writer, f *trainFlags, ds *data.Dataset, o fl.PACPFLOptions, res *fl.MethodResult, start time.Time, jsonPath string) error {
	text := report.TrainText{
		Header: fmt.Sprintf("PAC-PFL on Polynomial: n=%d existing (m_i=%d), %d new clients; k=%d, T=%d, c=%d, τ=%.4g, σ_P=%g, β=%s, seed %d; GP inference %s",
			len(ds.Existing), ds.MinM(), len(ds.New), o.Server.K, o.Server.Rounds, o.Server.ClientsPerRound, o.Server.Tau, o.SigmaP, o.Beta, f.seed, f.inference()),
		LML: "mean client LML", Train: res.Train, NoRounds: o.Server.Rounds == 0, Private: o.Server.DP != nil,
		Existing: report.RegressionLine(len(ds.Existing), res.Existing.MeanRSMSE, res.Existing.MeanCE),
		New:      report.RegressionLine(len(ds.New), res.New.MeanRSMSE, res.New.MeanCE),
		Bounds:   res,
	}
	if err := text.WriteText(stdout); err != nil || jsonPath == "" {
		return err
	}
	rep := report.NewTrain(res, o.Server.DP != nil)
	rep.Dataset, rep.Seed, rep.TotalSeconds = "polynomial", f.seed, time.Since(start).Seconds()
	rep.Config = map[string]any{
		"k": o.Server.K, "rounds": o.Server.Rounds, "clients_per_round": o.Server.ClientsPerRound,
		"batch": o.Server.Batch, "lr": o.Server.LR, "optimizer": o.Server.Optimizer, "aggregate": f.aggregate,
		"sigma_p": o.SigmaP, "tau": o.Server.Tau, "dp_epsilon": f.dp.Epsilon, "dp_clip": f.dp.Clip,
		"dp_mechanism": f.dp.Mechanism, "beta": o.Beta.String(),
		"clients": len(ds.Existing), "new_clients": len(ds.New), "extra": f.poly.Extra,
		"gp_inference": f.inference().Mode, "inducing": f.inference().Inducing,
	}
	return writeJSON(jsonOut, jsonPath, rep)
}

// fmtMetric is report.Metric: x, or "–" for an undefined (NaN) figure.
func fmtMetric(format string, x float64) string { return report.Metric(format, x) }

// fail prints err and returns 2 for bad input, 1 otherwise.
func fail(stderr io.Writer, cmd string, err error) int {
	if errors.Is(err, context.Canceled) {
		// Outputs are written after the run: an interrupted one wrote
		// none.
		fmt.Fprintf(stderr, "pacpfl %s: interrupted; no output written\n", cmd)
		return exitInterrupted
	}
	fmt.Fprintf(stderr, "pacpfl %s: %v\n", cmd, err)
	var ue usageError
	if errors.As(err, &ue) || errors.Is(err, fl.ErrTooManyInducing) {
		return exitUsage
	}
	return exitError
}

// progress reports training progress on stderr (cliprogress.Bar): a
// redrawn bar on a terminal, otherwise one log line every few seconds;
// nothing with --quiet.
type progress struct {
	bar     *cliprogress.Bar
	hideLML bool   // DP runs: the client LMLs are not covered by the guarantee
	unit    string // what is counted: "round" unless set
}

// logEvery is the interval of the log lines when stderr is not a terminal.
const logEvery = cliprogress.LogEvery

func newProgress(w io.Writer, label string, total int, quiet bool) *progress {
	return &progress{bar: cliprogress.New(w, label, total, quiet), unit: "round"}
}

func (p *progress) update(round int, lml float64) {
	p.bar.Unit, p.bar.HideValue = p.unit, p.hideLML
	p.bar.Update(round, lml)
}

// round is update as a method's Progress hook.
func (p *progress) round(e fl.RoundEvent) { p.update(e.Round, e.Value) }

func (p *progress) done() { p.bar.Done() }

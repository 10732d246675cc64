package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/pacpfl/pacpfl/clienteval"
	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/internal/cliprogress"
	"github.com/pacpfl/pacpfl/modelfile"
	"github.com/pacpfl/pacpfl/predict"
	"github.com/pacpfl/pacpfl/rpc"
	"github.com/pacpfl/pacpfl/train"
)

func init() {
	register(&command{
		name: "train",
		summary: "train PAC-PFL (GP clients on Polynomial, or --model bnn on Fashion-MNIST) and print metrics and " +
			"bounds",
		run: runTrain,
	})
}

// afterParse records which flags were given explicitly, validates them and
// checks, before any work, that the --json output can be created: a run of
// hours should not end in "no such directory".
func (f *trainFlags) afterParse(fs *flag.FlagSet, jsonPath string) error {
	f.given = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.given[fl.Name] = true })
	f.dpDeltaSet = f.given["dp-delta"]
	if err := f.validate(fs); err != nil {
		return err
	}
	if err := f.net.validate(); err != nil {
		return err
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

func (e usageError) Unwrap() error { return e.error }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// dataset builds the data set of the flags: Polynomial, or PV when f.pv is
// set.
func (f *trainFlags) dataset(seed uint64) (*data.Dataset, error) {
	s := f.settings()
	what := fmt.Sprintf("--clients %d --new-clients %d", f.poly.Existing, f.poly.New)
	if f.pv == nil {
		what += fmt.Sprintf(" --extra %d", f.poly.Extra)
	}
	if err := memoryError(what, s.DatasetBytes()); err != nil {
		return nil, err
	}
	ds, err := s.Dataset(seed)
	return ds, asUsage(err)
}

// options turns the flags into validated PAC-PFL options for ds.
func (f *trainFlags) options(ds *data.Dataset, seed uint64) (fl.PACPFLOptions, error) {
	if err := f.checkDPDelta(); err != nil {
		return fl.PACPFLOptions{}, err
	}
	o, err := f.settings().PACPFL(ds, seed)
	if err != nil {
		return o, settingsError(err)
	}
	if err := f.net.validate(); err != nil {
		return o, err
	}
	plan := o.MemoryPlan(f.gpModel(ds.D, false).Dim())
	what := map[string]string{"particles": fmt.Sprintf("--k %d", f.o.Server.K),
		"bounds": fmt.Sprintf("--bound-samples %d --func-samples %d", f.o.Bounds.PriorSamples, f.o.Bounds.FuncSamples)}
	if err := memoryError(what[plan.Dominant()], plan.Bytes()); err != nil {
		return o, err
	}
	// Check the bound assumptions now rather than after training.
	if err := o.CheckBounds(ds); err != nil {
		return o, usagef("%w (or pass --bound-samples 0 --bound-trained-samples 0 to skip the bounds)", err)
	}
	return o, nil
}

// serverConfig turns the flags of Algorithm 1 (3 with DP) into a validated
// server configuration for the existing clients of ds (--lambda sets τ with
// β = min m_i).
func (f *trainFlags) serverConfig(ds *data.Dataset, seed uint64) (fl.Config, error) {
	if err := f.checkDPDelta(); err != nil {
		return fl.Config{}, err
	}
	s, err := f.settings().ServerConfig(ds, seed)
	return s, settingsError(err)
}

// checkDPDelta refuses --dp-delta given with a pure ε-DP mechanism.
func (f *trainFlags) checkDPDelta() error {
	if m := f.dp.Mechanism; f.dp.Epsilon != 0 && f.dpDeltaSet && (m == fl.DPLaplace || m == fl.DPPaper) {
		return usagef("--dp-delta is only used by --dp-mechanism gaussian (%s is pure ε-DP)", m)
	}
	return nil
}

func runTrain(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("train", stderr)
	var p fedParse
	p.flags(fs, args, true)
	quiet := fs.Bool("quiet", false, "no progress output")
	jsonPath := fs.String("json", "", "also write the results as JSON to `FILE`")
	fs.BoolVar(&p.certify, "certify", false, "GP clients: also certify the trained model (docs/math.md §2.18, "+
		"at --delta): bounds on the expected clipped squared error with the measured loss beside them; costs a "+
		"second training run on half the clients")
	registerExplain(fs, &p.explain)
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	err := p.check(fs, *jsonPath)
	if err == nil && p.certify && !p.gpClients() {
		err = usagef("--certify needs GP clients (Polynomial, PV or a CSV regression task)")
	}
	if err == nil {
		err = p.runJob(stdout, stderr, *jsonPath, "train", *quiet, func(job *train.Job) (*train.Outcome, error) {
			if job.BNN != nil {
				for _, n := range job.BNN.Data.Notes {
					fmt.Fprintf(stderr, "note: %s\n", n)
				}
			}
			ctx, stop := signalContext()
			defer stop()
			return job.Run(ctx, nil)
		})
	}
	if err != nil {
		return fail(stderr, "train", libError(err))
	}
	return exitOK
}

// runJob builds the job of the flags, runs it with run while its progress
// shows on stderr as label (without the LMLs of a DP run: its guarantee
// does not cover them), and writes its reports: train and server.
func (p *fedParse) runJob(stdout, stderr io.Writer, jsonPath, label string, quiet bool,
	run func(*train.Job) (*train.Outcome, error)) error {
	stdout, jsonOut := reportStreams(jsonPath, stdout, stderr)
	start := time.Now()
	job, err := p.job(stderr)
	if err != nil {
		return err
	}
	if p.certify {
		co := &fl.GPCertifyOptions{Certify: fl.CertifyOptions{Delta: p.f.o.Bounds.Delta}}
		if job.GP != nil {
			job.GP.Certify = co
		} else {
			job.CSV.Options.GP.Certify = co
		}
		if !quiet {
			fmt.Fprintln(stderr, "certification after training: a second run on half the clients, then the bounds")
		}
	}
	cfg := job.Config()
	prog := newProgress(stderr, label, cfg.Rounds, quiet)
	prog.hideLML, cfg.Progress = cfg.DP != nil, prog.round
	out, err := run(job)
	prog.done()
	if err != nil {
		return err
	}
	return p.write(out, time.Since(start), stdout, jsonOut, jsonPath)
}

// registerExplain registers --explain (train and server).
func registerExplain(fs *flag.FlagSet, explain *bool) {
	fs.BoolVar(explain, "explain", false, "print the long report: every setting, the derivation of each bound "+
		"and every term of the certificates")
}

// gpClients reports whether the parsed flags train GP clients: on
// Polynomial, or on a CSV regression task.
func (p *fedParse) gpClients() bool {
	if p.csv {
		return p.c.src.Spec.Task != data.Classification
	}
	return p.bf.model != modelBNN
}

// job builds the training run of the flags: the data (generated, or read
// from --data FILE.csv), the client model and the options.
func (p *fedParse) job(stderr io.Writer) (*train.Job, error) {
	f, bf := &p.f, &p.bf
	if p.csv {
		return p.csvJob(stderr)
	}
	info := f.settings().Info(f.seed)
	if bf.model == modelBNN {
		im, err := bf.images()
		if err != nil {
			return nil, err
		}
		ds, err := bf.dataset(im, f, f.seed)
		if err != nil {
			return nil, err
		}
		o, err := bf.options(f, ds, f.seed)
		if err != nil {
			return nil, err
		}
		info.Dataset, info.Description, info.Partition, info.Alpha = dataFMNIST, bf.describe(f), bf.partition,
			bf.dir.Alpha
		if bf.partition == partLabels5 {
			info.Split = bf.split
		}
		return &train.Job{BNN: &train.BNNJob{Data: ds, Options: o, Model: bf.bnnModel(), Info: info}}, nil
	}
	ds, err := f.dataset(f.seed)
	if err != nil {
		return nil, err
	}
	o, err := f.options(ds, f.seed)
	if err != nil {
		return nil, err
	}
	info.Dataset = f.datasetKey()
	if f.pv == nil {
		info.Extra = f.poly.Extra
	} else {
		info.Description = fmt.Sprintf("PV-%s(%d)", strings.ToUpper(f.pv.Variant), f.pv.Train)
	}
	return &train.Job{GP: &train.GPJob{Data: ds, Options: o, Inference: f.inference(), Info: info}}, nil
}

// write prints the outcome's report, saves the model of a run on a CSV
// file (--save) and writes the JSON report (--json): train and server.
func (p *fedParse) write(out *train.Outcome, took time.Duration, stdout, jsonOut io.Writer, jsonPath string) error {
	text, rep := out.Report(took.Seconds())
	text.Explain = p.explain
	if err := text.WriteText(stdout); err != nil {
		return err
	}
	if save := p.c.save; p.csv && save != "" {
		b, err := modelfile.Encode(out.CSV.Model)
		if err == nil {
			err = writeOutput(stdout, "--save", save, b)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "model saved to %s (%d bytes; pacpfl predict --model %s --data FILE.csv)\n", save, len(b),
			save)
	}
	if jsonPath != "" {
		return writeJSON(jsonOut, jsonPath, rep)
	}
	return nil
}

// libError is err as a usage error when it is, or wraps, the ConfigError
// of a library package: options that cannot work.
func libError(err error) error {
	var (
		te *train.ConfigError
		ce *clienteval.ConfigError
		pe *predict.ConfigError
		re *rpc.ConfigError
	)
	if errors.As(err, &te) || errors.As(err, &ce) || errors.As(err, &pe) || errors.As(err, &re) {
		return usageError{err}
	}
	return err
}

// fail prints err, the library's option fields in it named by their flags
// (libraryFlags), and returns 2 for bad input, 1 otherwise.
func fail(stderr io.Writer, cmd string, err error) int {
	err = flagNames(err, libraryFlag)
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

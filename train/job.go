package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/report"
)

// Job is one PAC-PFL training run in one of three modes, exactly one of
// them set: GP clients on a generated data set (GP), BNN clients on a
// generated image split (BNN), or a user's CSV file (CSV: GP clients for
// regression, BNN clients for classification). pacpfl train runs a Job
// with its clients in this process, pacpfl server the same Job with remote
// clients (Run's remote), and both print its Outcome's reports.
type Job struct {
	GP  *GPJob
	BNN *BNNJob
	CSV *CSVJob
}

// GPJob is a run of GP clients on a generated data set (Polynomial).
type GPJob struct {
	Data      *data.Dataset
	Options   fl.PACPFLOptions
	Inference fl.GPInference
	Info      SyntheticInfo
	// Certify, if set, adds the PAC-Bayes certificate (docs/math.md §2.18)
	// to the outcome's test-set certificates (docs/math.md §2.18.4,
	// computed on every run): fl.CertifyGP trains the hyper-prior again
	// on half the existing clients (A, about the cost of the training) and
	// bounds the other half (B) with it. Its Seed is the run's.
	Certify *fl.GPCertifyOptions
}

// BNNJob is a run of BNN clients on a generated split (Fashion-MNIST).
type BNNJob struct {
	Data    *data.Dataset
	Options fl.BNNOptions
	Model   *fl.BNNModel
	Info    SyntheticInfo
}

// CSVJob is a run on a user's CSV file: its records (the rows remote
// clients hash to prove they hold the same data), their federation, the
// run's options and what its reports say about the file (Info's
// TotalSeconds is set by Outcome.Report).
type CSVJob struct {
	Records *data.Records
	Data    *data.Federated
	Options Options
	Info    ReportInfo
}

// SyntheticInfo is what the reports of a run on a generated data set say
// beyond its result and options.
type SyntheticInfo struct {
	// Dataset names the data set in the JSON report ("polynomial",
	// "pv-ew-150", "fmnist"); Description names it in the text ("PV-EW(150)";
	// "": Polynomial) or a BNN's split ("fmnist labels5 small").
	Dataset, Description string
	Seed                 uint64
	// Extra is Polynomial's personalisation-only samples per client.
	Extra int
	// Partition is a BNN's split; Split names the sizes of a labels5
	// split ("": Alpha, the concentration of a dirichlet split, is
	// recorded instead).
	Partition, Split string
	Alpha            float64
	// Aggregate ("sum", "mean") and the DP settings as the user gave them,
	// recorded also when DP is off.
	Aggregate         string
	DPEpsilon, DPClip float64
	DPMechanism       string
}

// Config is the configuration of the job's training loop: a caller sets
// its Progress, a federation server its round hooks and update filters,
// before Run.
func (j *Job) Config() *fl.Config {
	switch {
	case j.GP != nil:
		return &j.GP.Options.Server
	case j.BNN != nil:
		return &j.BNN.Options.Server
	case j.CSV != nil && j.CSV.Options.GP != nil:
		return &j.CSV.Options.GP.Options.Server
	case j.CSV != nil && j.CSV.Options.BNN != nil:
		return &j.CSV.Options.BNN.Options.Server
	}
	return nil
}

// check refuses a job without exactly one mode.
func (j *Job) check() error {
	n := 0
	for _, set := range []bool{j.GP != nil, j.BNN != nil, j.CSV != nil} {
		if set {
			n++
		}
	}
	if n != 1 || j.Config() == nil {
		return errors.New("train: a job needs exactly one of GP, BNN and CSV (with its GP or BNN options)")
	}
	return nil
}

// Outcome is a finished Job: the result of a run on generated data
// (Result), or of a run on a CSV file (CSV: the model file too).
type Outcome struct {
	Result *fl.MethodResult
	CSV    *Result
	// Certification holds the certificates of a job on generated data:
	// the test-set ones always, fl.CertifyGP's when GPJob.Certify asks
	// for them (a CSV run keeps its own in CSV.Certification).
	Certification *report.Certification
	job           *Job
}

// Run trains the job and evaluates its clients. remote, if set, returns
// the clients to train with in place of this process's (pacpfl server:
// proxies of the client processes), and the round hooks of Config stop
// the run. Without it, training stops between two rounds once ctx is done,
// with ctx's error.
func (j *Job) Run(ctx context.Context, remote func() ([]fl.Client, error)) (*Outcome, error) {
	if err := j.check(); err != nil {
		return nil, err
	}
	out := &Outcome{job: j}
	var err error
	switch {
	case j.GP != nil:
		o := j.GP.Options
		g := fl.NewGPModel(j.GP.Data.D)
		g.Inference = j.GP.Inference
		if remote != nil {
			o.Clients = func(*fl.GPModel) ([]fl.Client, error) { return remote() }
		} else {
			stopOn(ctx, &o.Server)
		}
		out.Result, err = fl.RunPACPFL(j.GP.Data, g, o, fl.MethodPACPFL)
		if err == nil {
			out.Certification, err = certify(ctx, j.GP.Data, g, o, out.Result.Train.Particles, j.GP.Certify,
				j.GP.Info.Seed)
		}
	case j.BNN != nil:
		o := j.BNN.Options
		if remote != nil {
			o.Clients = func(*fl.BNNModel) ([]fl.Client, error) { return remote() }
		} else {
			stopOn(ctx, &o.Server)
		}
		out.Result, err = fl.RunPACPFLBNN(j.BNN.Data, j.BNN.Model, o)
		if err == nil {
			ds, res := j.BNN.Data, out.Result
			out.Certification = certifyZeroOne(ds, accuracies(res.ExistingClass, len(ds.Existing)),
				accuracies(res.NewClass, len(ds.New)), o.Bounds.Delta)
		}
	default:
		o := j.CSV.Options
		if remote != nil {
			o.Clients = func(*fl.Config, []fl.Client) ([]fl.Client, error) { return remote() }
		}
		out.CSV, err = Run(ctx, j.CSV.Data, o)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// certify computes the certificates of a trained GP model: the test-set
// certificates of its deployed predictor always (they need only the test
// data), fl.CertifyGP's when co asks for them (at the run's seed). A model
// or data set they cannot cover (too few clients or samples, a client too
// large for exact GP posteriors) leaves the reason in the Unavailable
// fields, an interruption is an error.
func certify(ctx context.Context, ds *data.Dataset, g *fl.GPModel, o fl.PACPFLOptions, particles []float64,
	co *fl.GPCertifyOptions, seed uint64) (*report.Certification, error) {
	out := &report.Certification{}
	delta := o.Bounds.Delta
	if co != nil {
		delta = co.Certify.Delta
	}
	if delta == 0 {
		delta = 0.05
	}
	clip := 1.0
	if co != nil && co.Clip != 0 {
		clip = co.Clip
	}
	ts, err := fl.TestSetCertificatesGP(ds, g.Trained(o), particles, clip, delta)
	if err != nil {
		out.TestSetUnavailable = err.Error()
	}
	out.TestSet = ts
	if co == nil {
		return out, nil
	}
	start := time.Now()
	for i := range ds.Existing {
		if m := len(ds.Existing[i].Y); m > CertifyMaxRows {
			out.Unavailable = fmt.Sprintf("existing client %d has %d training rows; the certificates' exact GP "+
				"posteriors are limited to %d", i, m, CertifyMaxRows)
			return out, nil
		}
	}
	c := *co
	c.Seed = seed
	cert, err := fl.CertifyGP(ds, g, o, particles, c)
	out.Seconds = time.Since(start).Seconds()
	switch {
	case err == nil:
		// The same test-set certificates as above: reported once, in TestSet.
		cert.TestSet = nil
		out.Certificates = cert
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		return nil, err
	default:
		out.Unavailable = err.Error()
	}
	return out, nil
}

// certifyZeroOne is the test-set certificates of a run's personalised BNN
// predictors on the 0–1 error of their test points, from the clients'
// accuracies (NaN: none), computed on every run: they need only the test
// data.
func certifyZeroOne(ds *data.Dataset, accExisting, accNew []float64, delta float64) *report.Certification {
	if delta == 0 {
		delta = 0.05
	}
	out := &report.Certification{}
	ts, err := fl.TestSetCertificatesZeroOne(ds.Existing, ds.New, accExisting, accNew, delta)
	if err != nil {
		out.TestSetUnavailable = err.Error()
	}
	out.TestSet = ts
	return out
}

// accuracies are a group's per-client accuracies, NaN for each of its n
// clients when it was not evaluated (g nil).
func accuracies(g *fl.ClassGroupMetrics, n int) []float64 {
	if g != nil {
		return g.Accuracy
	}
	acc := make([]float64, n)
	for i := range acc {
		acc[i] = math.NaN()
	}
	return acc
}

// CertifyMaxRows is the most training rows per client the certificates
// take on: they evaluate exact GP posteriors (a dense Cholesky per client,
// prior draw and temperature, some thousands of times).
const CertifyMaxRows = 1000

// stopOn makes cfg's round hook end training with ctx's error once ctx is
// done, after the hook's own work.
func stopOn(ctx context.Context, cfg *fl.Config) {
	after := cfg.AfterRound
	cfg.AfterRound = func(s *fl.Server, round int) error {
		if after != nil {
			if err := after(s, round); err != nil {
				return err
			}
		}
		return ctx.Err()
	}
}

// Report is the outcome's text report and its JSON report (a report.Train
// for GP clients, a report.BNNTrain for BNN clients); totalSeconds is the
// time of the whole command.
func (o *Outcome) Report(totalSeconds float64) (*report.TrainText, any) {
	switch j := o.job; {
	case j.GP != nil:
		return j.GP.report(o.Result, o.Certification, totalSeconds)
	case j.BNN != nil:
		return j.BNN.report(o.Result, o.Certification, totalSeconds)
	default:
		info := j.CSV.Info
		info.TotalSeconds = totalSeconds
		return o.CSV.Report(info)
	}
}

// report is the reports of a GP run on generated data.
func (j *GPJob) report(res *fl.MethodResult, cert *report.Certification,
	totalSeconds float64) (*report.TrainText, any) {
	ds, o, in := j.Data, j.Options, j.Info
	name := in.Description
	if name == "" {
		name = "Polynomial"
	}
	text := &report.TrainText{
		Setting: fmt.Sprintf("PAC-PFL, GP clients on %s: %d existing clients (m_i=%d), %d new; "+
			"k=%d particles, T=%d rounds, seed %d", name, len(ds.Existing), ds.MinM(), len(ds.New), o.Server.K,
			o.Server.Rounds, in.Seed),
		Certification: cert,
		Header: fmt.Sprintf("PAC-PFL on %s: n=%d existing (m_i=%d), %d new clients; "+
			"k=%d, T=%d, c=%d, τ=%.4g, σ_P=%g, β=%s, seed %d; GP inference %s",
			name, len(ds.Existing), ds.MinM(), len(ds.New), o.Server.K, o.Server.Rounds, o.Server.ClientsPerRound,
			o.Server.Tau, o.SigmaP, o.Beta, in.Seed, j.Inference),
		LML: "mean client LML", Train: res.Train, NoRounds: o.Server.Rounds == 0, Private: o.Server.DP != nil,
		Existing: report.RegressionLine(len(ds.Existing), res.Existing.MeanRSMSE, res.Existing.MeanCE),
		New:      report.RegressionLine(len(ds.New), res.New.MeanRSMSE, res.New.MeanCE),
		Bounds:   res,
	}
	rep := report.NewTrain(res, o.Server.DP != nil)
	rep.Dataset, rep.Seed, rep.TotalSeconds, rep.Certification = in.Dataset, in.Seed, totalSeconds, cert
	rep.Config = map[string]any{
		"k": o.Server.K, "rounds": o.Server.Rounds, "clients_per_round": o.Server.ClientsPerRound,
		"batch": o.Server.Batch, "lr": o.Server.LR, "optimizer": o.Server.Optimizer, "aggregate": in.Aggregate,
		"sigma_p": o.SigmaP, "tau": o.Server.Tau, "dp_epsilon": in.DPEpsilon, "dp_clip": in.DPClip,
		"dp_mechanism": in.DPMechanism, "beta": o.Beta.String(),
		"clients": len(ds.Existing), "new_clients": len(ds.New), "extra": in.Extra,
		"gp_inference": j.Inference.Mode, "inducing": j.Inference.Inducing,
	}
	return text, rep
}

// report is the reports of a BNN run on generated data.
func (j *BNNJob) report(res *fl.MethodResult, cert *report.Certification,
	totalSeconds float64) (*report.TrainText, any) {
	ds, o, model, in := j.Data, j.Options, j.Model, j.Info
	text := &report.TrainText{
		Header: fmt.Sprintf("PAC-PFL with BNN clients (%s) on %s: n=%d existing (m_i=%d), %d new clients; "+
			"k=%d, T=%d, c=%d, b=%d, L=%d, τ=%.4g, σ_μ=%g, σ_ω=%g; posterior: M=%d, %d SVGD steps; seed %d",
			model.Model, in.Description, len(ds.Existing), ds.MinM(), len(ds.New), o.Server.K, o.Server.Rounds,
			o.Server.ClientsPerRound, o.Server.Batch, model.Samples, o.Server.Tau, o.SigmaMu, o.SigmaOmega,
			model.Posterior.Particles, model.Posterior.Steps, in.Seed),
		LML: "mean client LML estimate (38)", Train: res.Train, NoRounds: o.Server.Rounds == 0,
		Private: o.Server.DP != nil, BNNBounds: res.Bounds, Certification: cert,
	}
	ex, nw := report.NewClassMetrics(res.ExistingClass), report.NewClassMetrics(res.NewClass)
	text.Existing = report.ClassLine(len(ds.Existing), float64(ex.Accuracy), float64(ex.CE))
	text.New = report.ClassLine(len(ds.New), float64(nw.Accuracy), float64(nw.CE))
	rep := report.NewBNNTrain(res, o.Server.DP != nil)
	rep.Dataset, rep.Partition, rep.Seed, rep.Notes = in.Dataset, in.Partition, in.Seed, ds.Notes
	rep.TotalSeconds, rep.Certification = totalSeconds, cert
	rep.Config = map[string]any{
		"arch": model.Model.Arch, "hidden": model.Model.Hidden, "classes": model.Model.Classes,
		"k": o.Server.K, "rounds": o.Server.Rounds, "clients_per_round": o.Server.ClientsPerRound,
		"batch": o.Server.Batch, "samples": model.Samples, "lr": o.Server.LR, "optimizer": o.Server.Optimizer,
		"aggregate": in.Aggregate, "tau": o.Server.Tau, "sigma_mu": o.SigmaMu, "sigma_omega": o.SigmaOmega,
		"posterior_particles": model.Posterior.Particles, "posterior_steps": model.Posterior.Steps,
		"posterior_lr": model.Posterior.LR, "alpha_samples": model.Posterior.AlphaSamples,
		"dp_epsilon": in.DPEpsilon, "dp_clip": in.DPClip, "dp_mechanism": in.DPMechanism,
		"clients": len(ds.Existing), "new_clients": len(ds.New),
	}
	if in.Split != "" {
		rep.Split = in.Split
	} else {
		rep.Config["alpha"] = in.Alpha
	}
	return text, rep
}

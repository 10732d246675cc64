// Package train trains PAC-PFL on a user's own federated data (a CSV file
// read and split by package data) and returns what a user keeps: the model
// file's content, ready to save (package modelfile) and to predict with
// (package predict), every client's predictions on its test rows through
// that same model, and the PAC-Bayesian bounds the configuration asks for.
//
// Regression clients are GPs (GPOptions), classification clients BNNs
// (BNNOptions): exactly one of the two is set. The clients train in this
// process, or elsewhere when Options.Clients supplies them (pacpfl server
// passes proxies of remote clients). Training stops between two rounds
// when the context is done. The same options and seed give the same bits,
// whatever GOMAXPROCS.
package train

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/lml"
	"github.com/pacpfl/pacpfl/modelfile"
	"github.com/pacpfl/pacpfl/predict"
	"github.com/pacpfl/pacpfl/report"
	"github.com/pacpfl/pacpfl/svgd"
)

// Options configure a training run on federated user data.
type Options struct {
	// Source names the data in the model file (its "data" entry) and
	// ClientColumn the column that names the clients.
	Source, ClientColumn string
	// Seed is the run's seed: it is recorded in the model file, which
	// predicts with its streams. The server's and the bounds' seeds are
	// the options' own.
	Seed uint64
	// SaveClients stores the existing clients' (standardised) training
	// rows in the model, so that predict can personalise them without
	// their data.
	SaveClients bool
	GP          *GPOptions
	BNN         *BNNOptions
	// Clients, if set, adjusts the server configuration and returns the
	// clients to train with in place of the local ones (proxies of
	// remote clients).
	Clients func(cfg *fl.Config, local []fl.Client) ([]fl.Client, error)
}

// GPOptions are the settings of GP (regression) clients: PAC-PFL's and
// the clients' inference (exact or sparse).
type GPOptions struct {
	Options   fl.PACPFLOptions
	Inference fl.GPInference
	// Certify, if set, adds the certificates of docs/math.md §2.18
	// (GPJob.Certify); its Seed is the run's.
	Certify *fl.GPCertifyOptions
}

// BNNOptions are the settings of BNN (classification) clients: PAC-PFL's
// and the client model, whose network becomes an MLP over the data's
// features with Hidden units and the data's classes.
type BNNOptions struct {
	Options fl.BNNOptions
	Model   *fl.BNNModel
	Hidden  int
}

// Result is a finished run.
type Result struct {
	Model *modelfile.Model
	Train *fl.Result
	// Existing and New are every client's predictions on its test rows,
	// through Model's predictor.
	Existing, New []predict.Output
	// Bounds holds the bounds computed (Bounds, Learned) and why those
	// missing are (BoundsUnavailable, LearnedUnavailable).
	Bounds *fl.MethodResult
	// Data is the federated data the run trained on and evaluated.
	Data *data.Federated
	// Certification holds the test-set certificates of every run and,
	// for GP clients, fl.CertifyGP's when GPOptions.Certify asks for them.
	Certification *report.Certification
}

// Run trains on fed and evaluates every client through the trained model.
func Run(ctx context.Context, fed *data.Federated, o Options) (*Result, error) {
	if (o.GP == nil) == (o.BNN == nil) {
		return nil, errors.New("train: set exactly one of GP (regression) and BNN (classification) options")
	}
	ds := fed.Dataset
	mf := &modelfile.Model{
		Features: fed.Features, Target: fed.Target, ClientColumn: o.ClientColumn, Classes: fed.ClassNames,
		XMean: fed.Scaling.XMean, XStd: fed.Scaling.XStd, YMean: fed.Scaling.YMean, YStd: fed.Scaling.YStd,
		Seed: o.Seed, Training: map[string]string{"data": o.Source, "seed": strconv.FormatUint(o.Seed, 10)},
	}
	if o.SaveClients {
		for i, id := range fed.ExistingIDs {
			mf.Clients = append(mf.Clients, modelfile.Client{ID: id, X: ds.Existing[i].X, Y: ds.Existing[i].Y})
		}
	}
	var (
		server  fl.Config
		clients []fl.Client
		prior   *svgd.Gaussian
		gp      *fl.GPModel
		bnn     *fl.BNNModel
		err     error
	)
	if o.GP != nil {
		mf.Task = modelfile.TaskRegression
		gp, prior, clients, err = gpClients(fed, o.GP, mf)
		server = o.GP.Options.Server
	} else {
		mf.Task = modelfile.TaskClassification
		bnn, prior, clients, err = bnnClients(fed, o.BNN, mf)
		server = o.BNN.Options.Server
	}
	if err != nil {
		return nil, err
	}
	for k, v := range map[string]string{"k": strconv.Itoa(server.K), "rounds": strconv.Itoa(server.Rounds),
		"tau": strconv.FormatFloat(server.Tau, 'g', -1, 64), "lr": strconv.FormatFloat(server.LR, 'g', -1, 64),
		"batch": strconv.Itoa(server.Batch), "clients_per_round": strconv.Itoa(server.ClientsPerRound)} {
		mf.Training[k] = v
	}
	if server.DP != nil {
		mf.Training["dp_epsilon"] = strconv.FormatFloat(server.DP.Epsilon, 'g', -1, 64)
	}
	after := server.AfterRound
	server.AfterRound = func(s *fl.Server, round int) error {
		if after != nil {
			if err := after(s, round); err != nil {
				return err
			}
		}
		return ctx.Err()
	}
	if o.Clients != nil {
		if clients, err = o.Clients(&server, clients); err != nil {
			return nil, err
		}
	}
	srv, err := fl.NewServer(server, prior, clients)
	if err != nil {
		return nil, &ConfigError{err}
	}
	res, err := srv.Run()
	if err != nil {
		return nil, err
	}
	mf.K, mf.Dim, mf.Particles = res.K, res.Dim, res.Particles
	out := &Result{Model: mf, Train: res, Bounds: &fl.MethodResult{}, Data: fed}
	if err := out.evaluate(fed); err != nil {
		return nil, err
	}
	if gp != nil {
		err = gpBounds(ds, gp, prior, o.GP.Options, res.Particles, out.Bounds)
		if err == nil {
			po := o.GP.Options
			stopOn(ctx, &po.Server)
			out.Certification, err = certify(ctx, ds, gp, po, res.Particles, o.GP.Certify, o.Seed)
		}
	} else {
		em, nm := out.Metrics()
		out.Certification = certifyZeroOne(ds, em.First, nm.First, o.BNN.Options.Bounds.Delta)
		if b := o.BNN.Options.Bounds; b.PriorSamples > 0 {
			var bs fl.Bounds
			tau := o.BNN.Options.BoundTau(len(ds.Existing))
			if bs, err = fl.ComputeBNNBounds(ds, bnn, prior, b, tau); err == nil {
				out.Bounds.Bounds = &bs
			} else {
				err = fmt.Errorf("bounds: %w", err)
			}
		}
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ConfigError is a configuration the server refused (the options, not the
// data or the run, are wrong).
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// gpClients builds the GP client model, the hyper-prior and the existing
// clients, and records the model in mf.
func gpClients(fed *data.Federated, o *GPOptions,
	mf *modelfile.Model) (*fl.GPModel, *svgd.Gaussian, []fl.Client, error) {
	ds := fed.Dataset
	gp := &fl.GPModel{Model: lml.DefaultModel(ds.D), Beta: o.Options.Beta, Inference: o.Inference}
	prior, err := svgd.Isotropic(gp.Model.HyperPriorMean(), o.Options.SigmaP)
	if err != nil {
		return nil, nil, nil, &ConfigError{err}
	}
	clients := make([]fl.Client, len(ds.Existing))
	for i := range ds.Existing {
		if clients[i], err = gp.NewClient(&ds.Existing[i]); err != nil {
			return nil, nil, nil, fmt.Errorf("client %q: %w", fed.ExistingIDs[i], err)
		}
	}
	// The new clients are only predicted for, after training: an M above
	// one's rows fails now rather than then.
	for i := range ds.New {
		if _, _, err := gp.Inference.Plan(len(ds.New[i].Y)); err != nil {
			return nil, nil, nil, fmt.Errorf("new client %q: %w", fed.NewIDs[i], err)
		}
	}
	m := gp.Model
	mf.Kind = modelfile.KindGP
	mf.GP = &modelfile.GPConfig{D: m.D, DF: m.DF, MeanHidden: m.MeanHidden, KernelHidden: m.KernelHidden,
		Beta:      o.Options.Beta.String(),
		Inference: RecordInference(gp.Inference)}
	mf.Training["sigma_p"] = strconv.FormatFloat(o.Options.SigmaP, 'g', -1, 64)
	return gp, prior, clients, nil
}

// bnnClients builds the BNN client model (an MLP over the data's
// features), the hyper-prior and the existing clients, and records the
// model in mf.
func bnnClients(fed *data.Federated, o *BNNOptions,
	mf *modelfile.Model) (*fl.BNNModel, *svgd.Gaussian, []fl.Client, error) {
	ds := fed.Dataset
	bnn := o.Model
	if bnn == nil {
		bnn = fl.NewBNNModel(lml.BNN{})
	}
	bnn.Model = lml.BNN{Arch: lml.ArchMLP, InC: ds.D, InH: 1, InW: 1, Hidden: o.Hidden,
		Classes: ds.Classes}.WithDefaults()
	if err := bnn.Model.Validate(); err != nil {
		return nil, nil, nil, &ConfigError{err}
	}
	prior, err := fl.BNNHyperPrior(bnn.Model, o.Options.SigmaMu, o.Options.SigmaOmega)
	if err != nil {
		return nil, nil, nil, &ConfigError{err}
	}
	clients := make([]fl.Client, len(ds.Existing))
	for i := range ds.Existing {
		if clients[i], err = bnn.NewClient(&ds.Existing[i]); err != nil {
			return nil, nil, nil, fmt.Errorf("client %q: %w", fed.ExistingIDs[i], err)
		}
	}
	m, po := bnn.Model, bnn.Posterior
	mf.Kind = modelfile.KindBNN
	mf.BNN = &modelfile.BNNConfig{Arch: m.Arch, InC: m.InC, InH: m.InH, InW: m.InW, Hidden: m.Hidden,
		Classes:   m.Classes,
		Particles: po.Particles, Steps: po.Steps, LR: po.LR, AlphaSamples: po.AlphaSamples}
	mf.Training["sigma_mu"] = strconv.FormatFloat(o.Options.SigmaMu, 'g', -1, 64)
	mf.Training["sigma_omega"] = strconv.FormatFloat(o.Options.SigmaOmega, 'g', -1, 64)
	return bnn, prior, clients, nil
}

// evaluate predicts every client's test rows through the trained model's
// predictor (the code predict runs on the saved file).
func (r *Result) evaluate(fed *data.Federated) error {
	pr, err := predict.New(r.Model)
	if err != nil {
		return err
	}
	group := func(ids []string, g []data.ClientData) ([]predict.Output, error) {
		clients := make([]predict.Client, len(g))
		for i := range g {
			clients[i] = predict.Client{ID: ids[i], X: g[i].X, Y: g[i].Y, XTest: g[i].XTest}
		}
		return pr.PredictClients(clients)
	}
	if r.Existing, err = group(fed.ExistingIDs, fed.Existing); err != nil {
		return fmt.Errorf("existing clients: %w", err)
	}
	if r.New, err = group(fed.NewIDs, fed.New); err != nil {
		return fmt.Errorf("new clients: %w", err)
	}
	return nil
}

// gpBounds computes the PAC-Bayes bounds of a GP run on the existing
// clients' training data, those that sparse clients allow.
func gpBounds(ds *data.Dataset, gp *fl.GPModel, prior *svgd.Gaussian, o fl.PACPFLOptions, particles []float64,
	out *fl.MethodResult) error {
	out.BoundsUnavailable, out.LearnedUnavailable = gp.DropUnavailableBounds(ds.Existing, &o.Bounds)
	if o.Bounds.PriorSamples > 0 {
		b, err := fl.ComputeBounds(ds, gp, prior, o.Bounds, fl.EffectiveTau(o.Server, len(ds.Existing)))
		if err != nil {
			return fmt.Errorf("bounds: %w", err)
		}
		out.Bounds = &b
	}
	if o.Bounds.Learned != nil {
		lb, why, err := fl.ComputeLearnedBound(ds, gp, prior, o, particles)
		if err != nil {
			return fmt.Errorf("bound for the trained hyper-posterior: %w", err)
		}
		out.Learned = lb
		if why != "" {
			out.LearnedUnavailable = why
		}
	}
	return nil
}

// RecordInference is gi as a model file records it (the mode spelled out,
// so that the file does not depend on fl's default).
func RecordInference(gi fl.GPInference) *modelfile.GPInference {
	mode := gi.Mode
	if mode == "" {
		mode = fl.InferenceAuto
	}
	return &modelfile.GPInference{Mode: mode, Inducing: gi.Inducing, Seed: gi.Seed}
}

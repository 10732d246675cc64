// Package fedtrain runs a train.Job with remote clients over package rpc:
// pacpfl server's run. The coordinator checks that every client process
// holds the job's data and model (their hashes, the model kind and size),
// and the job's training loop runs with proxies of the client processes in
// place of its own clients. The gRPC sessions run on goroutines of
// package rpc; this package starts none of its own.
package fedtrain

import (
	"context"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/rpc"
	"github.com/pacpfl/pacpfl/train"
)

// serverRun is the rpc.ServerRun of job: the clients' side of the
// coordinator (their data and model), the job's loop configuration and
// its run with the remote clients, whose outcome is stored in *out.
func serverRun(ctx context.Context, job *train.Job, out **train.Outcome) (rpc.ServerRun, error) {
	r := rpc.ServerRun{Train: job.Config()}
	switch {
	case job.GP != nil:
		r.Server = rpc.DatasetServer(job.GP.Data)
		setGP(&r.Server, job.GP.Data.D, job.GP.Inference, job.GP.Options.Beta)
	case job.BNN != nil:
		r.Server = rpc.DatasetServer(job.BNN.Data)
		r.Server.ModelKind, r.Server.Dim = rpc.BNNKind(job.BNN.Model), job.BNN.Model.Dim()
	case job.CSV != nil:
		c := job.CSV
		r.Server, r.IDs, r.Source = rpc.CSVServer(c.Records, c.Data), c.Data.ExistingIDs, c.Options.Source
		if b := c.Options.BNN; b != nil {
			m, err := rpc.CSVBNNModel(b.Model, c.Data.D, b.Hidden, c.Data.Classes)
			if err != nil {
				return r, err
			}
			r.Server.ModelKind, r.Server.Dim = rpc.CSVBNNKind(c.Data.D, b.Hidden, b.Model.Samples), m.Dim()
		} else if g := c.Options.GP; g != nil {
			setGP(&r.Server, c.Data.D, g.Inference, g.Options.Beta)
		}
	}
	r.Run = func(clients func() ([]fl.Client, error)) (*fl.MethodResult, error) {
		o, err := job.Run(ctx, clients)
		if err != nil {
			return nil, err
		}
		*out = o
		return o.Result, nil
	}
	return r, nil
}

// setGP sets the model of GP clients with d inputs on sc.
func setGP(sc *rpc.ServerConfig, d int, inf fl.GPInference, beta fl.Temperature) {
	sc.ModelKind, sc.Dim, sc.Beta = rpc.GPKind(inf), fl.NewGPModel(d).Dim(), beta.String()
}

// Serve runs job on setup's server with the remote clients until it ends,
// or ctx does (rpc.ServerSetup.Federate: an *rpc.Interrupted error, the
// checkpoint saved as the settings say); log, if set, gets the server's
// log lines.
func Serve(
	ctx context.Context,
	setup *rpc.ServerSetup,
	job *train.Job,
	log func(string, ...any),
) (*train.Outcome, error) {
	var out *train.Outcome
	r, err := serverRun(ctx, job, &out)
	if err != nil {
		return nil, err
	}
	r.Log = log
	if _, err := setup.Federate(ctx, r); err != nil {
		return nil, err
	}
	return out, nil
}

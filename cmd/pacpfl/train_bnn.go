package main

import (
	"fmt"
	"io"
	"time"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/report"
)

// runTrainBNN is pacpfl train --model bnn: PAC-PFL with BNN clients on a
// federated split of Fashion-MNIST.
func runTrainBNN(f *trainFlags, b *bnnFlags, quiet bool, jsonPath string, stdout, stderr io.Writer) int {
	b.bnnDefaults(f)
	if err := b.check(f); err != nil {
		return fail(stderr, "train", err)
	}
	stdout, jsonOut := reportStreams(jsonPath, stdout, stderr)
	start := time.Now()
	im, err := b.images()
	if err != nil {
		return fail(stderr, "train", err)
	}
	ds, err := b.dataset(im, f, f.seed)
	if err != nil {
		return fail(stderr, "train", err)
	}
	im = nil
	o, err := b.options(f, ds, f.seed)
	if err != nil {
		return fail(stderr, "train", err)
	}
	for _, n := range ds.Notes {
		fmt.Fprintf(stderr, "note: %s\n", n)
	}
	model := b.bnnModel()
	ctx, stop := signalContext()
	defer stop()
	prog := newProgress(stderr, "train", o.Server.Rounds, quiet)
	prog.hideLML = o.Server.DP != nil
	o.Server.Progress, o.Server.AfterRound = prog.round, stopOn(ctx)
	res, err := fl.RunPACPFLBNN(ds, model, o)
	prog.done()
	if err != nil {
		return fail(stderr, "train", err)
	}
	if err := writeBNNReport(stdout, jsonOut, f, b, model, ds, o, res, start, jsonPath); err != nil {
		return fail(stderr, "train", err)
	}
	return exitOK
}

// writeBNNReport prints the report of a PAC-PFL run with BNN clients and
// writes it as JSON to jsonPath (if set): pacpfl train and pacpfl server.
func writeBNNReport(stdout, jsonOut io.Writer, f *trainFlags, b *bnnFlags, model *fl.BNNModel, ds *data.Dataset, o fl.BNNOptions, res *fl.MethodResult, start time.Time, jsonPath string) error {
	text := report.TrainText{
		Header: fmt.Sprintf("PAC-PFL with BNN clients (%s) on %s: n=%d existing (m_i=%d), %d new clients; k=%d, T=%d, c=%d, b=%d, L=%d, τ=%.4g, σ_μ=%g, σ_ω=%g; posterior: M=%d, %d SVGD steps; seed %d",
			model.Model, b.describe(f), len(ds.Existing), ds.MinM(), len(ds.New), o.Server.K, o.Server.Rounds, o.Server.ClientsPerRound,
			o.Server.Batch, model.Samples, o.Server.Tau, o.SigmaMu, o.SigmaOmega, model.Posterior.Particles, model.Posterior.Steps, f.seed),
		LML: "mean client LML estimate (38)", Train: res.Train, NoRounds: o.Server.Rounds == 0, Private: o.Server.DP != nil,
		BNNBounds: res.Bounds,
	}
	ex, nw := report.NewClassMetrics(res.ExistingClass), report.NewClassMetrics(res.NewClass)
	text.Existing = report.ClassLine(len(ds.Existing), float64(ex.Accuracy), float64(ex.CE))
	text.New = report.ClassLine(len(ds.New), float64(nw.Accuracy), float64(nw.CE))
	if err := text.WriteText(stdout); err != nil {
		return err
	}
	if jsonPath == "" {
		return nil
	}
	rep := report.NewBNNTrain(res, o.Server.DP != nil)
	rep.Dataset, rep.Partition, rep.Seed, rep.Notes = dataFMNIST, b.partition, f.seed, ds.Notes
	rep.TotalSeconds = time.Since(start).Seconds()
	rep.Config = map[string]any{
		"arch": model.Model.Arch, "hidden": model.Model.Hidden, "classes": model.Model.Classes,
		"k": o.Server.K, "rounds": o.Server.Rounds, "clients_per_round": o.Server.ClientsPerRound,
		"batch": o.Server.Batch, "samples": model.Samples, "lr": o.Server.LR, "optimizer": o.Server.Optimizer,
		"aggregate": f.aggregate, "tau": o.Server.Tau, "sigma_mu": o.SigmaMu, "sigma_omega": o.SigmaOmega,
		"posterior_particles": model.Posterior.Particles, "posterior_steps": model.Posterior.Steps,
		"posterior_lr": model.Posterior.LR, "alpha_samples": model.Posterior.AlphaSamples,
		"dp_epsilon": f.dp.Epsilon, "dp_clip": f.dp.Clip, "dp_mechanism": f.dp.Mechanism,
		"clients": len(ds.Existing), "new_clients": len(ds.New),
	}
	if b.partition == partLabels5 {
		rep.Split = b.split
	} else {
		rep.Config["alpha"] = b.dir.Alpha
	}
	return writeJSON(jsonOut, jsonPath, rep)
}

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
	o.Server.Progress, o.Server.AfterRound = prog.update, stopOn(ctx)
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
	tr := res.Train
	final := report.FinalLML(tr.MeanLML)
	fmt.Fprintf(stdout, "PAC-PFL with BNN clients (%s) on %s: n=%d existing (m_i=%d), %d new clients; k=%d, T=%d, c=%d, b=%d, L=%d, τ=%.4g, σ_μ=%g, σ_ω=%g; posterior: M=%d, %d SVGD steps; seed %d\n",
		model.Model, b.describe(f), len(ds.Existing), ds.MinM(), len(ds.New), o.Server.K, o.Server.Rounds, o.Server.ClientsPerRound,
		o.Server.Batch, model.Samples, o.Server.Tau, o.SigmaMu, o.SigmaOmega, model.Posterior.Particles, model.Posterior.Steps, f.seed)
	switch {
	case o.Server.Rounds == 0:
		fmt.Fprintln(stdout, noRounds)
	case o.Server.DP == nil:
		fmt.Fprintf(stdout, "training: %.1fs, mean client LML estimate (38) of the last rounds %s\n", tr.Elapsed.Seconds(), fmtMetric("%.3f", final))
	default:
		fmt.Fprintf(stdout, "training: %.1fs (client LMLs not shown: they are not covered by the DP guarantee)\n", tr.Elapsed.Seconds())
	}
	ex, nw := report.NewClassMetrics(res.ExistingClass), report.NewClassMetrics(res.NewClass)
	fmt.Fprintf(stdout, "existing clients: %s\n", groupText(len(ds.Existing), "accuracy "+fmtMetric("%.2f%%", float64(ex.Accuracy))+"  CE "+fmtMetric("%.4f", float64(ex.CE))))
	fmt.Fprintf(stdout, "new clients:      %s\n", groupText(len(ds.New), "accuracy "+fmtMetric("%.2f%%", float64(nw.Accuracy))+"  CE "+fmtMetric("%.4f", float64(nw.CE))))
	printPrivacy(stdout, tr.Privacy)
	if bd := res.Bounds; bd != nil {
		fmt.Fprintf(stdout, "bounds (δ=%g, %s):\n", bd.Delta, bd.Description)
		fmt.Fprintf(stdout, "  ln Z^S ≈ %.4g, λ = %.4g, ε_i of the exact Gibbs hyper-posterior ≤ %.4g\n", bd.LogZS, bd.Lambda, bd.EpsilonMax)
		fmt.Fprintf(stdout, "  server-level (Thm 4.2):  %.4g   (loss range [%g, %.3g])\n  new-client (Lemma 4.6):  %.4g\n", bd.Server, bd.A, bd.B, bd.NewClient)
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
		"dp_epsilon": f.dpEpsilon, "dp_clip": f.dpClip, "dp_mechanism": f.dpMechanism,
		"clients": len(ds.Existing), "new_clients": len(ds.New),
	}
	if b.partition == partLabels5 {
		rep.Split = b.split
	} else {
		rep.Config["alpha"] = b.alpha
	}
	return writeJSON(jsonOut, jsonPath, rep)
}

package main

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/report"
)

// classMetrics is one group's classification metrics in the reports.
type classMetrics struct {
	Accuracy report.Float `json:"accuracy"` // percent
	CE       report.Float `json:"ce"`
}

func newClassMetrics(g *fl.ClassGroupMetrics) classMetrics {
	if g == nil {
		return classMetrics{report.Float(math.NaN()), report.Float(math.NaN())}
	}
	return classMetrics{report.Float(g.MeanAccuracy), report.Float(g.MeanCE)}
}

// bnnTrainReport is the --json output of pacpfl train --model bnn.
type bnnTrainReport struct {
	Dataset      string         `json:"dataset"`
	Partition    string         `json:"partition"`
	Split        string         `json:"split,omitempty"`
	Seed         uint64         `json:"seed"`
	Config       map[string]any `json:"config"`
	Notes        []string       `json:"notes,omitempty"`
	TrainSeconds float64        `json:"train_seconds"`
	TotalSeconds float64        `json:"total_seconds"`
	FinalLML     report.Float   `json:"final_mean_lml"`
	Epsilon      *float64       `json:"epsilon"` // the guaranteed ε; null: no DP guarantee
	Privacy      privacyReport  `json:"privacy"`
	Existing     classMetrics   `json:"existing"`
	New          classMetrics   `json:"new"`
	Bounds       *fl.Bounds     `json:"bounds,omitempty"`
	LMLHistory   []report.Float `json:"lml_history"`
	PerClient    map[string]any `json:"per_client"`
}

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
	final := math.NaN()
	if len(tr.MeanLML) > 0 {
		final = fl.Mean(tr.MeanLML[max(0, len(tr.MeanLML)-50):])
	}
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
	ex, nw := newClassMetrics(res.ExistingClass), newClassMetrics(res.NewClass)
	fmt.Fprintf(stdout, "existing clients: %s\n", groupText(len(ds.Existing), "accuracy "+fmtMetric("%.2f%%", float64(ex.Accuracy))+"  CE "+fmtMetric("%.4f", float64(ex.CE))))
	fmt.Fprintf(stdout, "new clients:      %s\n", groupText(len(ds.New), "accuracy "+fmtMetric("%.2f%%", float64(nw.Accuracy))+"  CE "+fmtMetric("%.4f", float64(nw.CE))))
	var eps *float64
	if pr := tr.Privacy; !math.IsInf(pr.Epsilon, 1) {
		eps = &pr.Epsilon
		fmt.Fprintf(stdout, "differential privacy: %s\n", pr.Statement)
	} else {
		fmt.Fprintln(stdout, "differential privacy: none (deterministic SVGD; use --dp-epsilon)")
	}
	if bd := res.Bounds; bd != nil {
		fmt.Fprintf(stdout, "bounds (δ=%g, %s):\n", bd.Delta, bd.Description)
		fmt.Fprintf(stdout, "  ln Z^S ≈ %.4g, λ = %.4g, ε_i of the exact Gibbs hyper-posterior ≤ %.4g\n", bd.LogZS, bd.Lambda, bd.EpsilonMax)
		fmt.Fprintf(stdout, "  server-level (Thm 4.2):  %.4g   (loss range [%g, %.3g])\n  new-client (Lemma 4.6):  %.4g\n", bd.Server, bd.A, bd.B, bd.NewClient)
	}
	if jsonPath == "" {
		return nil
	}
	history := report.Floats(tr.MeanLML)
	if o.Server.DP != nil {
		// Not covered by the DP guarantee: not released.
		final, history = math.NaN(), nil
	}
	rep := bnnTrainReport{
		Dataset: dataFMNIST, Partition: b.partition, Seed: f.seed, Notes: ds.Notes,
		Config: map[string]any{
			"arch": model.Model.Arch, "hidden": model.Model.Hidden, "classes": model.Model.Classes,
			"k": o.Server.K, "rounds": o.Server.Rounds, "clients_per_round": o.Server.ClientsPerRound,
			"batch": o.Server.Batch, "samples": model.Samples, "lr": o.Server.LR, "optimizer": o.Server.Optimizer,
			"aggregate": f.aggregate, "tau": o.Server.Tau, "sigma_mu": o.SigmaMu, "sigma_omega": o.SigmaOmega,
			"posterior_particles": model.Posterior.Particles, "posterior_steps": model.Posterior.Steps,
			"posterior_lr": model.Posterior.LR, "alpha_samples": model.Posterior.AlphaSamples,
			"dp_epsilon": f.dpEpsilon, "dp_clip": f.dpClip, "dp_mechanism": f.dpMechanism,
			"clients": len(ds.Existing), "new_clients": len(ds.New),
		},
		TrainSeconds: tr.Elapsed.Seconds(), TotalSeconds: time.Since(start).Seconds(),
		FinalLML: report.Float(final), Epsilon: eps, Privacy: newPrivacyReport(tr.Privacy),
		Existing: ex, New: nw, Bounds: res.Bounds, LMLHistory: history,
		PerClient: map[string]any{},
	}
	if b.partition == partLabels5 {
		rep.Split = b.split
	} else {
		rep.Config["alpha"] = b.alpha
	}
	if g := res.ExistingClass; g != nil {
		rep.PerClient["existing_accuracy"], rep.PerClient["existing_ce"] = report.Floats(g.Accuracy), report.Floats(g.CE)
	}
	if g := res.NewClass; g != nil {
		rep.PerClient["new_accuracy"], rep.PerClient["new_ce"] = report.Floats(g.Accuracy), report.Floats(g.CE)
	}
	return writeJSON(jsonOut, jsonPath, rep)
}

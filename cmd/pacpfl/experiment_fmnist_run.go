package main

import (
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/fedavg"
	"github.com/pacpfl/pacpfl/fl/fedvi"
	"github.com/pacpfl/pacpfl/fl/genfl"
	"github.com/pacpfl/pacpfl/fl/pfedbayes"
	"github.com/pacpfl/pacpfl/harness"
	"github.com/pacpfl/pacpfl/lml"
	"github.com/pacpfl/pacpfl/methods"
	"github.com/pacpfl/pacpfl/report"
	"github.com/pacpfl/pacpfl/runlog"
)

// fmnistMethods are the methods of experiment fmnist with the flags'
// settings, checked on ds0 (the first seed's data).
func fmnistMethods(names []string, f *trainFlags, bf *bnnFlags, ff *fedFlags, vf *fedviFlags, arch lml.BNN, ds0 *data.Dataset, seed0 uint64) ([]harness.Method, error) {
	has := func(ms ...string) bool {
		return slices.ContainsFunc(ms, func(m string) bool { return slices.Contains(names, m) })
	}
	vo := vf.options()
	ao := vo
	ao.Arch.EmbedReLU = vf.fedavgReLU
	ft := fedvi.DefaultFineTune()
	ft.Epochs = vf.ftEpochs
	if !vf.withFT {
		ft.Epochs = 0
	}
	g := genfl.DefaultOptions(genfl.LearntPriorKind, genfl.Pairs, seed0)
	s := methods.Settings{Task: methods.Classification, BNNModel: bf.bnnModel, FedVI: &vo, FedVIFedAvg: &ao, FedVIFineTune: &ft, GenFL: &g}
	var err error
	if has(fl.MethodPACPFL) {
		o, err := bf.options(f, ds0, seed0)
		if err != nil {
			return nil, err
		}
		// Per data set: c's default, τ from --lambda, the DP noise.
		o.Server.ClientsPerRound = f.clientsPerRound
		if o.Server.DP != nil {
			o.Server.DP.Noise = nil
		}
		s.PACPFLBNN = &methods.PACPFLBNN{Options: o, Lambda: f.lambda, DPNoiseSeed: f.dpNoiseSeed}
	}
	opt := func(ok bool, get func() error) {
		if ok && err == nil {
			err = get()
		}
	}
	opt(has(pfedbayes.MethodPFedBayes), func() error { o, err := ff.pfedbayes(arch, seed0); s.PFedBayes = &o; return err })
	opt(has(fedavg.MethodFedAvg, fedavg.MethodFedAvgFT), func() error { o, err := ff.fedavg(arch, seed0, false); s.FedAvg = &o; return err })
	opt(has(fedavg.MethodFedProx), func() error { o, err := ff.fedavg(arch, seed0, true); s.FedProx = &o; return err })
	if err != nil {
		return nil, err
	}
	ms, err := methods.New(names, s)
	if err != nil {
		return nil, usageError{err}
	}
	return ms, nil
}

// globalText is the global model's accuracy for a progress line.
func globalText(r *fl.MethodResult) string {
	if r.GlobalClass == nil {
		return ""
	}
	return fmt.Sprintf(" | global model accuracy %.2f%%", r.GlobalClass.MeanAccuracy)
}

// fmnistObserver prints experiment fmnist's progress: a progress line per
// method and seed (PAC-PFL's personalisation after its rounds on a line
// of its own, GenFL's phases as they start), then the seed's figures.
type fmnistObserver struct {
	w      io.Writer
	quiet  bool
	label  func(method string) string
	onDone func(harness.Event)
	prog   *progress
	phase  string
	gp     *runlog.Phases
}

// Observe implements harness.Observer.
func (o *fmnistObserver) Observe(ev harness.Event) {
	switch ev.Kind {
	case harness.Phase:
		o.genfl(ev).Phase(ev.Phase)
	case harness.Round:
		if ev.Phase == methods.PhasePriorERM {
			o.genfl(ev).Round("prior ERM", "loss", ev.Round, ev.Rounds, ev.Value)
			return
		}
		if o.prog == nil || ev.Phase != o.phase {
			o.start(ev)
		}
		o.prog.update(ev.Round, ev.Value)
	case harness.Done:
		if o.prog != nil {
			o.prog.done()
		}
		o.prog, o.gp, o.phase = nil, nil, ""
		if o.onDone != nil {
			o.onDone(ev)
		}
		if !o.quiet {
			res := ev.Result
			ex, nw := report.NewClassMetrics(res.ExistingClass), report.NewClassMetrics(res.NewClass)
			fmt.Fprintf(o.w, "experiment: seed %d %-8s existing accuracy %.2f%% CE %.4f | new accuracy %.2f%% CE %.4f%s (%.0fs)\n",
				ev.Seed, ev.Method, ex.Accuracy, ex.CE, nw.Accuracy, nw.CE, globalText(res), res.Seconds)
		}
	}
}

// start begins the progress of ev's method (or phase) on its seed.
func (o *fmnistObserver) start(ev harness.Event) {
	if o.prog != nil {
		o.prog.done()
	}
	name := ev.Method
	if ev.Method == methodFedVIFedAvg || ev.Method == methodFedVIFedAvgFT {
		name = "fedavg (FedVI's CNN)"
	}
	label := fmt.Sprintf("%s seed %d/%d", name, ev.SeedIndex+1, ev.Seeds)
	if ev.Phase != "" {
		label += " " + ev.Phase
	}
	o.prog, o.phase = newProgress(o.w, label, ev.Rounds, o.quiet), ev.Phase
	o.prog.hideLML = math.IsNaN(ev.Value)
	if ev.Phase == methods.PhasePersonalisation {
		o.prog.unit = "client"
	}
}

func (o *fmnistObserver) genfl(ev harness.Event) *runlog.Phases {
	if o.gp == nil {
		o.gp = runlog.NewPhases(o.w, fmt.Sprintf("genfl seed %d", ev.Seed), o.quiet)
	}
	return o.gp
}

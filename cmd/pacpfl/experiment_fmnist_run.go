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
)

// fmnistMethods are the methods of experiment fmnist with the flags'
// settings, checked on ds0 (the first seed's data). FedAvg and FedAvg+FT
// (on either network) share one training per seed when both run.
func fmnistMethods(names []string, f *trainFlags, bf *bnnFlags, ff *fedFlags, vf *fedviFlags, arch lml.BNN, ds0 *data.Dataset, seed0 uint64) ([]harness.Method, error) {
	var avg, avgFT methods.FedAvg
	if slices.Contains(names, fedavg.MethodFedAvg) || slices.Contains(names, fedavg.MethodFedAvgFT) {
		o, err := ff.fedavg(arch, seed0, false)
		if err != nil {
			return nil, err
		}
		avg, avgFT = methods.FedAvgPair(o)
	}
	vo := vf.options()
	ao := vo
	ao.Arch.EmbedReLU = vf.fedavgReLU
	ft := fedvi.DefaultFineTune()
	ft.Epochs = vf.ftEpochs
	if !vf.withFT {
		ft.Epochs = 0
	}
	vAvg, vAvgFT := methods.FedVIFedAvgPair(ao, ft)
	model := methods.BNNModel(bf.bnnModel)
	var out []harness.Method
	for _, m := range names {
		var hm interface {
			harness.Method
			Validate() error
		}
		switch m {
		case fl.MethodPACPFL:
			o, err := bf.options(f, ds0, seed0)
			if err != nil {
				return nil, err
			}
			// Per data set: c's default, τ from --lambda, the DP noise.
			o.Server.ClientsPerRound = f.clientsPerRound
			if o.Server.DP != nil {
				o.Server.DP.Noise = nil
			}
			hm = methods.PACPFLBNN{Options: o, Model: model, Lambda: f.lambda, DPNoiseSeed: f.dpNoiseSeed}
		case fl.MethodVanilla:
			hm = methods.VanillaBNN{Model: model}
		case fl.MethodPooled:
			hm = methods.PooledBNN{Model: model}
		case pfedbayes.MethodPFedBayes:
			o, err := ff.pfedbayes(arch, seed0)
			if err != nil {
				return nil, err
			}
			hm = methods.PFedBayes{Options: o}
		case fedavg.MethodFedAvg:
			hm = avg
		case fedavg.MethodFedAvgFT:
			hm = avgFT
		case fedavg.MethodFedProx:
			o, err := ff.fedavg(arch, seed0, true)
			if err != nil {
				return nil, err
			}
			hm = methods.FedAvg{Options: o}
		case fedvi.MethodFedVI:
			hm = methods.FedVI{Options: vo}
		case methodFedVIFedAvg:
			hm = vAvg
		case methodFedVIFedAvgFT:
			hm = vAvgFT
		case genfl.MethodGenFL:
			hm = methods.GenFL{Options: genfl.DefaultOptions(genfl.LearntPriorKind, genfl.Pairs, seed0)}
		default:
			return nil, usagef("unknown method %q", m)
		}
		if err := hm.Validate(); err != nil {
			return nil, usageError{fmt.Errorf("%s: %w", m, err)}
		}
		out = append(out, hm)
	}
	return out, nil
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
	gp     *genflProgress
}

// Observe implements harness.Observer.
func (o *fmnistObserver) Observe(ev harness.Event) {
	switch ev.Kind {
	case harness.Phase:
		o.genfl(ev).phase(ev.Phase)
	case harness.Round:
		if ev.Phase == methods.PhasePriorERM {
			o.genfl(ev).rounds("prior ERM", "loss")(ev.Round, ev.Rounds, ev.Value)
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

func (o *fmnistObserver) genfl(ev harness.Event) *genflProgress {
	if o.gp == nil {
		o.gp = newGenFLProgress(o.w, fmt.Sprintf("genfl seed %d", ev.Seed), o.quiet)
	}
	return o.gp
}

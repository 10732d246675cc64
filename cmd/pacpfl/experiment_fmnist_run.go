package main

import (
	"io"
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
		o.Server.ClientsPerRound = f.o.Server.ClientsPerRound
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

// progressBar is a progress as a runlog.Bar.
type progressBar struct{ *progress }

func (b progressBar) Update(step int, v float64) { b.update(step, v) }
func (b progressBar) Done()                      { b.done() }

// newBar makes progress bars on w.
func newBar(w io.Writer, quiet bool) runlog.BarMaker {
	return func(label string, total int, unit string, hide bool) runlog.Bar {
		p := newProgress(w, label, total, quiet)
		p.hideLML = hide
		if unit != "" {
			p.unit = unit
		}
		return progressBar{p}
	}
}

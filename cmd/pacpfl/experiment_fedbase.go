package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/pacpfl/pacpfl/fl/fedavg"
	"github.com/pacpfl/pacpfl/fl/pfedbayes"
	"github.com/pacpfl/pacpfl/lml"
	"github.com/pacpfl/pacpfl/methods"
)

// The peer methods of experiment fmnist from the pFedBayes paper's Table 1
// (docs/math.md, "pFedBayes, FedAvg and FedProx"): pFedBayes and its frequentist baselines.
var fedBaselines = []string{pfedbayes.MethodPFedBayes, fedavg.MethodFedAvg, fedavg.MethodFedProx, fedavg.MethodFedAvgFT}

// fedFlags are the settings of pFedBayes, FedAvg and FedProx in experiment
// fmnist (their network is --arch/--hidden). The --fed-* flags are bound to
// p's fields and apply to FedAvg and FedProx too.
type fedFlags struct {
	p                  pfedbayes.Options
	avg, prox          fedavg.Options // FedAvg's (with FedAvg+FT's steps) and FedProx's
	optimizer, variant string
	fs                 *flag.FlagSet // to tell the flags given from the defaults
	on                 bool          // a method of fedBaselines runs
}

// pfedbayesFlagOf names the flag of the pFedBayes settings a variant may
// take over (pfedbayes.Options.WithVariantDefaults).
var pfedbayesFlagOf = map[string]string{"Rho0": "pfedbayes-rho0", "Optimizer": "pfedbayes-optimizer",
	"EvalDraws": "pfedbayes-eval-draws"}

func init() { fmnistMethodFlags = append(fmnistMethodFlags, func() methodFlags { return &fedFlags{} }) }

func (f *fedFlags) add(fs *flag.FlagSet) { addFedFlags(fs, f) }

// check validates the flags when one of their methods runs.
func (f *fedFlags) check(x *fmnistExperiment) error {
	if f.on = x.has(fedBaselines...); f.on {
		return f.checkArch(x.arch)
	}
	return nil
}

func (f *fedFlags) settings(s *methods.Settings, x *fmnistExperiment, seed uint64) error {
	var err error
	opt := func(ok bool, get func() error) {
		if ok && err == nil {
			err = get()
		}
	}
	opt(x.has(pfedbayes.MethodPFedBayes),
		func() error { o, err := f.pfedbayes(x.arch, seed); s.PFedBayes = &o; return err })
	opt(x.has(fedavg.MethodFedAvg, fedavg.MethodFedAvgFT),
		func() error { o, err := f.fedavg(x.arch, seed, false); s.FedAvg = &o; return err })
	opt(x.has(fedavg.MethodFedProx),
		func() error { o, err := f.fedavg(x.arch, seed, true); s.FedProx = &o; return err })
	return err
}

// note names the network and the rounds of the methods that ran.
func (f *fedFlags) note(w io.Writer, x *fmnistExperiment) {
	if f.on {
		a := x.arch.WithDefaults()
		fmt.Fprintf(w, "\npFedBayes, FedAvg, FedProx: network %s (%d weights), %d rounds, R = %d local steps of b = "+
			"%d\n", a, a.NumWeights(), f.p.Rounds, f.p.LocalSteps, f.p.Batch)
	}
}

func addFedFlags(fs *flag.FlagSet, f *fedFlags) {
	f.p, f.avg, f.prox, f.fs = pfedbayes.DefaultOptions(), fedavg.DefaultOptions(), fedavg.FedProxOptions(), fs
	p := &f.p
	fs.IntVar(&p.Rounds, "fed-rounds", p.Rounds, "pfedbayes, fedavg, fedprox: communication rounds T")
	fs.IntVar(&p.EvalLast, "fed-eval-last", p.EvalLast, "pfedbayes, fedavg, fedprox: score after each of the last N "+
		"rounds and report the best (the pFedBayes paper: rounds 700–800)")
	fs.IntVar(&p.LocalSteps, "fed-local-steps", p.LocalSteps, "pfedbayes, fedavg, fedprox: local steps R per round")
	fs.IntVar(&p.Batch, "fed-batch", p.Batch, "pfedbayes, fedavg, fedprox: minibatch b")
	fs.IntVar(&p.ClientsPerRound, "fed-clients-per-round", p.ClientsPerRound,
		"pfedbayes, fedavg, fedprox: clients S the server averages per round")
	fs.Float64Var(&p.Zeta, "pfedbayes-zeta", p.Zeta, "pfedbayes: ζ, the weight of KL(q_i‖w)")
	fs.Float64Var(&p.Rho0, "pfedbayes-rho0", p.Rho0, "pfedbayes: initial ρ of every weight (σ = softplus(ρ))")
	fs.Float64Var(&p.MuInit, "pfedbayes-mu-init", p.MuInit, "pfedbayes: std of the initial means")
	fs.Float64Var(&p.LR1, "pfedbayes-lr1", p.LR1, "pfedbayes: η₁, step of the personalised models")
	fs.Float64Var(&p.LR2, "pfedbayes-lr2", p.LR2, "pfedbayes: η₂, step of the localised global model")
	fs.Float64Var(&p.Beta, "pfedbayes-beta", p.Beta, "pfedbayes: β of the server step")
	fs.IntVar(&p.MC, "pfedbayes-mc", p.MC, "pfedbayes: K weight draws per step")
	fs.IntVar(&p.EvalDraws, "pfedbayes-eval-draws", p.EvalDraws,
		"pfedbayes: weight draws of the predictive (0: the mean network)")
	fs.StringVar(&f.optimizer, "pfedbayes-optimizer", p.Optimizer.String(),
		"pfedbayes: sgd (the paper's gradient descent) or adam (the authors' code; moments kept per client)")
	fs.StringVar(&f.variant, "pfedbayes-variant", p.Variant.String(), "pfedbayes: paper (the printed loss and "+
		"algorithm) or code (what the authors' code computes: (ζ/R)·KL − Σ ln p, 5 personalised steps per global "+
		"one, Adam, ρ⁰ = −3, draws of std 0.001; the flags given override its settings)")
	fs.Float64Var(&f.avg.LR, "fedavg-lr", f.avg.LR, "fedavg, fedprox, fedavg-ft: SGD step η")
	fs.Float64Var(&f.prox.Mu, "fedprox-mu", f.prox.Mu, "fedprox: weight μ of the proximal term μ/2‖w − w_global‖²")
	fs.IntVar(&f.avg.FineTune, "fedavg-ft-steps", f.avg.FineTune,
		"fedavg-ft: local fine-tuning steps from the final global model")
}

// evalLast is the rounds scored, at most the rounds run.
func (f *fedFlags) evalLast() int { return min(f.p.EvalLast, max(f.p.Rounds, 1)) }

func (f *fedFlags) pfedbayes(arch lml.BNN, seed uint64) (pfedbayes.Options, error) {
	o := f.p
	o.Arch, o.EvalLast, o.Seed = arch, f.evalLast(), seed
	var err error
	if o.Optimizer, err = pfedbayes.ParseOptimizer(f.optimizer); err != nil {
		return o, usageError{err}
	}
	if o.Variant, err = pfedbayes.ParseVariant(f.variant); err != nil {
		return o, usageError{err}
	}
	o = o.WithVariantDefaults(func(field string) bool { return f.fs != nil && flagSet(f.fs, pfedbayesFlagOf[field]) })
	if err := o.Validate(); err != nil {
		return o, usageError{err}
	}
	return o, nil
}

func (f *fedFlags) fedavg(arch lml.BNN, seed uint64, prox bool) (fedavg.Options, error) {
	o, p := f.avg, &f.p
	if prox {
		o, o.LR = f.prox, f.avg.LR
	}
	o.Arch, o.Rounds, o.EvalLast, o.LocalSteps, o.Batch, o.ClientsPerRound, o.Seed = arch, p.Rounds, f.evalLast(),
		p.LocalSteps, p.Batch, p.ClientsPerRound, seed
	if err := o.Validate(); err != nil {
		return o, usageError{err}
	}
	return o, nil
}

// checkArch validates the flags for the network arch before any data is
// read.
func (f *fedFlags) checkArch(arch lml.BNN) error {
	if f.p.Rounds < 1 || f.p.EvalLast < 1 {
		return usagef("--fed-rounds %d and --fed-eval-last %d must be at least 1", f.p.Rounds, f.p.EvalLast)
	}
	if _, err := f.pfedbayes(arch, 0); err != nil {
		return err
	}
	if _, err := f.fedavg(arch, 0, true); err != nil {
		return err
	}
	if f.avg.FineTune < 1 {
		return usagef("--fedavg-ft-steps %d must be at least 1", f.avg.FineTune)
	}
	return nil
}

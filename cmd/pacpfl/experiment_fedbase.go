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
// fmnist (their network is --arch/--hidden).
type fedFlags struct {
	rounds, evalLast, localSteps, batch int
	zeta, rho0, muInit, lr1, lr2, beta  float64
	mc, aggregate, evalDraws            int
	optimizer, variant                  string
	fs                                  *flag.FlagSet // to tell the flags given from the defaults
	avgLR, proxMu                       float64
	ftSteps                             int
	on                                  bool // a method of fedBaselines runs
}

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

func (f *fedFlags) label(string) string { return "" }

// note names the network and the rounds of the methods that ran.
func (f *fedFlags) note(w io.Writer, x *fmnistExperiment) {
	if f.on {
		a := x.arch.WithDefaults()
		fmt.Fprintf(w, "\npFedBayes, FedAvg, FedProx: network %s (%d weights), %d rounds, R = %d local steps of b = "+
			"%d\n", a, a.NumWeights(), f.rounds, f.localSteps, f.batch)
	}
}

func addFedFlags(fs *flag.FlagSet, f *fedFlags) {
	p, a, x := pfedbayes.DefaultOptions(), fedavg.DefaultOptions(), fedavg.FedProxOptions()
	f.fs = fs
	fs.IntVar(&f.rounds, "fed-rounds", p.Rounds, "pfedbayes, fedavg, fedprox: communication rounds T")
	fs.IntVar(&f.evalLast, "fed-eval-last", p.EvalLast, "pfedbayes, fedavg, fedprox: score after each of the last N "+
		"rounds and report the best (the pFedBayes paper: rounds 700–800)")
	fs.IntVar(&f.localSteps, "fed-local-steps", p.LocalSteps, "pfedbayes, fedavg, fedprox: local steps R per round")
	fs.IntVar(&f.batch, "fed-batch", p.Batch, "pfedbayes, fedavg, fedprox: minibatch b")
	fs.IntVar(&f.aggregate, "fed-clients-per-round", p.ClientsPerRound,
		"pfedbayes, fedavg, fedprox: clients S the server averages per round")
	fs.Float64Var(&f.zeta, "pfedbayes-zeta", p.Zeta, "pfedbayes: ζ, the weight of KL(q_i‖w)")
	fs.Float64Var(&f.rho0, "pfedbayes-rho0", p.Rho0, "pfedbayes: initial ρ of every weight (σ = softplus(ρ))")
	fs.Float64Var(&f.muInit, "pfedbayes-mu-init", p.MuInit, "pfedbayes: std of the initial means")
	fs.Float64Var(&f.lr1, "pfedbayes-lr1", p.LR1, "pfedbayes: η₁, step of the personalised models")
	fs.Float64Var(&f.lr2, "pfedbayes-lr2", p.LR2, "pfedbayes: η₂, step of the localised global model")
	fs.Float64Var(&f.beta, "pfedbayes-beta", p.Beta, "pfedbayes: β of the server step")
	fs.IntVar(&f.mc, "pfedbayes-mc", p.MC, "pfedbayes: K weight draws per step")
	fs.IntVar(&f.evalDraws, "pfedbayes-eval-draws", p.EvalDraws,
		"pfedbayes: weight draws of the predictive (0: the mean network)")
	fs.StringVar(&f.optimizer, "pfedbayes-optimizer", p.Optimizer.String(),
		"pfedbayes: sgd (the paper's gradient descent) or adam (the authors' code; moments kept per client)")
	fs.StringVar(&f.variant, "pfedbayes-variant", p.Variant.String(), "pfedbayes: paper (the printed loss and "+
		"algorithm) or code (what the authors' code computes: (ζ/R)·KL − Σ ln p, 5 personalised steps per global "+
		"one, Adam, ρ⁰ = −3, draws of std 0.001; the flags given override its settings)")
	fs.Float64Var(&f.avgLR, "fedavg-lr", a.LR, "fedavg, fedprox, fedavg-ft: SGD step η")
	fs.Float64Var(&f.proxMu, "fedprox-mu", x.Mu, "fedprox: weight μ of the proximal term μ/2‖w − w_global‖²")
	fs.IntVar(&f.ftSteps, "fedavg-ft-steps", a.FineTune,
		"fedavg-ft: local fine-tuning steps from the final global model")
}

func (f *fedFlags) pfedbayes(arch lml.BNN, seed uint64) (pfedbayes.Options, error) {
	o := pfedbayes.DefaultOptions()
	o.Arch, o.Rounds, o.EvalLast = arch, f.rounds, min(f.evalLast, max(f.rounds, 1))
	o.LocalSteps, o.Batch, o.ClientsPerRound = f.localSteps, f.batch, f.aggregate
	o.Zeta, o.Rho0, o.MuInit, o.LR1, o.LR2, o.Beta, o.MC, o.EvalDraws, o.Seed = f.zeta, f.rho0, f.muInit, f.lr1, f.lr2,
		f.beta, f.mc, f.evalDraws, seed
	var err error
	if o.Optimizer, err = pfedbayes.ParseOptimizer(f.optimizer); err != nil {
		return o, usageError{err}
	}
	if o.Variant, err = pfedbayes.ParseVariant(f.variant); err != nil {
		return o, usageError{err}
	}
	if o.Variant == pfedbayes.Code {
		// The code's own settings where the flag was not given.
		c, given := pfedbayes.CodeOptions(), map[string]bool{}
		if f.fs != nil {
			f.fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
		}
		o.PersonalSteps, o.NoiseStd = c.PersonalSteps, c.NoiseStd
		if !given["pfedbayes-rho0"] {
			o.Rho0 = c.Rho0
		}
		if !given["pfedbayes-optimizer"] {
			o.Optimizer = c.Optimizer
		}
		if !given["pfedbayes-eval-draws"] {
			o.EvalDraws = c.EvalDraws
		}
	}
	if err := o.Validate(); err != nil {
		return o, usageError{err}
	}
	return o, nil
}

func (f *fedFlags) fedavg(arch lml.BNN, seed uint64, prox bool) (fedavg.Options, error) {
	o := fedavg.DefaultOptions()
	o.Arch, o.Rounds, o.EvalLast, o.LocalSteps, o.Batch, o.ClientsPerRound = arch, f.rounds,
		min(f.evalLast, max(f.rounds, 1)), f.localSteps, f.batch, f.aggregate
	o.LR, o.FineTune, o.Seed = f.avgLR, f.ftSteps, seed
	if prox {
		o.Mu, o.FineTune = f.proxMu, 0
	}
	if err := o.Validate(); err != nil {
		return o, usageError{err}
	}
	return o, nil
}

// checkArch validates the flags for the network arch before any data is
// read.
func (f *fedFlags) checkArch(arch lml.BNN) error {
	if f.rounds < 1 || f.evalLast < 1 {
		return usagef("--fed-rounds %d and --fed-eval-last %d must be at least 1", f.rounds, f.evalLast)
	}
	if _, err := f.pfedbayes(arch, 0); err != nil {
		return err
	}
	if _, err := f.fedavg(arch, 0, true); err != nil {
		return err
	}
	if f.ftSteps < 1 {
		return usagef("--fedavg-ft-steps %d must be at least 1", f.ftSteps)
	}
	return nil
}

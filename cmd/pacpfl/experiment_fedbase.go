package main

import (
	"flag"
	"io"

	"github.com/pacpfl/pacpfl/fl/pfedbayes"
	"github.com/pacpfl/pacpfl/methods"
	"github.com/pacpfl/pacpfl/option"
	"github.com/pacpfl/pacpfl/report"
)

// fedFlags are the settings of pFedBayes, FedAvg and FedProx in experiment
// fmnist (their network is --arch/--hidden). The --fed-* flags are bound to
// pFedBayes's fields and apply to FedAvg and FedProx too.
type fedFlags struct {
	b                  methods.FedBaselines
	optimizer, variant string
	fs                 *flag.FlagSet // to tell the flags given from the defaults
}

func init() { fmnistMethodFlags = append(fmnistMethodFlags, func() methodFlags { return &fedFlags{} }) }

// check parses and validates the flags when one of their methods runs.
func (f *fedFlags) check(x *fmnistExperiment) error {
	if !x.has(methods.FedBaselineMethods...) {
		return nil
	}
	p := &f.b.PFedBayes
	var err error
	if p.Optimizer, err = pfedbayes.ParseOptimizer(f.optimizer); err != nil {
		return usageError{err}
	}
	if p.Variant, err = pfedbayes.ParseVariant(f.variant); err != nil {
		return usageError{err}
	}
	// The settings a variant may take over, by the flags bound to them.
	given := option.FlagNames(f.fs, p)
	given["Optimizer"] = "pfedbayes-optimizer" // parsed, not bound
	*p = p.WithVariantDefaults(func(field string) bool { return flagSet(f.fs, given[field]) })
	flags := option.FlagNames(f.fs, &f.b)
	return fieldUsage(f.b.Validate(x.bf.net), func(field string) string { return flags[field] })
}

func (f *fedFlags) settings(s *methods.Settings, x *fmnistExperiment, seed uint64) {
	f.b.Set(s, x.methods, x.bf.net, seed)
}

// note names the network and the rounds of the methods that ran.
func (f *fedFlags) note(w io.Writer, x *fmnistExperiment) {
	if x.has(methods.FedBaselineMethods...) {
		report.WriteFedBaselines(w, f.b.PFedBayesOptions(x.bf.net, 0))
	}
}

func (f *fedFlags) add(fs *flag.FlagSet) {
	f.b, f.fs = methods.DefaultFedBaselines(), fs
	p := &f.b.PFedBayes
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
	fs.Float64Var(&f.b.FedAvg.LR, "fedavg-lr", f.b.FedAvg.LR, "fedavg, fedprox, fedavg-ft: SGD step η")
	fs.Float64Var(&f.b.FedProx.Mu, "fedprox-mu", f.b.FedProx.Mu,
		"fedprox: weight μ of the proximal term μ/2‖w − w_global‖²")
	fs.IntVar(&f.b.FedAvg.FineTune, "fedavg-ft-steps", f.b.FedAvg.FineTune,
		"fedavg-ft: local fine-tuning steps from the final global model")
}

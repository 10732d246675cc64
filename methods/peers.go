package methods

import (
	"fmt"
	"slices"

	"github.com/pacpfl/pacpfl/fl/fedavg"
	"github.com/pacpfl/pacpfl/fl/fedvi"
	"github.com/pacpfl/pacpfl/fl/pfedbayes"
	"github.com/pacpfl/pacpfl/lml"
	"github.com/pacpfl/pacpfl/option"
)

// FedVIFamily are the settings of the FedVI-family methods of a
// comparison: FedVI, and FedAvg and FedAvg+FT on its network
// (MethodFedVIFedAvg, MethodFedVIFedAvgFT).
type FedVIFamily struct {
	// FedVI is FedVI's options; the FedAvg rows share its rounds, clients,
	// mini-batch and steps.
	FedVI fedvi.Options
	// FineTune is FedAvg+FT's local fine-tuning.
	FineTune fedvi.FineTune
	// FedAvgEmbedReLU: the FedAvg rows' network has a ReLU after E's dense
	// layer (Reddi et al.'s CNN) whatever FedVI's has.
	FedAvgEmbedReLU bool
}

// DefaultFedVIFamily are the settings sized for a Fashion-MNIST split of
// 300 + 100 clients sharing 60,000 images (docs/math.md, "FedVI"): 150
// rounds of 30 clients, the accuracy also averaged over the last 10, the
// paper's other settings, and the FedAvg rows on Reddi et al.'s CNN. The
// paper's 1500 rounds of 100 clients are out of reach of a two-core run.
func DefaultFedVIFamily() FedVIFamily {
	o := fedvi.DefaultOptions()
	o.Rounds, o.ClientsPerRound, o.EvalLast = 150, 30, 10
	return FedVIFamily{FedVI: o, FineTune: fedvi.DefaultFineTune(), FedAvgEmbedReLU: true}
}

// Validate reports, as an *option.FieldError, settings a comparison
// cannot score: no rounds, a negative number of clients per round (0:
// all), evaluated rounds outside [1, rounds] or no fine-tuning epoch;
// then fedvi.Options.Validate's errors.
func (f FedVIFamily) Validate() error {
	o := &f.FedVI
	switch {
	case o.Rounds < 1:
		return option.Range("", "FedVI.Rounds", o.Rounds, "must be ≥ 1")
	case o.ClientsPerRound < 0:
		return option.Range("", "FedVI.ClientsPerRound", o.ClientsPerRound, "must be ≥ 0")
	case o.EvalLast < 1 || o.EvalLast > o.Rounds:
		return option.Custom("", []string{"FedVI.EvalLast", "FedVI.Rounds"}, []any{o.EvalLast, o.Rounds},
			func(n []string) string {
				return fmt.Sprintf("%s %d must be in [1, %s = %d]", n[0], o.EvalLast, n[1], o.Rounds)
			})
	case f.FineTune.Epochs < 1:
		return option.Range("", "FineTune.Epochs", f.FineTune.Epochs, "must be ≥ 1")
	}
	return o.Validate()
}

// Set puts the options of the family's methods into s: FedVI's, FedAvg's
// on its network and the fine-tuning, none of it without fineTune (no
// FedAvg+FT among the methods: the FedAvg run skips it).
func (f FedVIFamily) Set(s *Settings, fineTune bool) {
	vo, ft := f.FedVI, f.FineTune
	ao := vo
	ao.Arch.EmbedReLU = f.FedAvgEmbedReLU
	if !fineTune {
		ft.Epochs = 0
	}
	s.FedVI, s.FedVIFedAvg, s.FedVIFineTune = &vo, &ao, &ft
}

// FedBaselines are the settings of pFedBayes and of its frequentist
// baselines FedAvg, FedProx and FedAvg+FT in a comparison (the pFedBayes
// paper's Table 1; docs/math.md, "pFedBayes, FedAvg and FedProx"): the
// baselines run pFedBayes's rounds, evaluated rounds, local steps,
// mini-batch and clients per round on the same network.
type FedBaselines struct {
	PFedBayes pfedbayes.Options
	// FedAvg holds the step η of FedAvg and FedProx and FedAvg+FT's
	// fine-tuning steps; FedProx its μ.
	FedAvg, FedProx fedavg.Options
}

// FedBaselineMethods are the methods FedBaselines configures, in table
// order.
var FedBaselineMethods = []string{pfedbayes.MethodPFedBayes, fedavg.MethodFedAvg, fedavg.MethodFedProx,
	fedavg.MethodFedAvgFT}

// DefaultFedBaselines are the pFedBayes paper's settings of all four.
func DefaultFedBaselines() FedBaselines {
	return FedBaselines{PFedBayes: pfedbayes.DefaultOptions(), FedAvg: fedavg.DefaultOptions(),
		FedProx: fedavg.FedProxOptions()}
}

// evalLast is the evaluated rounds, at most the rounds run.
func (b *FedBaselines) evalLast() int { return min(b.PFedBayes.EvalLast, max(b.PFedBayes.Rounds, 1)) }

// PFedBayesOptions are pFedBayes's options on the network arch with the
// random streams of seed.
func (b FedBaselines) PFedBayesOptions(arch lml.BNN, seed uint64) pfedbayes.Options {
	o := b.PFedBayes
	o.Arch, o.EvalLast, o.Seed = arch, b.evalLast(), seed
	return o
}

// FedAvgOptions are FedAvg's options (FedProx's with prox) on the network
// arch with the random streams of seed.
func (b FedBaselines) FedAvgOptions(arch lml.BNN, seed uint64, prox bool) fedavg.Options {
	o, p := b.FedAvg, &b.PFedBayes
	if prox {
		o, o.LR = b.FedProx, b.FedAvg.LR
	}
	o.Arch, o.Rounds, o.EvalLast, o.LocalSteps, o.Batch, o.ClientsPerRound, o.Seed = arch, p.Rounds, b.evalLast(),
		p.LocalSteps, p.Batch, p.ClientsPerRound, seed
	return o
}

// Validate reports the first setting that cannot run on the network arch:
// no round or no evaluated round, and FedAvg+FT without a fine-tuning
// step, as an *option.FieldError; pFedBayes's and FedProx's own errors
// (pfedbayes.Options.Validate, fedavg.Options.Validate) in between.
func (b FedBaselines) Validate(arch lml.BNN) error {
	p := &b.PFedBayes
	if p.Rounds < 1 || p.EvalLast < 1 {
		return option.Joint("", []string{"PFedBayes.Rounds", "PFedBayes.EvalLast"}, []any{p.Rounds, p.EvalLast},
			"must be at least 1")
	}
	po := b.PFedBayesOptions(arch, 0)
	if err := po.Validate(); err != nil {
		return err
	}
	ao := b.FedAvgOptions(arch, 0, true)
	if err := ao.Validate(); err != nil {
		return err
	}
	if b.FedAvg.FineTune < 1 {
		return option.Range("", "FedAvg.FineTune", b.FedAvg.FineTune, "must be at least 1")
	}
	return nil
}

// Set puts the options of those of the four among names into s, on the
// network arch with the random streams of seed.
func (b FedBaselines) Set(s *Settings, names []string, arch lml.BNN, seed uint64) {
	has := func(ms ...string) bool {
		return slices.ContainsFunc(ms, func(m string) bool { return slices.Contains(names, m) })
	}
	if has(pfedbayes.MethodPFedBayes) {
		o := b.PFedBayesOptions(arch, seed)
		s.PFedBayes = &o
	}
	if has(fedavg.MethodFedAvg, fedavg.MethodFedAvgFT) {
		o := b.FedAvgOptions(arch, seed, false)
		s.FedAvg = &o
	}
	if has(fedavg.MethodFedProx) {
		o := b.FedAvgOptions(arch, seed, true)
		s.FedProx = &o
	}
}

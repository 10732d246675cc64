package genfl

import (
	"fmt"
	"math"

	"github.com/pacpfl/pacpfl/option"
)

// FillDefaults sets the settings whose default depends on the prior or the
// estimator, where o leaves them 0, to DefaultOptions(o.Prior,
// o.MC.Estimator, …)'s: the KL factor Objective.KLPenalty, GenFL's
// PosteriorFed.Rounds and PosteriorFed.LocalEpochs (by prior) and
// FEDBOUND's MC.N (by estimator). A caller can so leave them at "the
// paper's for whatever prior and estimator are chosen".
func (o *Options) FillDefaults() {
	d := DefaultOptions(o.Prior, o.MC.Estimator, 0)
	fill := func(v *int, def int) {
		if *v == 0 {
			*v = def
		}
	}
	if o.Objective.KLPenalty == 0 {
		o.Objective.KLPenalty = d.Objective.KLPenalty
	}
	fill(&o.PosteriorFed.Rounds, d.PosteriorFed.Rounds)
	fill(&o.PosteriorFed.LocalEpochs, d.PosteriorFed.LocalEpochs)
	fill(&o.MC.N, d.MC.N)
}

// Validate checks a whole run's settings, DefaultOptions' rules: σ_P, the
// KL factor and both step sizes positive and finite; every count of
// rounds, epochs, examples, samples and draws at least 1 (MC.Stack and
// ClientMC.Stack included: a run spells them out); C in (0, 1]; momenta
// and dropout in [0, 1); δ, δ′ > 0 with δ + δ′ < 1; p_min in (0, 1); a
// network with at least one hidden layer. A setting out of range is a
// *option.FieldError.
func (o *Options) Validate() error {
	bad := func(rule string, fields []string, values ...any) error {
		return option.Joint("genfl", fields, values, rule)
	}
	for _, c := range []struct {
		field string
		v     float64
	}{{"SigmaPrior", o.SigmaPrior}, {"Objective.KLPenalty", o.Objective.KLPenalty}, {"PosteriorFed.LR",
		o.PosteriorFed.LR}, {"PriorFed.LR", o.PriorFed.LR}} {
		if !(c.v > 0) || math.IsInf(c.v, 0) {
			return bad("must be positive and finite", []string{c.field}, c.v)
		}
	}
	for _, c := range []struct {
		field string
		v     int
	}{{"PosteriorFed.Rounds", o.PosteriorFed.Rounds}, {"PosteriorFed.LocalEpochs", o.PosteriorFed.LocalEpochs},
		{"PriorFed.Rounds", o.PriorFed.Rounds}, {"PriorFed.LocalEpochs", o.PriorFed.LocalEpochs},
		{"PersonalEpochs", o.PersonalEpochs}, {"PosteriorFed.Batch", o.PosteriorFed.Batch},
		{"PriorFed.Batch", o.PriorFed.Batch}, {"MC.N", o.MC.N}, {"ClientMC.N", o.ClientMC.N},
		{"MC.Stack", o.MC.Stack}, {"ClientMC.Stack", o.ClientMC.Stack}, {"TestDraws", o.TestDraws}} {
		if c.v < 1 {
			return bad("must be at least 1", []string{c.field}, c.v)
		}
	}
	qf, pf := &o.PosteriorFed, &o.PriorFed
	switch {
	case !(qf.Fraction > 0 && qf.Fraction <= 1):
		return bad("must lie in (0, 1]", []string{"PosteriorFed.Fraction"}, qf.Fraction)
	case !(pf.Fraction > 0 && pf.Fraction <= 1):
		return bad("must lie in (0, 1]", []string{"PriorFed.Fraction"}, pf.Fraction)
	case !(qf.Momentum >= 0 && qf.Momentum < 1) || !(pf.Momentum >= 0 && pf.Momentum < 1):
		return bad("must lie in [0, 1)", []string{"PosteriorFed.Momentum", "PriorFed.Momentum"}, qf.Momentum,
			pf.Momentum)
	case !(o.Dropout >= 0 && o.Dropout < 1):
		return bad("must lie in [0, 1)", []string{"Dropout"}, o.Dropout)
	case !(o.Objective.Delta > 0 && o.DeltaPrime > 0 && o.Objective.Delta+o.DeltaPrime < 1):
		return bad("must be positive with δ + δ′ < 1", []string{"Objective.Delta", "DeltaPrime"}, o.Objective.Delta,
			o.DeltaPrime)
	case !(o.Objective.PMin > 0 && o.Objective.PMin < 1):
		return bad("must lie in (0, 1)", []string{"Objective.PMin"}, o.Objective.PMin)
	case len(o.Arch.Hidden) == 0:
		return bad("needs at least one width", []string{"Arch.Hidden"})
	case o.Prior != RandomPriorKind && o.Prior != LearntPriorKind && o.Prior != GivenPriorKind:
		return fmt.Errorf("genfl: unknown prior %v", o.Prior)
	case o.Prior != GivenPriorKind && (o.Given != nil || o.GivenUnseen):
		return fmt.Errorf("genfl: a given prior with prior kind %v (want %v)", o.Prior, GivenPriorKind)
	case o.MC.Estimator != Pairs && o.MC.Estimator != Full, o.ClientMC.Estimator != Pairs &&
		o.ClientMC.Estimator != Full:
		return fmt.Errorf("genfl: estimators %v (FEDBOUND) and %v (each user's bound): want pairs or full",
			o.MC.Estimator, o.ClientMC.Estimator)
	case o.Workers < 0 || pf.Workers < 0 || qf.Workers < 0 || o.MC.Workers < 0 || o.ClientMC.Workers < 0:
		return fmt.Errorf("genfl: negative workers")
	}
	if err := o.Arch.Validate(); err != nil {
		return err
	}
	if o.Prior == GivenPriorKind {
		if err := o.checkGiven(); err != nil {
			return err
		}
	}
	return o.Objective.validate()
}

// checkGiven reports a missing given prior or one that does not fit Arch.
func (o *Options) checkGiven() error {
	if o.Given == nil {
		return fmt.Errorf("genfl: prior kind %v without Options.Given", GivenPriorKind)
	}
	if err := o.Given.Validate(o.Arch); err != nil {
		return fmt.Errorf("genfl: given prior: %w", err)
	}
	return nil
}

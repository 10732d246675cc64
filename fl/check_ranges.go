package fl

import (
	"fmt"
	"math"

	"github.com/pacpfl/pacpfl/lml"
	"github.com/pacpfl/pacpfl/option"
)

// positiveFinite is v > 0 and finite (false for NaN).
func positiveFinite(v float64) bool { return v > 0 && !math.IsInf(v, 0) }

// CheckRanges reports, as an *option.FieldError, the first option of o
// that is out of range whatever the data: the server loop's sizes,
// learning rate and τ, σ_P, and the bounds' sizes and δ. What depends on
// the clients is left to Config.Validate and CheckBounds.
func (o *PACPFLOptions) CheckRanges() error {
	s, b := &o.Server, &o.Bounds
	switch {
	case s.K < 1:
		return option.Range("", "Server.K", s.K, "must be at least 1")
	case s.Rounds < 0:
		return option.Range("", "Server.Rounds", s.Rounds, "must be ≥ 0")
	case s.ClientsPerRound < 0:
		return option.Range("", "Server.ClientsPerRound", s.ClientsPerRound,
			fmt.Sprintf("must be at least 1 (or 0: min(n, %d))", DefaultClientsPerRound))
	case s.Batch < 0:
		return option.Range("", "Server.Batch", s.Batch, "must be at least 1 (or 0: all of S_i, the exact LML)")
	case !positiveFinite(s.LR):
		return option.Range("", "Server.LR", s.LR, "must be positive and finite")
	case !positiveFinite(s.Tau):
		return option.Range("", "Server.Tau", s.Tau, "must be positive and finite")
	case !positiveFinite(o.SigmaP):
		return option.Range("", "SigmaP", o.SigmaP, "must be positive and finite")
	case b.PriorSamples < 0:
		return option.Range("", "Bounds.PriorSamples", b.PriorSamples, "must be ≥ 0 (0: skip the bounds)")
	case b.FuncSamples < 1:
		return option.Range("", "Bounds.FuncSamples", b.FuncSamples, "must be at least 1")
	case !(b.Delta > 0 && b.Delta < 1):
		return option.Range("", "Bounds.Delta", b.Delta, "must lie in (0, 1)")
	}
	return nil
}

// CheckRanges reports, as an *option.FieldError, the first setting of o
// beyond the server loop's (Config.Validate) and the bounded loss's
// (ParseBoundLoss) that is out of range whatever the data: the
// hyper-prior's stds σ_μ and σ_ω, and the bounds' weight draws.
func (o *BNNOptions) CheckRanges() error {
	switch {
	case !positiveFinite(o.SigmaMu) || !positiveFinite(o.SigmaOmega):
		return option.Joint("", []string{"SigmaMu", "SigmaOmega"}, []any{o.SigmaMu, o.SigmaOmega},
			"must be positive and finite")
	case o.Bounds.WeightDraws < 1:
		return option.Range("", "Bounds.WeightDraws", o.Bounds.WeightDraws, "must be at least 1")
	}
	return nil
}

// The names of the bounded losses of a BNN's bounds (ParseBoundLoss).
const (
	// BoundLossCE is the cross-entropy clipped to [0, ln(1/PMin)]
	// (lml.ClippedNLL).
	BoundLossCE = "ce"
	// BoundLossZeroOne is the 0–1 loss (lml.ZeroOne).
	BoundLossZeroOne = "01"
)

// ParseBoundLoss is the bounded loss of a BNN's bounds called name
// (BoundLossCE with the probability floor pMin, or BoundLossZeroOne); an
// unknown name, or a floor outside (0, 1) for BoundLossCE, is an
// *option.FieldError on Bounds.Loss or Bounds.Loss.PMin of BNNOptions.
func ParseBoundLoss(name string, pMin float64) (lml.Loss, error) {
	switch name {
	case BoundLossCE:
		if !(pMin > 0 && pMin < 1) {
			return lml.Loss{}, option.Range("", "Bounds.Loss.PMin", pMin, "must lie in (0, 1)")
		}
		return lml.Loss{Kind: lml.ClippedNLL, PMin: pMin}, nil
	case BoundLossZeroOne:
		return lml.Loss{Kind: lml.ZeroOne}, nil
	}
	return lml.Loss{}, option.Custom("", []string{"Bounds.Loss"}, []any{name}, func(n []string) string {
		return fmt.Sprintf("unknown %s %q (want %s or %s)", n[0], name, BoundLossCE, BoundLossZeroOne)
	})
}

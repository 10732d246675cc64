package fl

import (
	"fmt"
	"math"

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

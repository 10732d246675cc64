package fl

import (
	"fmt"
	"math"
)

// FieldError reports an option outside its range. Field is the path of the
// Go field in the options value (e.g. "Server.K"), so that a front end that
// binds fields to names of its own (command-line flags, configuration keys)
// can report the value by the name its user wrote.
type FieldError struct {
	Field string
	Value any
	Want  string // the range as a predicate: "be at least 1", "lie in (0, 1)"
}

func (e *FieldError) Error() string { return fmt.Sprintf("%s %v must %s", e.Field, e.Value, e.Want) }

// positiveFinite is v > 0 and finite (false for NaN).
func positiveFinite(v float64) bool { return v > 0 && !math.IsInf(v, 0) }

// CheckRanges reports, as a *FieldError, the first option of o that is out
// of range whatever the data: the server loop's sizes, learning rate and τ,
// σ_P, and the bounds' sizes and δ. What depends on the clients is left to
// Config.Validate and CheckBounds.
func (o *PACPFLOptions) CheckRanges() error {
	s, b := &o.Server, &o.Bounds
	switch {
	case s.K < 1:
		return &FieldError{"Server.K", s.K, "be at least 1"}
	case s.Rounds < 0:
		return &FieldError{"Server.Rounds", s.Rounds, "be ≥ 0"}
	case s.ClientsPerRound < 0:
		return &FieldError{"Server.ClientsPerRound", s.ClientsPerRound,
			fmt.Sprintf("be at least 1 (or 0: min(n, %d))", DefaultClientsPerRound)}
	case s.Batch < 0:
		return &FieldError{"Server.Batch", s.Batch, "be at least 1 (or 0: all of S_i, the exact LML)"}
	case !positiveFinite(s.LR):
		return &FieldError{"Server.LR", s.LR, "be positive and finite"}
	case !positiveFinite(s.Tau):
		return &FieldError{"Server.Tau", s.Tau, "be positive and finite"}
	case !positiveFinite(o.SigmaP):
		return &FieldError{"SigmaP", o.SigmaP, "be positive and finite"}
	case b.PriorSamples < 0:
		return &FieldError{"Bounds.PriorSamples", b.PriorSamples, "be ≥ 0 (0: skip the bounds)"}
	case b.FuncSamples < 1:
		return &FieldError{"Bounds.FuncSamples", b.FuncSamples, "be at least 1"}
	case !(b.Delta > 0 && b.Delta < 1):
		return &FieldError{"Bounds.Delta", b.Delta, "lie in (0, 1)"}
	}
	return nil
}

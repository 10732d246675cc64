package genfl

import (
	"fmt"
	"math"
)

// Objective selects GenFL's training objective (docs/math.md §7, GF-8/9).
type Objective int

const (
	// F1 is f₁ = R̂ + √((KL + ln(2√m/δ))/(2m)), from the Pinsker relaxation
	// (GF-3) of McAllester's bound.
	F1 Objective = iota + 1
	// F2 is f₂ = (√(R̂ + c) + √c)², c = (KL + ln(2√m/δ))/(2m), from the
	// quadratic relaxation (GF-4/5).
	F2
)

// String is "f1" or "f2".
func (o Objective) String() string {
	switch o {
	case F1:
		return "f1"
	case F2:
		return "f2"
	}
	return fmt.Sprintf("Objective(%d)", int(o))
}

// ParseObjective reads "f1" or "f2".
func ParseObjective(s string) (Objective, error) {
	switch s {
	case "f1":
		return F1, nil
	case "f2":
		return F2, nil
	}
	return 0, fmt.Errorf("genfl: unknown objective %q (f1 or f2)", s)
}

// objectiveTerms holds what f needs besides R̂ and KL: m, δ and the KL
// penalty factor (KL is multiplied by it in the objective only, never in a
// bound).
type objectiveTerms struct {
	obj     Objective
	m       float64
	logTerm float64 // ln(2√m/δ)
	penalty float64
}

func newObjectiveTerms(obj Objective, m int, delta, penalty float64) (objectiveTerms, error) {
	switch {
	case obj != F1 && obj != F2:
		return objectiveTerms{}, fmt.Errorf("genfl: unknown objective %v", obj)
	case m < 1:
		return objectiveTerms{}, fmt.Errorf("genfl: objective needs m ≥ 1, got %d", m)
	case !(delta > 0 && delta < 1):
		return objectiveTerms{}, fmt.Errorf("genfl: δ = %v must lie in (0, 1)", delta)
	case !(penalty > 0) || math.IsInf(penalty, 0):
		return objectiveTerms{}, fmt.Errorf("genfl: KL penalty factor %v must be positive and finite", penalty)
	}
	fm := float64(m)
	return objectiveTerms{obj: obj, m: fm, logTerm: math.Log(2 * math.Sqrt(fm) / delta), penalty: penalty}, nil
}

// eval returns f(R̂, KL) and its partial derivatives ∂f/∂R̂ and ∂f/∂KL.
func (t objectiveTerms) eval(risk, kl float64) (f, dRisk, dKL float64) {
	c := (t.penalty*kl + t.logTerm) / (2 * t.m) // > 0: logTerm > 0 for δ < 1
	dc := t.penalty / (2 * t.m)                 // ∂c/∂KL
	sc := math.Sqrt(c)
	switch t.obj {
	case F1:
		return risk + sc, 1, dc / (2 * sc)
	default: // F2
		sr := math.Sqrt(risk + c)
		s := sr + sc
		return s * s, s / sr, s * (1/sr + 1/sc) * dc
	}
}

package svgd

import (
	"fmt"
	"math"
)

// Optimizer moves parameters x in place along an ascent direction dir (same
// length): SVGD's ΔΦ is the direction of steepest increase of the target.
type Optimizer interface {
	Ascend(x, dir []float64) error
}

// Ascent is the plain update of the paper: x ← x + LR·dir.
type Ascent struct {
	LR float64
}

// Ascend implements Optimizer.
func (a *Ascent) Ascend(x, dir []float64) error {
	if len(x) != len(dir) {
		return fmt.Errorf("svgd: Ascent: %d parameters but direction of length %d", len(x), len(dir))
	}
	if err := checkDirection("Ascent", dir, false); err != nil {
		return err
	}
	axpy(a.LR, dir, x)
	return nil
}

// DefaultAdamLR is the Adam learning rate of the PACOH reference code.
const DefaultAdamLR = 1e-3

// Adam is the Adam optimiser (Kingma & Ba) applied to the loss gradient
// −dir, the way the PACOH reference code drives SVGD; written as an ascent:
//
//	m ← β1 m + (1−β1) dir,  v ← β2 v + (1−β2) dir²,
//	x ← x + LR · m̂ / (√v̂ + Eps),  m̂ = m/(1−β1ᵗ), v̂ = v/(1−β2ᵗ).
//
// Its moment buffers are sized on the first call and then fixed. Ascend
// refuses, before it changes anything, a direction with a non-finite value or
// a value whose square overflows (it would make v +Inf and freeze that
// coordinate for the rest of the run); SetState refuses non-finite moments
// and a negative v.
type Adam struct {
	LR, Beta1, Beta2, Eps float64

	m, v []float64
	t    int
	b1t  float64 // β1ᵗ
	b2t  float64 // β2ᵗ
}

// NewAdam returns Adam with lr (≤ 0 selects DefaultAdamLR) and the usual
// constants β1 = 0.9, β2 = 0.999, ε = 1e-8 (PyTorch's defaults).
func NewAdam(lr float64) *Adam {
	if lr <= 0 {
		lr = DefaultAdamLR
	}
	return &Adam{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}
}

// Steps returns the number of updates made so far.
func (a *Adam) Steps() int { return a.t }

// Reset forgets the moments and the step count.
func (a *Adam) Reset() {
	for i := range a.m {
		a.m[i], a.v[i] = 0, 0
	}
	a.t = 0
}

// Ascend implements Optimizer.
func (a *Adam) Ascend(x, dir []float64) error {
	if len(x) != len(dir) {
		return fmt.Errorf("svgd: Adam: %d parameters but direction of length %d", len(x), len(dir))
	}
	if a.m != nil && len(a.m) != len(x) {
		return fmt.Errorf("svgd: Adam was used with %d parameters, now %d", len(a.m), len(x))
	}
	if err := checkDirection("Adam", dir, true); err != nil {
		return err
	}
	if a.m == nil {
		a.m = make([]float64, len(x))
		a.v = make([]float64, len(x))
	}
	if a.t == 0 {
		a.b1t, a.b2t = 1, 1
	}
	a.t++
	a.b1t *= a.Beta1
	a.b2t *= a.Beta2
	c1 := 1 / (1 - a.b1t)
	c2 := 1 / (1 - a.b2t)
	b1, b2 := a.Beta1, a.Beta2
	m, v := a.m[:len(x)], a.v[:len(x)]
	dir = dir[:len(x)]
	for i, g := range dir {
		mi := b1*m[i] + (1-b1)*g
		vi := b2*v[i] + (1-b2)*g*g
		m[i], v[i] = mi, vi
		x[i] += a.LR * (mi * c1) / (math.Sqrt(vi*c2) + a.Eps)
	}
	return nil
}

// AdamState is Adam's whole state (for checkpoints).
type AdamState struct {
	M, V     []float64
	T        int
	B1t, B2t float64
}

// State returns a copy of the moments and step count.
func (a *Adam) State() AdamState {
	return AdamState{M: append([]float64(nil), a.m...), V: append([]float64(nil), a.v...), T: a.t, B1t: a.b1t,
		B2t: a.b2t}
}

// SetState restores a state returned by State. It refuses a state that
// Ascend could not have produced: moments of different lengths, a
// non-finite m or v, a negative v, or (after a step) bias-correction powers
// β1ᵗ, β2ᵗ outside [0, 1).
func (a *Adam) SetState(s AdamState) error {
	if len(s.M) != len(s.V) || s.T < 0 || (s.T > 0 && len(s.M) == 0) {
		return fmt.Errorf("svgd: Adam state with %d and %d moments at step %d", len(s.M), len(s.V), s.T)
	}
	if err := CheckAdamState(s); err != nil {
		return err
	}
	a.m, a.v = append([]float64(nil), s.M...), append([]float64(nil), s.V...)
	if len(a.m) == 0 {
		a.m, a.v = nil, nil
	}
	a.t, a.b1t, a.b2t = s.T, s.B1t, s.B2t
	return nil
}

// CheckAdamState reports the first value of s that no run of Adam
// produces: a non-finite first moment M[i], a non-finite or negative second
// moment V[i], or, once T > 0, β1ᵗ or β2ᵗ outside [0, 1) (the bias
// corrections 1/(1−βᵗ) would be infinite or negative).
func CheckAdamState(s AdamState) error {
	for i, v := range s.M {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("svgd: Adam state: first moment m[%d] = %v is not finite", i, v)
		}
	}
	for i, v := range s.V {
		if !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("svgd: Adam state: second moment v[%d] = %v is not finite and ≥ 0", i, v)
		}
	}
	if s.T > 0 && (!(s.B1t >= 0 && s.B1t < 1) || !(s.B2t >= 0 && s.B2t < 1)) {
		return fmt.Errorf("svgd: Adam state: β1ᵗ = %v, β2ᵗ = %v at step %d outside [0, 1)", s.B1t, s.B2t, s.T)
	}
	return nil
}

// checkDirection reports the first value of an optimiser's input dir that
// is not finite or, with squares, whose square overflows: such a step
// would put +Inf or NaN into the parameters or into Adam's second moment.
// The optimiser returns the error before it changes anything.
func checkDirection(opt string, dir []float64, squares bool) error {
	for i, g := range dir {
		if g*g <= math.MaxFloat64 {
			continue
		}
		if math.IsNaN(g) || math.IsInf(g, 0) {
			return fmt.Errorf("svgd: %s: direction[%d] = %v is not finite; nothing changed", opt, i, g)
		}
		if squares {
			return fmt.Errorf("svgd: %s: direction[%d] = %.4g has a square that overflows (Adam's second moment "+
				"would be +Inf); nothing changed", opt, i, g)
		}
	}
	return nil
}

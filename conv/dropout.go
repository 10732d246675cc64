package conv

import (
	"fmt"
	"math/rand/v2"
)

// Dropout is inverted dropout: in training every element is kept with
// probability 1 − Rate and then scaled by 1/(1 − Rate), else zeroed, so
// that the expected output equals the input; in evaluation (Train false)
// it is the identity. Backward multiplies by the mask of the last training
// Forward.
//
// The mask is drawn from the layer's random stream (SetRand), one uniform
// per element, so a run is reproducible. With Fixed set, Forward reuses the
// last mask instead of drawing a new one (a finite-difference check needs
// the same function on every evaluation); the first Forward still draws.
type Dropout struct {
	Name   string
	Rate   float64
	Train  bool
	Fixed  bool
	rng    *rand.Rand
	scale  float64
	mask   []float64 // 0 or 1/(1 − Rate) per element of the last input
	drawn  bool      // mask holds a draw for an input of len(mask)
	masked bool      // the last Forward applied the mask
	x      *Tensor
	out    Tensor
	dx     Tensor
}

// NewDropout makes a dropout layer with drop probability rate ∈ [0, 1),
// in training mode, drawing its masks from rng.
func NewDropout(name string, rate float64, rng *rand.Rand) (*Dropout, error) {
	if !(rate >= 0 && rate < 1) {
		return nil, fmt.Errorf("dropout %q: rate %v outside [0, 1)", name, rate)
	}
	if rng == nil {
		return nil, fmt.Errorf("dropout %q: nil random stream", name)
	}
	return &Dropout{Name: name, Rate: rate, Train: true, rng: rng, scale: 1 / (1 - rate)}, nil
}

// SetRand replaces the stream the masks are drawn from.
func (l *Dropout) SetRand(rng *rand.Rand) { l.rng = rng }

// Forward applies the mask (training) or copies x (evaluation). The output
// is owned by the layer.
func (l *Dropout) Forward(x *Tensor) (*Tensor, error) {
	if err := check("dropout", l.Name, "input", x); err != nil {
		return nil, err
	}
	l.x = x
	l.out.resize(x.N, x.C, x.H, x.W)
	l.masked = l.Train && l.Rate > 0
	if !l.masked {
		copy(l.out.Data, x.Data)
		return &l.out, nil
	}
	n := len(x.Data)
	if !(l.Fixed && l.drawn && len(l.mask) == n) {
		if cap(l.mask) < n {
			l.mask = make([]float64, n)
		}
		l.mask = l.mask[:n]
		for i := range l.mask {
			if l.rng.Float64() < l.Rate {
				l.mask[i] = 0
			} else {
				l.mask[i] = l.scale
			}
		}
		l.drawn = true
	}
	for i, v := range x.Data {
		l.out.Data[i] = v * l.mask[i]
	}
	return &l.out, nil
}

// Backward returns dy times the mask of the last Forward (dy itself if that
// Forward was in evaluation mode).
func (l *Dropout) Backward(dy *Tensor) (*Tensor, error) {
	if err := sameShape("dropout", l.Name, dy, &l.out); err != nil {
		return nil, err
	}
	l.dx.resize(dy.N, dy.C, dy.H, dy.W)
	if !l.masked {
		copy(l.dx.Data, dy.Data)
		return &l.dx, nil
	}
	for i, g := range dy.Data {
		l.dx.Data[i] = g * l.mask[i]
	}
	return &l.dx, nil
}

// Params returns nil.
func (l *Dropout) Params() []Param { return nil }

package conv

import "math"

// ReLU is max(x, 0) elementwise; its gradient at 0 is taken as 0.
type ReLU struct {
	Name    string
	out, dx Tensor
}

// NewReLU makes a ReLU layer.
func NewReLU(name string) *ReLU { return &ReLU{Name: name} }

// Forward applies max(x, 0).
func (l *ReLU) Forward(x *Tensor) (*Tensor, error) {
	if err := check("relu", l.Name, "input", x); err != nil {
		return nil, err
	}
	l.out.resize(x.N, x.C, x.H, x.W)
	out := l.out.Data[:len(x.Data)]
	for i, v := range x.Data {
		out[i] = max(v, 0) // branch-free; NaN propagates
	}
	return &l.out, nil
}

// Backward passes dy where the output was positive.
func (l *ReLU) Backward(dy *Tensor) (*Tensor, error) {
	if err := sameShape("relu", l.Name, dy, &l.out); err != nil {
		return nil, err
	}
	l.dx.resize(dy.N, dy.C, dy.H, dy.W)
	dx, y := l.dx.Data[:len(dy.Data)], l.out.Data[:len(dy.Data)]
	for i, g := range dy.Data {
		dx[i] = math.Float64frombits(math.Float64bits(g) & positiveMask(y[i]))
	}
	return &l.dx, nil
}

// Params returns nil.
func (l *ReLU) Params() []Param { return nil }

// positiveMask is all ones if y > 0 (not NaN) and zero otherwise, computed
// without a branch: the signs of the activations are random, so a branch
// would mispredict half the time.
func positiveMask(y float64) uint64 {
	// y > 0 ⟺ sign bit clear and 0 < bits ≤ bits(+Inf).
	b := math.Float64bits(y)
	pos := ^b >> 63                                // 1 if the sign bit is clear
	nonzero := (b | -b) >> 63                      // 1 if b ≠ 0
	notNaN := ((0x7FF0000000000000 - b) >> 63) ^ 1 // with the sign clear: 1 if b ≤ bits(+Inf)
	return -(pos & nonzero & notNaN)
}

// Tanh is tanh(x) elementwise.
type Tanh struct {
	Name    string
	out, dx Tensor
}

// NewTanh makes a tanh layer.
func NewTanh(name string) *Tanh { return &Tanh{Name: name} }

// Forward applies tanh.
func (l *Tanh) Forward(x *Tensor) (*Tensor, error) {
	if err := check("tanh", l.Name, "input", x); err != nil {
		return nil, err
	}
	l.out.resize(x.N, x.C, x.H, x.W)
	for i, v := range x.Data {
		l.out.Data[i] = math.Tanh(v)
	}
	return &l.out, nil
}

// Backward multiplies dy by 1 − tanh².
func (l *Tanh) Backward(dy *Tensor) (*Tensor, error) {
	if err := sameShape("tanh", l.Name, dy, &l.out); err != nil {
		return nil, err
	}
	l.dx.resize(dy.N, dy.C, dy.H, dy.W)
	for i, g := range dy.Data {
		y := l.out.Data[i]
		l.dx.Data[i] = g * (1 - y*y)
	}
	return &l.dx, nil
}

// Params returns nil.
func (l *Tanh) Params() []Param { return nil }

// Flatten views N×C×H×W as N×(C·H·W)×1×1 without copying.
type Flatten struct {
	Name    string
	in      [4]int
	out, dx Tensor
}

// NewFlatten makes a flatten layer.
func NewFlatten(name string) *Flatten { return &Flatten{Name: name} }

// Forward reshapes x; the result shares x's data.
func (l *Flatten) Forward(x *Tensor) (*Tensor, error) {
	if err := check("flatten", l.Name, "input", x); err != nil {
		return nil, err
	}
	l.in = x.Shape()
	l.out = Tensor{N: x.N, C: x.C * x.H * x.W, H: 1, W: 1, Data: x.Data}
	return &l.out, nil
}

// Backward reshapes dy back; the result shares dy's data.
func (l *Flatten) Backward(dy *Tensor) (*Tensor, error) {
	if err := sameShape("flatten", l.Name, dy, &l.out); err != nil {
		return nil, err
	}
	l.dx = Tensor{N: l.in[0], C: l.in[1], H: l.in[2], W: l.in[3], Data: dy.Data}
	return &l.dx, nil
}

// Params returns nil.
func (l *Flatten) Params() []Param { return nil }

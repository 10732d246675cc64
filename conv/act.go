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
	out := l.out.Data
	for i, v := range x.Data {
		if v > 0 {
			out[i] = v
		} else if v != v {
			out[i] = v // NaN propagates
		} else {
			out[i] = 0
		}
	}
	return &l.out, nil
}

// Backward passes dy where the output was positive.
func (l *ReLU) Backward(dy *Tensor) (*Tensor, error) {
	if err := sameShape("relu", l.Name, dy, &l.out); err != nil {
		return nil, err
	}
	l.dx.resize(dy.N, dy.C, dy.H, dy.W)
	dx, y := l.dx.Data, l.out.Data
	for i, g := range dy.Data {
		if y[i] > 0 {
			dx[i] = g
		} else {
			dx[i] = 0
		}
	}
	return &l.dx, nil
}

// Params returns nil.
func (l *ReLU) Params() []Param { return nil }

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

package conv

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
)

// DenseConfig describes a fully connected layer y = W·x + b.
type DenseConfig struct {
	Name    string
	In, Out int
	// Samples is the number of weight samples evaluated together (0 means 1).
	Samples       int
	SkipInputGrad bool
	Options
}

// Dense is a fully connected layer over N×(C·H·W) inputs (any input is
// flattened). With S samples Weight is [S][Out][In], Bias [S][Out] and the
// output N×(S·Out)×1×1. An input of In features per row is shared by the
// samples (one GEMM against the S·Out stacked rows); an input of S·In
// features gives sample s the features [s·In, (s+1)·In).
type Dense struct {
	Name                 string
	In, Out, S           int
	Weight, Bias         []float64
	GradWeight, GradBias []float64 // set by Backward (overwritten)
	SkipInputGrad        bool
	blas                 blas.Float64
	x                    *Tensor
	out, dx              Tensor
}

// NewDense validates the configuration. The weights start at zero.
func NewDense(cfg DenseConfig) (*Dense, error) {
	if cfg.Samples == 0 {
		cfg.Samples = 1
	}
	if cfg.In < 1 || cfg.Out < 1 || cfg.Samples < 1 {
		return nil,
			fmt.Errorf("dense %q: in %d, out %d, samples %d: all must be ≥ 1", cfg.Name, cfg.In, cfg.Out, cfg.Samples)
	}
	opt, err := cfg.Options.resolve()
	if err != nil {
		return nil, fmt.Errorf("dense %q: %w", cfg.Name, err)
	}
	nw := cfg.Samples * cfg.Out * cfg.In
	return &Dense{Name: cfg.Name, In: cfg.In, Out: cfg.Out, S: cfg.Samples, SkipInputGrad: cfg.SkipInputGrad,
		Weight: make([]float64, nw), GradWeight: make([]float64, nw),
		Bias: make([]float64, cfg.Samples*cfg.Out), GradBias: make([]float64, cfg.Samples*cfg.Out),
		blas: opt.BLAS}, nil
}

// Forward computes W·x + b for every row of x.
func (l *Dense) Forward(x *Tensor) (*Tensor, error) {
	if err := check("dense", l.Name, "input", x); err != nil {
		return nil, err
	}
	f := x.C * x.H * x.W
	if f != l.In && f != l.S*l.In {
		want := fmt.Sprintf("N×%d features", l.In)
		if l.S > 1 {
			want += fmt.Sprintf(" (shared by the %d samples) or N×%d (one slice per sample)", l.S, l.S*l.In)
		}
		return nil, shapeError("dense", l.Name, "input", x.Shape(), want)
	}
	l.x = x
	n, in, o, S := x.N, l.In, l.Out, l.S
	l.out.resize(n, S*o, 1, 1)
	y := l.out.Data
	for i := 0; i < n; i++ {
		copy(y[i*S*o:(i+1)*S*o], l.Bias)
	}
	if f == in {
		l.blas.Dgemm(blas.NoTrans, blas.Trans, n, S*o, in, 1, x.Data, in, l.Weight, in, 1, y, S*o)
	} else {
		for s := 0; s < S; s++ {
			l.blas.Dgemm(blas.NoTrans, blas.Trans, n, o, in, 1, x.Data[s*in:], S*in, l.Weight[s*o*in:], in, 1, y[s*o:],
				S*o)
		}
	}
	return &l.out, nil
}

// Backward sets GradWeight and GradBias and returns the input gradient
// (nil with SkipInputGrad), shaped like the last input.
func (l *Dense) Backward(dy *Tensor) (*Tensor, error) {
	if err := sameShape("dense", l.Name, dy, &l.out); err != nil {
		return nil, err
	}
	x := l.x
	n, in, o, S := x.N, l.In, l.Out, l.S
	f := x.C * x.H * x.W
	g := dy.Data
	clear(l.GradBias)
	for i := 0; i < n; i++ {
		for j, v := range g[i*S*o : (i+1)*S*o] {
			l.GradBias[j] += v
		}
	}
	if f == in {
		l.blas.Dgemm(blas.Trans, blas.NoTrans, S*o, in, n, 1, g, S*o, x.Data, in, 0, l.GradWeight, in)
	} else {
		for s := 0; s < S; s++ {
			l.blas.Dgemm(blas.Trans, blas.NoTrans, o, in, n, 1, g[s*o:], S*o, x.Data[s*in:], S*in, 0,
				l.GradWeight[s*o*in:], in)
		}
	}
	if l.SkipInputGrad {
		return nil, nil
	}
	l.dx.resize(x.N, x.C, x.H, x.W)
	if f == in {
		l.blas.Dgemm(blas.NoTrans, blas.NoTrans, n, in, S*o, 1, g, S*o, l.Weight, in, 0, l.dx.Data, in)
	} else {
		for s := 0; s < S; s++ {
			l.blas.Dgemm(blas.NoTrans, blas.NoTrans, n, in, o, 1, g[s*o:], S*o, l.Weight[s*o*in:], in, 0,
				l.dx.Data[s*in:], S*in)
		}
	}
	return &l.dx, nil
}

// Params returns the weights and biases with their gradients.
func (l *Dense) Params() []Param {
	return []Param{
		{Name: l.Name + ".weight", Value: l.Weight, Grad: l.GradWeight, Samples: l.S},
		{Name: l.Name + ".bias", Value: l.Bias, Grad: l.GradBias, Samples: l.S},
	}
}

package conv

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
)

// Conv2DConfig describes a 2-D convolution layer.
type Conv2DConfig struct {
	Name                 string
	InChannels, InH, InW int // input image: channels and size (per weight sample)
	OutChannels          int
	KernelH, KernelW     int
	Stride               int // 0 means 1
	Pad                  int // zero padding on every side
	// Samples is the number of weight samples evaluated together (0 means 1).
	Samples int
	// SkipInputGrad makes Backward compute only the weight and bias
	// gradients (a network's first layer needs no input gradient).
	SkipInputGrad bool
	Options
}

// Conv2D is a 2-D convolution with bias, computed as im2col and a GEMM per
// group of images (small images are grouped side by side so that one GEMM
// spans at least groupColumns output positions), parallel over the batch,
// every worker with its own single-threaded BLAS and workspace.
//
// With S samples, Weight holds S filter banks [S][C_out][C_in][KH][KW] and
// Bias [S][C_out]; the output has S·C_out channels. An input with C_in
// channels is shared by the samples: its im2col is built once and multiplied
// by all S·C_out filters in one GEMM. An input with S·C_in channels gives
// sample s the channels [s·C_in, (s+1)·C_in).
type Conv2D struct {
	Name                 string
	Cin, H, W, Cout, S   int
	KH, KW, Stride, Pad  int
	OH, OW               int
	Weight, Bias         []float64
	GradWeight, GradBias []float64 // set by Backward (overwritten, not accumulated)
	SkipInputGrad        bool
	geom                 geom // im2col geometry of one sample's C_in input channels
	k, p                 int  // GEMM sizes: K = C_in·KH·KW, P = OH·OW
	opt                  Options
	split                *splitter
	ws                   []convWorker
	x, dy                *Tensor
	out, dx              Tensor
	fwdFn, bwdFn         func(worker, lo, hi int)
	group                int  // images per worker GEMM
	solo                 bool // one worker this call: it may use the multithreaded BLAS
}

type convWorker struct {
	blas      blas.Float64
	col, dcol []float64 // K × (group·P): one sample's patches
	tmp       []float64 // (S·C_out) × (group·P): a group's outputs or output gradients
	gw, gb    []float64
}

// groupColumns is how many output positions a worker's GEMM should span at
// least: small images are grouped until their columns reach it, so that
// each GEMM call amortises its packing of the weights over more work (and
// the weight gradient's inner dimension grows the same way). Measured on
// the paper's conv2 (8×8 outputs): see BenchmarkConv2Group.
var groupColumns = 256

// NewConv2D validates the configuration and sizes the layer's workspaces.
// The weights start at zero.
func NewConv2D(cfg Conv2DConfig) (*Conv2D, error) {
	if cfg.Stride == 0 {
		cfg.Stride = 1
	}
	if cfg.Samples == 0 {
		cfg.Samples = 1
	}
	name := cfg.Name
	switch {
	case cfg.InChannels < 1 || cfg.OutChannels < 1 || cfg.InH < 1 || cfg.InW < 1:
		return nil, fmt.Errorf("conv2d %q: channels and input size must be ≥ 1 (in %d×%d×%d, out %d)", name,
			cfg.InChannels, cfg.InH, cfg.InW, cfg.OutChannels)
	case cfg.KernelH < 1 || cfg.KernelW < 1 || cfg.Stride < 1 || cfg.Pad < 0 || cfg.Samples < 1:
		return nil, fmt.Errorf("conv2d %q: kernel %d×%d, stride %d, pad %d, samples %d: kernel, stride and samples "+
			"must be ≥ 1, pad ≥ 0", name, cfg.KernelH, cfg.KernelW, cfg.Stride, cfg.Pad, cfg.Samples)
	case cfg.KernelH > cfg.InH+2*cfg.Pad || cfg.KernelW > cfg.InW+2*cfg.Pad:
		return nil, fmt.Errorf("conv2d %q: kernel %d×%d larger than the padded input %d×%d", name, cfg.KernelH,
			cfg.KernelW, cfg.InH+2*cfg.Pad, cfg.InW+2*cfg.Pad)
	}
	opt, err := cfg.Options.resolve()
	if err != nil {
		return nil, fmt.Errorf("conv2d %q: %w", name, err)
	}
	l := &Conv2D{Name: name, Cin: cfg.InChannels, H: cfg.InH, W: cfg.InW, Cout: cfg.OutChannels, S: cfg.Samples,
		KH: cfg.KernelH, KW: cfg.KernelW, Stride: cfg.Stride, Pad: cfg.Pad, SkipInputGrad: cfg.SkipInputGrad, opt: opt}
	l.geom = newGeom(l.Cin, l.H, l.W, l.KH, l.KW, l.Stride, l.Pad)
	l.OH, l.OW = l.geom.OH, l.geom.OW
	l.k, l.p = l.Cin*l.KH*l.KW, l.OH*l.OW
	nw := l.S * l.Cout * l.k
	l.Weight, l.GradWeight = make([]float64, nw), make([]float64, nw)
	l.Bias, l.GradBias = make([]float64, l.S*l.Cout), make([]float64, l.S*l.Cout)
	l.split = newSplitter(opt.Workers)
	l.group = max(1, groupColumns/l.p)
	l.ws = make([]convWorker, opt.Workers)
	cols := l.group * l.p
	for i := range l.ws {
		l.ws[i] = convWorker{blas: opt.WorkerBLAS(),
			col: make([]float64, l.k*cols), dcol: make([]float64, l.k*cols),
			gw: make([]float64, nw), gb: make([]float64, l.S*l.Cout)}
		if l.group > 1 {
			l.ws[i].tmp = make([]float64, l.S*l.Cout*cols)
		}
	}
	l.fwdFn, l.bwdFn = l.forwardChunk, l.backwardChunk
	return l, nil
}

// isShared reports whether x (already validated) is shared by all samples.
func (l *Conv2D) isShared(x *Tensor) bool { return x.C == l.Cin }

func (l *Conv2D) checkInput(x *Tensor) error {
	if err := check("conv2d", l.Name, "input", x); err != nil {
		return err
	}
	if (x.C != l.Cin && x.C != l.S*l.Cin) || x.H != l.H || x.W != l.W {
		want := fmt.Sprint([4]int{x.N, l.Cin, l.H, l.W})
		if l.S > 1 {
			want += fmt.Sprintf(" (shared by the %d samples) or %v (one slice per sample)", l.S,
				[4]int{x.N, l.S * l.Cin, l.H, l.W})
		}
		return shapeError("conv2d", l.Name, "input", x.Shape(), want)
	}
	return nil
}

// Forward computes the convolution of x. The result is owned by the layer
// and valid until its next Forward; x must stay unchanged until Backward.
func (l *Conv2D) Forward(x *Tensor) (*Tensor, error) {
	if err := l.checkInput(x); err != nil {
		return nil, err
	}
	l.x = x
	l.out.resize(x.N, l.S*l.Cout, l.OH, l.OW)
	l.solo = l.split.workers(x.N) == 1
	l.split.run(x.N, l.fwdFn)
	return &l.out, nil
}

// passes returns how the samples split into GEMMs: one pass over all
// S·C_out filters for a shared input, else one pass of C_out filters per
// sample, each on its own slice of the input channels (so the im2col buffer
// holds one sample's patches and stays small).
func (l *Conv2D) passes(shared bool) (n, rows int) {
	if shared {
		return 1, l.S * l.Cout
	}
	return l.S, l.Cout
}

// workerBLAS is the BLAS a worker uses this call.
func (l *Conv2D) workerBLAS(w *convWorker) blas.Float64 {
	if l.solo {
		// A batch too small to split (one image, or GOMAXPROCS 1)
		// gets its parallelism from the BLAS instead.
		return l.opt.BLAS
	}
	return w.blas
}

func (l *Conv2D) forwardChunk(worker, lo, hi int) {
	w := &l.ws[worker]
	bl := l.workerBLAS(w)
	x := l.x
	inSize, sliceSize := x.C*x.H*x.W, l.Cin*l.H*l.W
	outSize := l.S * l.Cout * l.p
	passes, rows := l.passes(l.isShared(x))
	k, p, m := l.k, l.p, l.Cout
	for n0 := lo; n0 < hi; n0 += l.group {
		gn := min(l.group, hi-n0)
		ld := gn * p
		// One image writes straight into the output; a group goes
		// through tmp, whose columns hold the images side by side.
		dst := w.tmp
		if gn == 1 {
			dst = l.out.Data[n0*outSize : (n0+1)*outSize]
		}
		for s := 0; s < passes; s++ {
			for i := 0; i < gn; i++ {
				off := (n0+i)*inSize + s*sliceSize
				l.geom.im2col(x.Data[off:off+sliceSize], w.col[i*p:], ld)
			}
			bl.Dgemm(blas.NoTrans, blas.NoTrans, rows, ld, k, 1, l.Weight[s*m*k:], k, w.col, ld, 0, dst[s*m*ld:], ld)
		}
		for i := 0; i < gn; i++ {
			out := l.out.Data[(n0+i)*outSize : (n0+i+1)*outSize]
			for r, b := range l.Bias {
				row := out[r*p : (r+1)*p]
				if gn == 1 {
					for j := range row {
						row[j] += b
					}
					continue
				}
				for j, v := range w.tmp[r*ld+i*p : r*ld+(i+1)*p] {
					row[j] = v + b
				}
			}
		}
	}
}

// Backward takes the gradient of the loss with respect to the last output
// and sets GradWeight and GradBias; it returns the gradient with respect to
// the input (nil with SkipInputGrad), owned by the layer.
func (l *Conv2D) Backward(dy *Tensor) (*Tensor, error) {
	if err := sameShape("conv2d", l.Name, dy, &l.out); err != nil {
		return nil, err
	}
	l.dy = dy
	if !l.SkipInputGrad {
		l.dx.resize(l.x.N, l.x.C, l.x.H, l.x.W)
	}
	l.solo = l.split.workers(dy.N) == 1
	nw := l.split.run(dy.N, l.bwdFn)
	copy(l.GradWeight, l.ws[0].gw)
	copy(l.GradBias, l.ws[0].gb)
	for i := 1; i < nw; i++ {
		for j, v := range l.ws[i].gw {
			l.GradWeight[j] += v
		}
		for j, v := range l.ws[i].gb {
			l.GradBias[j] += v
		}
	}
	if l.SkipInputGrad {
		return nil, nil
	}
	return &l.dx, nil
}

func (l *Conv2D) backwardChunk(worker, lo, hi int) {
	w := &l.ws[worker]
	bl := l.workerBLAS(w)
	clear(w.gw)
	clear(w.gb)
	x := l.x
	inSize, sliceSize := x.C*x.H*x.W, l.Cin*l.H*l.W
	allRows := l.S * l.Cout
	outSize := allRows * l.p
	passes, rows := l.passes(l.isShared(x))
	k, p, m := l.k, l.p, l.Cout
	for n0 := lo; n0 < hi; n0 += l.group {
		gn := min(l.group, hi-n0)
		ld := gn * p
		// The output gradients of the group, side by side like the columns.
		dy := l.dy.Data[n0*outSize : (n0+1)*outSize]
		if gn > 1 {
			dy = w.tmp[:allRows*ld]
			for i := 0; i < gn; i++ {
				src := l.dy.Data[(n0+i)*outSize : (n0+i+1)*outSize]
				for r := 0; r < allRows; r++ {
					copy(dy[r*ld+i*p:r*ld+(i+1)*p], src[r*p:(r+1)*p])
				}
			}
		}
		for r := range w.gb {
			sum := 0.0
			for _, v := range dy[r*ld : (r+1)*ld] {
				sum += v
			}
			w.gb[r] += sum
		}
		for s := 0; s < passes; s++ {
			for i := 0; i < gn; i++ {
				off := (n0+i)*inSize + s*sliceSize
				l.geom.im2col(x.Data[off:off+sliceSize], w.col[i*p:], ld)
			}
			bl.Dgemm(blas.NoTrans, blas.Trans, rows, k, ld, 1, dy[s*m*ld:], ld, w.col, ld, 1, w.gw[s*m*k:], k)
			if l.SkipInputGrad {
				continue
			}
			bl.Dgemm(blas.Trans, blas.NoTrans, k, ld, rows, 1, l.Weight[s*m*k:], k, dy[s*m*ld:], ld, 0, w.dcol, ld)
			for i := 0; i < gn; i++ {
				off := (n0+i)*inSize + s*sliceSize
				dx := l.dx.Data[off : off+sliceSize]
				clear(dx)
				l.geom.col2im(w.dcol[i*p:], dx, ld)
			}
		}
	}
}

// Params returns the weights and biases with their gradients.
func (l *Conv2D) Params() []Param {
	return []Param{
		{Name: l.Name + ".weight", Value: l.Weight, Grad: l.GradWeight, Samples: l.S},
		{Name: l.Name + ".bias", Value: l.Bias, Grad: l.GradBias, Samples: l.S},
	}
}

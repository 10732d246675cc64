package lml

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"

	"github.com/pacpfl/pacpfl/conv"
)

// DefaultBNNSamples is L, the weight samples of the LML estimate (38) during
// training (our choice, docs/math.md §10; PACOH-NN uses 10).
const DefaultBNNSamples = 5

// BNNEstimator evaluates the Monte Carlo LML estimate (38) of one prior P_φ
// on a batch and its reparameterised gradient (docs/math.md §5.2):
//
//	ln Z̃ = LSE_j(s_j) − ln L,  s_j = scale · Σ_i ln p(y_i | x_i, θ_j),
//	θ_j = μ + e^{ω/2} ∘ ε_j,  ε_j ~ N(0, I),  j = 1..L,
//	∇_μ ln Z̃ = Σ_j w_j g_j,  ∇_ω ln Z̃ = Σ_j w_j g_j ∘ ε_j ∘ ½e^{ω/2},
//
// with w = softmax(s) and g_j = ∇_θ s_j at θ_j; scale = m_i/b gives
// Algorithm 2's β = m_i on a mini-batch of b of the m_i samples. The L
// samples run stacked through one network (one im2col and one GEMM over
// L·C_out filters in the BCNN's first layer, one GEMM over L·H stacked rows
// in the MLP's), and the elementwise work (noise, θ_j, the gradient sums)
// runs in parallel over fixed segments of θ, each with its own noise stream
// seeded from the caller's generator: the noise depends on the seed only,
// not on the number of workers. After the first call with the largest batch
// an estimator allocates nothing. It is not safe for concurrent use.
type BNNEstimator struct {
	model BNN
	L, nw int
	nn    *bnnNet

	std     []float64 // e^{ω/2} of the current φ
	eps     []float64 // L×|θ|, sample j at [j·|θ|, (j+1)·|θ|)
	s, coef []float64 // L

	segs  []noiseSegment
	split *conv.Splitter
	segFn func(worker, lo, hi int)
	// The pass segFn runs, and its arguments.
	mode      estMode
	draw      bool
	phi, grad []float64
}

type estMode int

const (
	estPrepare    estMode = iota // σ = e^{ω/2}; ε (if draw); θ_j into the network
	estAccumulate                // gradient sums into grad
)

// noiseSegment is θ[lo, hi) (inside one weight block b) with its noise stream.
type noiseSegment struct {
	b, lo, hi int // block; offsets in θ
	boff      int // offset of block b in θ
	src       *rand.PCG
	rng       *rand.Rand
}

// noiseSegmentLen bounds a segment: small enough to balance the cores, large
// enough that the per-segment overhead is nil.
const noiseSegmentLen = 8192

// NewBNNEstimator returns an estimator of L weight samples for model; opt
// chooses the BLAS and the workers of the network and of the elementwise
// passes (use Workers 1 and single-threaded BLASes when several estimators
// run concurrently).
func NewBNNEstimator(model BNN, L int, opt conv.Options) (*BNNEstimator, error) {
	nn, err := newBNNNet(model, L, opt)
	if err != nil {
		return nil, err
	}
	e := &BNNEstimator{model: nn.model, L: L, nw: nn.nw, nn: nn,
		std: make([]float64, nn.nw), eps: make([]float64, L*nn.nw), s: make([]float64, L), coef: make([]float64, L)}
	e.split = conv.NewSplitter(defaultWorkers(opt.Workers))
	off := 0
	for b, sz := range nn.sizes {
		for lo := 0; lo < sz; lo += noiseSegmentLen {
			src := rand.NewPCG(0, 0)
			e.segs = append(e.segs, noiseSegment{b: b, lo: off + lo, hi: off + min(lo+noiseSegmentLen, sz), boff: off,
				src: src, rng: rand.New(src)})
		}
		off += sz
	}
	e.segFn = e.segments
	return e, nil
}

// Model returns the (defaulted) model.
func (e *BNNEstimator) Model() BNN { return e.model }

// Samples returns L.
func (e *BNNEstimator) Samples() int { return e.L }

// Noise returns the L×|θ| standard-normal draws ε of the last call (a view,
// overwritten by the next call).
func (e *BNNEstimator) Noise() []float64 { return e.eps }

// LML draws fresh noise ε (seeded from rng) and returns the estimate (38) of
// ln Z^C for the prior φ (dφ = 2|θ|) on the batch X (m×D), y (m labels 0..C−1
// as float64) with s_j = scale·Σ_i ln p(y_i | x_i, θ_j); if grad is not nil
// (length dφ) it receives the gradient with respect to φ (overwritten).
func (e *BNNEstimator) LML(phi, X, y []float64, scale float64, rng *rand.Rand, grad []float64) (float64, error) {
	if err := e.check(phi, grad, scale); err != nil {
		return 0, err
	}
	for i := range e.segs {
		e.segs[i].src.Seed(rng.Uint64(), rng.Uint64())
	}
	return e.eval(phi, X, y, scale, true, grad)
}

// LMLWithNoise is LML with the given noise eps (L×|θ|, sample-major) instead
// of fresh draws: with eps fixed the estimate is a deterministic, smooth
// (almost everywhere) function of φ.
func (e *BNNEstimator) LMLWithNoise(phi, X, y []float64, scale float64, eps, grad []float64) (float64, error) {
	if err := e.check(phi, grad, scale); err != nil {
		return 0, err
	}
	if len(eps) != len(e.eps) {
		return 0, fmt.Errorf("bnn: noise has %d values, want L×|θ| = %d×%d = %d", len(eps), e.L, e.nw, len(e.eps))
	}
	copy(e.eps, eps)
	return e.eval(phi, X, y, scale, false, grad)
}

func (e *BNNEstimator) check(phi, grad []float64, scale float64) error {
	if len(phi) != 2*e.nw {
		return fmt.Errorf("bnn: φ has %d values, want dφ = 2|θ| = %d", len(phi), 2*e.nw)
	}
	if grad != nil && len(grad) != 2*e.nw {
		return fmt.Errorf("bnn: gradient buffer has %d values, want dφ = %d", len(grad), 2*e.nw)
	}
	if !(scale > 0) || math.IsInf(scale, 0) {
		return fmt.Errorf("bnn: scale %v must be positive and finite", scale)
	}
	return nil
}

func (e *BNNEstimator) eval(phi, X, y []float64, scale float64, draw bool, grad []float64) (float64, error) {
	if err := e.nn.load(X, y); err != nil {
		return 0, err
	}
	e.phi, e.draw = phi, draw
	defer func() { e.phi, e.grad = nil, nil }()
	e.pass(estPrepare)
	if err := e.nn.forward(Loss{}); err != nil {
		return 0, err
	}
	for j, v := range e.nn.ll {
		e.s[j] = scale * v
	}
	lse := logSumExp(e.s)
	if math.IsNaN(lse) || math.IsInf(lse, 0) {
		return 0, fmt.Errorf("bnn: LML estimate is %v", lse)
	}
	if grad == nil {
		return lse - math.Log(float64(e.L)), nil
	}
	for j, v := range e.s {
		e.coef[j] = scale * math.Exp(v-lse) // scale·w_j
	}
	if err := e.nn.backward(e.coef); err != nil {
		return 0, err
	}
	e.grad = grad
	e.pass(estAccumulate)
	return lse - math.Log(float64(e.L)), nil
}

func (e *BNNEstimator) pass(m estMode) {
	e.mode = m
	e.split.Run(len(e.segs), e.segFn)
}

// segments runs the current pass over segments [lo, hi).
func (e *BNNEstimator) segments(_, lo, hi int) {
	nw, L := e.nw, e.L
	for k := lo; k < hi; k++ {
		sg := &e.segs[k]
		p := e.nn.params[sg.b]
		sz := e.nn.sizes[sg.b]
		a, b := sg.lo-sg.boff, sg.hi-sg.boff // offsets inside the block
		std := e.std[sg.lo:sg.hi]
		switch e.mode {
		case estPrepare:
			mu, omega := e.phi[sg.lo:sg.hi], e.phi[nw+sg.lo:nw+sg.hi]
			for i, w := range omega {
				std[i] = math.Exp(0.5 * w)
			}
			for j := range L {
				eps := e.eps[j*nw+sg.lo : j*nw+sg.hi]
				if e.draw {
					for i := range eps {
						eps[i] = sg.rng.NormFloat64()
					}
				}
				th := p.Value[j*sz+a : j*sz+b]
				for i := range th {
					th[i] = mu[i] + std[i]*eps[i]
				}
			}
		case estAccumulate:
			gm, gw := e.grad[sg.lo:sg.hi], e.grad[nw+sg.lo:nw+sg.hi]
			clear(gm)
			clear(gw)
			for j := range L {
				eps := e.eps[j*nw+sg.lo : j*nw+sg.hi]
				g := p.Grad[j*sz+a : j*sz+b]
				for i, v := range g {
					gm[i] += v
					gw[i] += v * eps[i]
				}
			}
			for i := range gw {
				gw[i] *= 0.5 * std[i]
			}
		}
	}
}

// defaultWorkers resolves Options.Workers as conv does (≤ 0: GOMAXPROCS).
func defaultWorkers(w int) int {
	if w > 0 {
		return w
	}
	return runtime.GOMAXPROCS(0)
}

// logSumExp is ln Σ exp(x_j), stably (−Inf for an empty slice).
func logSumExp(x []float64) float64 {
	mx := math.Inf(-1)
	for _, v := range x {
		if math.IsNaN(v) {
			return math.NaN()
		}
		mx = math.Max(mx, v)
	}
	if math.IsInf(mx, 0) {
		return mx
	}
	s := 0.0
	for _, v := range x {
		s += math.Exp(v - mx)
	}
	return mx + math.Log(s)
}

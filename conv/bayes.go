package conv

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Bayes evaluates the reparameterised Monte Carlo estimate of the expected
// loss of a mean-field Gaussian posterior over the network's weights,
// w = μ + softplus(ρ)·ε with ε ~ N(0, I), and its gradients to μ and ρ.
//
// Stacked, the S weight samples go through one network built with
// Samples = S (shared im2col in the first layer, S-fold wider GEMMs);
// separate, one single-sample network runs S times. Both give the same
// numbers for the same ε.
//
// The elementwise work (noise, σ, the samples, the gradient sums) runs in
// parallel over fixed segments of the parameters, each with its own noise
// stream seeded from the caller's generator: the noise depends on the seed
// only, not on the number of cores.
type Bayes struct {
	Net     *Net
	S       int
	Stacked bool
	// Mu, Rho and their gradients hold one entry per network parameter,
	// each one sample long.
	Mu, Rho, GradMu, GradRho [][]float64
	// Eps holds the noise of the last Step per parameter, S samples one
	// after another.
	Eps [][]float64

	params     []Param
	sigma, dsp [][]float64 // softplus(ρ) and its derivative sigmoid(ρ)
	segs       []bayesSegment
	split      *splitter
	segFn      func(worker, lo, hi int)
	// The pass segFn runs, and its arguments.
	mode         bayesMode
	draw         bool
	first, count int
	scale        float64
}

type bayesMode int

const (
	modePrepare    bayesMode = iota // draw ε (if draw), compute σ, σ'; stacked: write all samples
	modeWrite                       // write sample first into the single-sample network
	modeAccumulate                  // add the gradients of samples [first, first+count)
	modeFinish                      // apply σ' to GradRho
)

// bayesSegment is a slice [lo, hi) of parameter j with its noise stream.
type bayesSegment struct {
	j, lo, hi int
	src       *rand.PCG
	rng       *rand.Rand
}

// segmentLen bounds a segment: small enough to balance two or more cores,
// large enough that the per-segment overhead is nil.
const segmentLen = 8192

// NewBayes builds the network for S samples, stacked or separate, with
// μ = 0 and ρ = 0 (the caller initialises them).
func NewBayes(cfg BCNNConfig, samples int, stacked bool) (*Bayes, error) {
	if samples < 1 {
		return nil, fmt.Errorf("bayes: %d weight samples, want ≥ 1", samples)
	}
	cfg.Samples = 1
	if stacked {
		cfg.Samples = samples
	}
	net, err := NewBCNN(cfg)
	if err != nil {
		return nil, err
	}
	opt, err := cfg.Options.resolve()
	if err != nil {
		return nil, err
	}
	b := &Bayes{Net: net, S: samples, Stacked: stacked, params: net.Params(), split: newSplitter(opt.Workers)}
	for j, p := range b.params {
		size := len(p.Value) / p.Samples
		b.Mu = append(b.Mu, make([]float64, size))
		b.Rho = append(b.Rho, make([]float64, size))
		b.GradMu = append(b.GradMu, make([]float64, size))
		b.GradRho = append(b.GradRho, make([]float64, size))
		b.Eps = append(b.Eps, make([]float64, samples*size))
		b.sigma = append(b.sigma, make([]float64, size))
		b.dsp = append(b.dsp, make([]float64, size))
		for lo := 0; lo < size; lo += segmentLen {
			src := rand.NewPCG(0, 0)
			b.segs = append(b.segs,
				bayesSegment{j: j, lo: lo, hi: min(lo+segmentLen, size), src: src, rng: rand.New(src)})
		}
	}
	b.segFn = b.segments
	return b, nil
}

// Step draws fresh noise (seeded from rng) into Eps and evaluates.
func (b *Bayes) Step(x *Tensor, labels []int, rng *rand.Rand) (float64, error) {
	for i := range b.segs {
		b.segs[i].src.Seed(rng.Uint64(), rng.Uint64())
	}
	return b.evaluate(x, labels, true)
}

// Evaluate returns the loss averaged over the S samples in Eps and sets
// GradMu and GradRho.
func (b *Bayes) Evaluate(x *Tensor, labels []int) (float64, error) {
	return b.evaluate(x, labels, false)
}

func (b *Bayes) evaluate(x *Tensor, labels []int, draw bool) (float64, error) {
	b.draw = draw
	b.pass(modePrepare)
	if b.Stacked {
		loss, err := b.forwardBackward(x, labels)
		if err != nil {
			return 0, err
		}
		b.first, b.count, b.scale = 0, b.S, 1
		b.pass(modeAccumulate)
		b.pass(modeFinish)
		return loss, nil
	}
	total := 0.0
	for s := 0; s < b.S; s++ {
		b.first = s
		b.pass(modeWrite)
		loss, err := b.forwardBackward(x, labels)
		if err != nil {
			return 0, err
		}
		b.first, b.count, b.scale = s, 1, 1/float64(b.S)
		b.pass(modeAccumulate)
		total += loss
	}
	b.pass(modeFinish)
	return total / float64(b.S), nil
}

func (b *Bayes) forwardBackward(x *Tensor, labels []int) (float64, error) {
	loss, err := b.Net.Forward(x, labels)
	if err != nil {
		return 0, err
	}
	return loss, b.Net.Backward()
}

func (b *Bayes) pass(m bayesMode) {
	b.mode = m
	b.split.run(len(b.segs), b.segFn)
}

// segments runs the current pass over segments [lo, hi).
func (b *Bayes) segments(_, lo, hi int) {
	for k := lo; k < hi; k++ {
		sg := &b.segs[k]
		j := sg.j
		size := len(b.Mu[j])
		mu, sigma, dsp := b.Mu[j][sg.lo:sg.hi], b.sigma[j][sg.lo:sg.hi], b.dsp[j][sg.lo:sg.hi]
		value, grad, eps := b.params[j].Value, b.params[j].Grad, b.Eps[j]
		switch b.mode {
		case modePrepare:
			for i, r := range b.Rho[j][sg.lo:sg.hi] {
				sigma[i], dsp[i] = softplusAndSigmoid(r)
			}
			for s := 0; s < b.S; s++ {
				e := eps[s*size+sg.lo : s*size+sg.hi]
				if b.draw {
					for i := range e {
						e[i] = sg.rng.NormFloat64()
					}
				}
				if b.Stacked {
					w := value[s*size+sg.lo : s*size+sg.hi]
					for i := range w {
						w[i] = mu[i] + sigma[i]*e[i]
					}
				}
			}
		case modeWrite:
			e := eps[b.first*size+sg.lo : b.first*size+sg.hi]
			w := value[sg.lo:sg.hi]
			for i := range w {
				w[i] = mu[i] + sigma[i]*e[i]
			}
		case modeAccumulate:
			gm, gr := b.GradMu[j][sg.lo:sg.hi], b.GradRho[j][sg.lo:sg.hi]
			if b.first == 0 {
				clear(gm)
				clear(gr)
			}
			for c := 0; c < b.count; c++ {
				s := b.first + c
				e := eps[s*size+sg.lo : s*size+sg.hi]
				g := grad[c*size+sg.lo : c*size+sg.hi]
				for i, v := range g {
					v *= b.scale
					gm[i] += v
					gr[i] += v * e[i]
				}
			}
		case modeFinish:
			gr := b.GradRho[j][sg.lo:sg.hi]
			for i := range gr {
				gr[i] *= dsp[i]
			}
		}
	}
}

// softplusAndSigmoid returns ln(1 + eᵘ) and its derivative 1/(1 + e⁻ᵘ)
// from one exponential, without overflow.
func softplusAndSigmoid(u float64) (sp, sig float64) {
	if u > 0 {
		e := math.Exp(-u)
		return u + math.Log1p(e), 1 / (1 + e)
	}
	e := math.Exp(u)
	return math.Log1p(e), e / (1 + e)
}

func softplus(u float64) float64 { sp, _ := softplusAndSigmoid(u); return sp }

func sigmoid(u float64) float64 { _, s := softplusAndSigmoid(u); return s }

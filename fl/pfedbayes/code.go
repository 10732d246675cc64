package pfedbayes

import (
	"fmt"
	"math"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl/internal/meanfield"
)

// Variant is what a client computes: the paper's printed algorithm or what
// the authors' public code computes (docs/math.md, "pFedBayes as the
// authors' code computes it").
type Variant int

const (
	// Paper is (pFB-27)/(pFB-28) and Algorithm 1 as printed: the data term
	// scaled by n/b, ζ·KL, one personalised and one localised global step
	// per local iteration, g ~ N(0, I), minibatches drawn afresh.
	Paper Variant = iota
	// Code is the authors' UserpFedBayes: the personalised loss
	// (ζ/R)·KL − Σ_{j∈Λ} ln p (likelihood summed over the batch),
	// PersonalSteps personalised steps on the same batch before each
	// localised global step on (ζ/R)·KL, the KL's σ taken where their code
	// last computed it, draws g ~ N(0, NoiseStd²), the client's rows in a
	// fixed order cycled batch by batch, only the S selected clients
	// training and the server averaging them weighted by their sizes.
	Code
)

// ParseVariant reads "paper" or "code".
func ParseVariant(s string) (Variant, error) {
	switch s {
	case "paper":
		return Paper, nil
	case "code":
		return Code, nil
	}
	return Paper, fmt.Errorf("pfedbayes: unknown variant %q (paper or code)", s)
}

func (v Variant) String() string {
	if v == Code {
		return "code"
	}
	return "paper"
}

// CodeOptions are the settings of the authors' public code (its main.py
// and pBNN defaults): Adam with lr 0.001 on both models, ρ⁰ = −3, μ⁰ ~
// N(0, 0.1²), ζ = 10, b = 100, R = 20 local iterations of 5 personalised
// steps each, draws of standard deviation 0.001, 10 clients per round, β =
// 1, and its evaluation: one weight draw (of standard deviation 0.001) per
// model. T = 800 and the evaluated rounds 700–800 are the paper's.
func CodeOptions() Options {
	o := DefaultOptions()
	o.Variant, o.Optimizer = Code, Adam
	o.Rho0, o.PersonalSteps, o.NoiseStd, o.EvalDraws = -3, 5, 0.001, 1
	return o
}

// batchCursor walks a client's training rows in their fixed order, b at a
// time, the last batch of a pass holding what is left (a PyTorch DataLoader
// without shuffling, as the authors' get_next_train_batch); it is kept
// across rounds.
type batchCursor struct{ next int }

// batch returns the next batch of client c (d features per row).
func (bc *batchCursor) batch(c *data.ClientData, d, b int) (x, y []float64) {
	n := c.M()
	if bc.next >= n {
		bc.next = 0
	}
	lo := bc.next
	hi := min(lo+b, n)
	bc.next = hi
	return c.X[lo*d : hi*d], c.Y[lo:hi]
}

// adamConsts are PyTorch's Adam factors of one step: the step size η/(1 −
// β₁ᵗ) and 1/√(1 − β₂ᵗ), so that the update is η/(1 − β₁ᵗ) · m / (√s ·
// 1/√(1 − β₂ᵗ) + ε) (torch.optim.Adam's form, with the division by
// √(1 − β₂ᵗ) as a product).
func (a *adamState) consts(eta float64) (step, isc2 float64) {
	c1, c2 := a.next()
	return eta / c1, 1 / math.Sqrt(c2)
}

// adamTorch updates the moments m, s with gradient g and returns the step
// of adamConsts.
func adamTorch(m, s *float64, g, step, isc2 float64) float64 {
	*m = adamB1**m + (1-adamB1)*g
	*s = adamB2**s + (1-adamB2)*g*g
	return step * *m / (math.Sqrt(*s)*isc2 + adamEps)
}

// beginCode is begin for the Code variant: it also keeps 1/σ_w² of the
// σ_w the personalised KL reads.
func (w *worker) beginCode(vi, vw []float64) {
	w.begin(vi, vw)
	for j, s := range w.sigW {
		w.iw2[j] = 1 / (s * s)
	}
}

// codeStep is one local iteration of the Code variant on the batch (x, y):
// o.PersonalSteps Adam (or SGD) steps of v_i on
//
//	(ζ/R) KL(q_{v_i} ‖ w_{v_w}) − Σ_{j∈Λ} ln p(y_j | x_j, μ_i + σ_i ⊙ g),  g ~ N(0, NoiseStd² I),
//
// each with a fresh draw and σ_i = softplus(ρ_i) at its start, the KL's σ_w
// the one of the last localised global step's start (of the round's start
// for the first); then one step of v_w on (ζ/R) KL(q ‖ w_{v_w}) at the
// current μ_i and the σ_i of the last personalised step's start (the
// authors' code reads personal_model.sigmas, set before that step's
// update). It returns the last personalised step's mean cross-entropy.
//
// On entry w.sigQ, w.dsigQ are σ_i, σ′_i of the current ρ_i and w.iw2 is
// 1/σ_w² of the σ_w above; each update refreshes them block by block (the
// last personalised step leaves σ_i as it was for the global step, which
// refreshes it).
func (w *worker) codeStep(x, y []float64, o *Options) (float64, error) {
	m := float64(len(y))
	kw := o.Zeta / float64(o.LocalSteps)
	s := o.NoiseStd
	eta1, eta2 := o.LR1, o.LR2
	nw := len(w.muQ)
	adam := w.adamQ != nil
	var loss float64
	for p := 0; p < o.PersonalSteps; p++ {
		last := p == o.PersonalSteps-1
		for j, mu := range w.muQ {
			e := s * w.nrm.Norm()
			w.eps[j] = e
			w.theta[j] = mu + w.sigQ[j]*e
		}
		l, err := w.net.LossGrad(w.theta, x, y, w.grad)
		if err != nil {
			return 0, fmt.Errorf("pfedbayes: %w: the weights diverged (η₁ = %g, η₂ = %g)", err, o.LR1, o.LR2)
		}
		if math.IsNaN(l) || math.IsInf(l, 0) {
			return 0,
				fmt.Errorf("pfedbayes: the client loss is %v: the weights diverged (η₁ = %g, η₂ = %g)", l, o.LR1, o.LR2)
		}
		loss = l
		var step, isc2 float64
		if adam {
			step, isc2 = w.adamQ.consts(eta1)
		}
		for lo := 0; lo < nw; lo += meanfield.SoftplusBlock {
			hi := min(lo+meanfield.SoftplusBlock, nw)
			muQ, rhoQ, sigQ, dsigQ := w.muQ[lo:hi], w.rhoQ[lo:hi], w.sigQ[lo:hi], w.dsigQ[lo:hi]
			muW, iw2, grad, eps := w.muW[lo:hi], w.iw2[lo:hi], w.grad[lo:hi], w.eps[lo:hi]
			for j, mq := range muQ {
				sq := sigQ[j]
				gd := m * grad[j] // the summed likelihood's gradient: m × the mean's
				gm := gd + kw*(mq-muW[j])*iw2[j]
				gr := (gd*eps[j] + kw*(sq*iw2[j]-1/sq)) * dsigQ[j]
				if adam {
					a := w.adamQ
					muQ[j] = mq - adamTorch(&a.m[lo+j], &a.s[lo+j], gm, step, isc2)
					rhoQ[j] -= adamTorch(&a.m[nw+lo+j], &a.s[nw+lo+j], gr, step, isc2)
					continue
				}
				muQ[j] = mq - eta1*gm
				rhoQ[j] -= eta1 * gr
			}
			if !last {
				meanfield.SoftplusVec(sigQ, dsigQ, rhoQ, w.buf)
			}
		}
	}
	// The localised global step: σ_w fresh, σ_i that of the last
	// personalised step's start (still in w.sigQ), μ_i the current one.
	var step, isc2 float64
	if adam {
		step, isc2 = w.adamW.consts(eta2)
	}
	for lo := 0; lo < nw; lo += meanfield.SoftplusBlock {
		hi := min(lo+meanfield.SoftplusBlock, nw)
		muQ, rhoQ, sigQ, dsigQ := w.muQ[lo:hi], w.rhoQ[lo:hi], w.sigQ[lo:hi], w.dsigQ[lo:hi]
		muW, rhoW, sigW, dsigW, iw2 := w.muW[lo:hi], w.rhoW[lo:hi], w.sigW[lo:hi], w.dsigW[lo:hi], w.iw2[lo:hi]
		meanfield.SoftplusVec(sigW, dsigW, rhoW, w.buf)
		for j, mw := range muW {
			sw, sq := sigW[j], sigQ[j]
			i2 := 1 / (sw * sw)
			iw2[j] = i2 // the σ_w of the next personalised steps
			d := muQ[j] - mw
			gm := kw * (-d * i2)
			gr := kw * ((1 - (sq*sq+d*d)*i2) / sw) * dsigW[j]
			if adam {
				a := w.adamW
				muW[j] = mw - adamTorch(&a.m[lo+j], &a.s[lo+j], gm, step, isc2)
				rhoW[j] -= adamTorch(&a.m[nw+lo+j], &a.s[nw+lo+j], gr, step, isc2)
				continue
			}
			muW[j] = mw - eta2*gm
			rhoW[j] -= eta2 * gr
		}
		meanfield.SoftplusVec(sigQ, dsigQ, rhoQ, w.buf) // σ_i of the current ρ_i for the next iteration
	}
	return loss, nil
}

// WithVariantDefaults returns o with the settings of its Variant where the
// caller did not choose them: for Code, CodeOptions' PersonalSteps and
// NoiseStd, and its Rho0, Optimizer and EvalDraws unless chosen reports
// that field (by its Go name) as the caller's; the Paper variant's o is
// returned as is. A command line can so select the authors' code and still
// override some of its settings.
func (o Options) WithVariantDefaults(chosen func(field string) bool) Options {
	if o.Variant != Code {
		return o
	}
	c := CodeOptions()
	o.PersonalSteps, o.NoiseStd = c.PersonalSteps, c.NoiseStd
	if !chosen("Rho0") {
		o.Rho0 = c.Rho0
	}
	if !chosen("Optimizer") {
		o.Optimizer = c.Optimizer
	}
	if !chosen("EvalDraws") {
		o.EvalDraws = c.EvalDraws
	}
	return o
}

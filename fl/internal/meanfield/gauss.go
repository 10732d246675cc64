// Package meanfield is the arithmetic of mean-field (diagonal) Gaussian
// distributions over the weights of a network, q = N(μ, diag σ²) with σ =
// softplus(ρ) = ln(1 + e^ρ), shared by the Bayesian federated methods
// (GenFL, pFedBayes):
//
//	Softplus, InvSoftplus, SoftplusVec   σ = ln(1 + e^ρ), σ′ = sigmoid(ρ), ρ from σ
//	KL                                  KL(q‖w) between two diagonal Gaussians (pFB-8)
//	KLGrad                              its gradients to μ_q, ρ_q, μ_w, ρ_w
//	Normals, Log1pPos                   the fast normal draws and ln(1 + x) of the hot loops
//
// The reparameterisation θ = μ + σ ⊙ g, g ~ N(0, I), and the chain rule
// through it are the callers' (each fuses them into its own step).
package meanfield

import (
	"math"

	"github.com/pacpfl/pacpfl/asm"
)

// Softplus is ln(1 + e^u) and its derivative sigmoid(u), without overflow.
func Softplus(u float64) (sp, sig float64) {
	if u > 0 {
		e := math.Exp(-u)
		return u + math.Log1p(e), 1 / (1 + e)
	}
	e := math.Exp(u)
	return math.Log1p(e), e / (1 + e)
}

// InvSoftplus is ρ with softplus(ρ) = σ > 0.
func InvSoftplus(sigma float64) float64 {
	if sigma > 30 {
		return sigma + math.Log(-math.Expm1(-sigma))
	}
	return math.Log(math.Expm1(sigma))
}

// SoftplusBlock is the block length of SoftplusVec's scratch.
const SoftplusBlock = 512

// SoftplusVec sets sigma[j] = softplus(rho[j]) and dsig[j] = sigmoid(rho[j])
// (equal lengths): e^ρ from the SIMD exponential in blocks of SoftplusBlock
// through buf (at least that long), ln(1 + e^ρ) from Log1pPos, σ = ρ and σ′
// = 1 above ρ = 36 (exact to double precision). It does not allocate.
func SoftplusVec(sigma, dsig, rho, buf []float64) {
	_ = sigma[len(rho)-1]
	_ = dsig[len(rho)-1]
	for lo := 0; lo < len(rho); lo += SoftplusBlock {
		hi := min(lo+SoftplusBlock, len(rho))
		r := rho[lo:hi]
		ex := buf[:len(r)]
		asm.Exp(ex, r)
		s, ds := sigma[lo:hi], dsig[lo:hi]
		for j, u := range r {
			if u > 36 {
				s[j], ds[j] = u, 1
				continue
			}
			s[j] = Log1pPos(ex[j])
			ds[j] = ex[j] / (1 + ex[j])
		}
	}
}

// KL is KL(q‖w) = ½ Σ_m [ln(σ_w²/σ_q²) + (σ_q² + (μ_q − μ_w)²)/σ_w² − 1]
// (pFB-8) for q = N(muQ, softplus(rhoQ)²) and w = N(muW, softplus(rhoW)²),
// all four of one length.
func KL(muQ, rhoQ, muW, rhoW []float64) float64 {
	kl := 0.0
	for m, mq := range muQ {
		sq, _ := Softplus(rhoQ[m])
		sw, _ := Softplus(rhoW[m])
		d := mq - muW[m]
		kl += 2*math.Log(sw/sq) + (sq*sq+d*d)/(sw*sw) - 1
	}
	return kl / 2
}

// KLTerm is one weight's KL gradients (docs/math.md §8.1): with d = μ_q − μ_w,
//
//	∂/∂μ_q = d/σ_w²,  ∂/∂σ_q = −1/σ_q + σ_q/σ_w²,
//	∂/∂μ_w = −d/σ_w², ∂/∂σ_w = 1/σ_w − (σ_q² + d²)/σ_w³;
//
// the gradients to ρ are those to σ times sigmoid(ρ).
func KLTerm(muQ, sigQ, muW, sigW float64) (dMuQ, dSigQ, dMuW, dSigW float64) {
	d := muQ - muW
	iw2 := 1 / (sigW * sigW)
	dMuQ = d * iw2
	dSigQ = sigQ*iw2 - 1/sigQ
	dMuW = -dMuQ
	dSigW = (1 - (sigQ*sigQ+d*d)*iw2) / sigW
	return
}

// KLGrad adds scale times the gradients of KL(q‖w) to gMuQ, gRhoQ, gMuW
// and gRhoW (each nil to skip it), for q and w as in KL.
func KLGrad(muQ, rhoQ, muW, rhoW []float64, scale float64, gMuQ, gRhoQ, gMuW, gRhoW []float64) {
	for m, mq := range muQ {
		sq, dq := Softplus(rhoQ[m])
		sw, dw := Softplus(rhoW[m])
		a, b, c, e := KLTerm(mq, sq, muW[m], sw)
		if gMuQ != nil {
			gMuQ[m] += scale * a
		}
		if gRhoQ != nil {
			gRhoQ[m] += scale * b * dq
		}
		if gMuW != nil {
			gMuW[m] += scale * c
		}
		if gRhoW != nil {
			gRhoW[m] += scale * e * dw
		}
	}
}

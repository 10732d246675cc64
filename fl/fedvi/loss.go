package fedvi

import (
	"fmt"
	"math"

	"github.com/pacpfl/pacpfl/conv"
)

// Loss is the client objective of one mini-batch and its parts:
// Total = CE + τ·KL/n_q, CE the mean −log-likelihood of the query labels.
type Loss struct {
	Total, CE, KL float64
}

// shape makes t an n×c×h×w tensor, reusing its storage when large enough.
func shape(t *conv.Tensor, n, c, h, w int) {
	size := n * c * h * w
	if cap(t.Data) < size {
		t.Data = make([]float64, size)
	}
	t.N, t.C, t.H, t.W, t.Data = n, c, h, w, t.Data[:size]
}

// constructPosterior runs P on the rows of m.pooled and sets μ, ρ,
// σ = softplus(ρ) and the bias from the mean of P's output rows:
// (μ_k, σ_k) ← P_θ”(R^g_{k,s}). m.pooled holds one row, the support set's
// mean global features, or with Arch.PoolOutputs one row per support image.
func (m *Model) constructPosterior() error {
	h, err := m.runP()
	if err != nil {
		return err
	}
	m.setPosterior(h.Data, h.N)
	return nil
}

// runP is P's forward pass on the rows of m.pooled.
func (m *Model) runP() (*conv.Tensor, error) {
	h, err := m.p1.Forward(&m.pooled)
	if err != nil {
		return nil, err
	}
	for _, l := range []conv.Layer{m.prelu1, m.p2, m.prelu2, m.p3} {
		if h, err = l.Forward(h); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// setPosterior sets μ, ρ, σ and the bias from the mean of the rows of
// out, rows rows of P's (2·d_l + 1)·|Y| outputs.
func (m *Model) setPosterior(out []float64, rows int) {
	p := &m.post
	k := len(p.mu)
	w := 2*k + len(p.bias)
	clear(p.mu)
	clear(p.rho)
	clear(p.bias)
	for r := 0; r < rows; r++ {
		h := out[r*w : (r+1)*w]
		for i, v := range h[:k] {
			p.mu[i] += v
		}
		for i, v := range h[k : 2*k] {
			p.rho[i] += v
		}
		for i, v := range h[2*k:] {
			p.bias[i] += v
		}
	}
	if rows > 1 {
		for _, s := range [][]float64{p.mu, p.rho, p.bias} {
			for i := range s {
				s[i] /= float64(rows)
			}
		}
	}
	for i, r := range p.rho {
		p.sigma[i] = softplus(r)
	}
}

// sampleBeta sets β = μ + σ ⊙ ε: β_k ~ N(μ_k, σ_k).
func (p *posterior) sampleBeta(eps []float64) {
	for i := range p.beta {
		p.beta[i] = p.mu[i] + p.sigma[i]*eps[i]
	}
}

// kl is KL(N(μ, σ²) ‖ N(0, σ_r²)) summed over the d_l·C weights:
// Σ [ln σ_r − ln σ + (σ² + μ²)/(2σ_r²) − ½].
func (p *posterior) kl(priorVar float64) float64 {
	s := 0.0
	half := 0.5 * math.Log(priorVar)
	for i, mu := range p.mu {
		sg := p.sigma[i]
		s += half - logSoftplus(p.rho[i]) + (sg*sg+mu*mu)/(2*priorVar) - 0.5
	}
	return s
}

// localLogits adds L_β(R^l) = R^l βᵀ + b to the n×C logits, for the n
// rows of local features rl (n×d_l).
func (m *Model) localLogits(logits, rl, beta []float64, n int) {
	dl, C := m.A.Local(), m.A.Classes
	for i := 0; i < n; i++ {
		f := rl[i*dl : (i+1)*dl]
		row := logits[i*C : (i+1)*C]
		for c := range row {
			b := beta[c*dl : (c+1)*dl]
			s := m.post.bias[c]
			for j, v := range f {
				s += v * b[j]
			}
			row[c] += s
		}
	}
}

// LossGrad evaluates the client loss on one mini-batch and sets every
// parameter gradient (Grad reads them): the B images x with labels y, the
// first ns the support set D_{k,s} and the rest the query set D_{k,q}:
//
//	R_s, R_q ← E(x_s), E(x_q);  (R^g, R^l) ← split after d_g features
//	(μ, σ, b) ← P(mean of R^g_s);  β = μ + σ ⊙ eps
//	logits ← G(R^g_q) + R^l_q βᵀ + b
//	loss ← mean_q −ln softmax(logits)_y + τ·KL(N(μ, σ²) ‖ r)/n_q
//
// eps holds the d_l·|Y| standard normals of the draw. Dropout is in
// whatever mode setTrain left it (training for client updates).
func (m *Model) LossGrad(x *conv.Tensor, y []int, ns int, eps []float64, tau float64) (Loss, error) {
	a := m.A
	d, dg, dl, C := a.Embed, a.Global, a.Local(), a.Classes
	B := x.N
	nq := B - ns
	switch {
	case len(y) != B:
		return Loss{}, fmt.Errorf("fedvi: %d labels for %d images", len(y), B)
	case ns < 1 || nq < 1:
		return Loss{}, fmt.Errorf(
			"fedvi: a mini-batch of %d images split %d support / %d query: both need at least one", B, ns, nq)
	case len(eps) != dl*C:
		return Loss{}, fmt.Errorf("fedvi: %d standard normals for %d local weights", len(eps), dl*C)
	}
	for _, l := range y {
		if l < 0 || l >= C {
			return Loss{}, fmt.Errorf("fedvi: label %d is not a class 0..%d", l, C-1)
		}
	}
	R, err := m.embed(x)
	if err != nil {
		return Loss{}, err
	}
	r := R.Data
	// P on the mean global features of the support set, or on each
	// support image's global features with its outputs averaged.
	if a.PoolOutputs {
		shape(&m.pooled, ns, dg, 1, 1)
		for i := 0; i < ns; i++ {
			copy(m.pooled.Data[i*dg:(i+1)*dg], r[i*d:i*d+dg])
		}
	} else {
		shape(&m.pooled, 1, dg, 1, 1)
		pool := m.pooled.Data
		clear(pool)
		for i := 0; i < ns; i++ {
			for j, v := range r[i*d : i*d+dg] {
				pool[j] += v
			}
		}
		for j := range pool {
			pool[j] /= float64(ns)
		}
	}
	if err := m.constructPosterior(); err != nil {
		return Loss{}, err
	}
	p := &m.post
	copy(p.eps, eps)
	p.sampleBeta(eps)
	// Query features, split.
	shape(&m.qg, nq, dg, 1, 1)
	m.ql = grow(m.ql, nq*dl)
	for i := 0; i < nq; i++ {
		row := r[(ns+i)*d : (ns+i+1)*d]
		copy(m.qg.Data[i*dg:(i+1)*dg], row[:dg])
		copy(m.ql[i*dl:(i+1)*dl], row[dg:])
	}
	og, err := m.g.Forward(&m.qg)
	if err != nil {
		return Loss{}, err
	}
	m.logits = grow(m.logits, nq*C)
	copy(m.logits, og.Data)
	m.localLogits(m.logits, m.ql, p.beta, nq)
	// Softmax cross-entropy, mean over the query; dlogits = (softmax − 1_y)/n_q.
	shape(&m.dLogits, nq, C, 1, 1)
	ce := 0.0
	for i := 0; i < nq; i++ {
		z := m.logits[i*C : (i+1)*C]
		g := m.dLogits.Data[i*C : (i+1)*C]
		mx := z[0]
		for _, v := range z[1:] {
			mx = math.Max(mx, v)
		}
		s := 0.0
		for c, v := range z {
			g[c] = math.Exp(v - mx)
			s += g[c]
		}
		ce += mx + math.Log(s) - z[y[ns+i]]
		for c := range g {
			g[c] /= s * float64(nq)
		}
		g[y[ns+i]] -= 1 / float64(nq)
	}
	ce /= float64(nq)
	kl := p.kl(m.priorVar)
	loss := Loss{CE: ce, KL: kl, Total: ce + tau*kl/float64(nq)}
	if math.IsNaN(loss.Total) || math.IsInf(loss.Total, 0) {
		return loss,
			fmt.Errorf("fedvi: the loss is %v (cross-entropy %v, KL %v): the weights diverged", loss.Total, ce, kl)
	}

	// Backward. G:
	dqg, err := m.g.Backward(&m.dLogits)
	if err != nil {
		return Loss{}, err
	}
	// L_β: dβ = dlogitsᵀ R^l, db = Σ_i dlogits, dR^l = dlogits β.
	k := dl * C
	np := m.pooled.N // P's input rows: 1, or ns with PoolOutputs
	shape(&m.dOut, np, 2*k+C, 1, 1)
	dOut := m.dOut.Data
	clear(dOut)
	dMu, dRho, dBias := dOut[:k], dOut[k:2*k], dOut[2*k:2*k+C]
	shape(&m.dR, B, d, 1, 1)
	dr := m.dR.Data
	for i := 0; i < nq; i++ {
		gi := m.dLogits.Data[i*C : (i+1)*C]
		f := m.ql[i*dl : (i+1)*dl]
		drl := dr[(ns+i)*d+dg : (ns+i+1)*d]
		clear(drl)
		for c, gc := range gi {
			dBias[c] += gc
			b := p.beta[c*dl : (c+1)*dl]
			db := dMu[c*dl : (c+1)*dl] // dβ, turned into dμ below
			for j, v := range f {
				db[j] += gc * v
				drl[j] += gc * b[j]
			}
		}
		copy(dr[(ns+i)*d:(ns+i)*d+dg], dqg.Data[i*dg:(i+1)*dg])
	}
	// Through β = μ + σ ⊙ ε, σ = softplus(ρ), and the τ·KL/n_q term:
	// ∂KL/∂μ = μ/σ_r², ∂KL/∂ρ = (σ/σ_r²)·σ'(ρ) − ∂ln σ/∂ρ.
	w := tau / float64(nq)
	for i, dbeta := range dMu {
		rho := p.rho[i]
		sp := sigmoid(rho)
		dlogSigma := 1.0 // ∂ ln softplus(ρ)/∂ρ = sigmoid(ρ)/softplus(ρ) → 1 as ρ → −∞
		if rho >= -30 {
			dlogSigma = sp / p.sigma[i]
		}
		dMu[i] = dbeta + w*p.mu[i]/m.priorVar
		dRho[i] = dbeta*p.eps[i]*sp + w*(p.sigma[i]/m.priorVar*sp-dlogSigma)
	}
	// Every row of P's output enters the mean with weight 1/np.
	if np > 1 {
		g := dOut[:2*k+C]
		for j := range g {
			g[j] /= float64(np)
		}
		for i := 1; i < np; i++ {
			copy(dOut[i*(2*k+C):(i+1)*(2*k+C)], g)
		}
	}
	// P, back to its input, the pooled support features.
	dh, err := m.p3.Backward(&m.dOut)
	if err != nil {
		return Loss{}, err
	}
	for _, l := range []conv.Layer{m.prelu2, m.p2, m.prelu1, m.p1} {
		if dh, err = l.Backward(dh); err != nil {
			return Loss{}, err
		}
	}
	for i := 0; i < ns; i++ {
		row := dr[i*d : (i+1)*d]
		if np > 1 {
			copy(row[:dg], dh.Data[i*dg:(i+1)*dg])
		} else {
			for j, v := range dh.Data {
				row[j] = v / float64(ns)
			}
		}
		clear(row[dg:]) // the support's local features are not used
	}
	// E.
	if err := m.backward(&m.dR); err != nil {
		return Loss{}, err
	}
	return loss, nil
}

// grow returns s with length n, reusing its storage when large enough.
func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

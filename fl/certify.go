package fl

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/pacpfl/pacpfl/data"
)

// Certificates for the trained hyper-posterior on a bounded loss people
// read (docs/math.md §2.18): a joint two-level kl (Seeger/Maurer) bound
// over all the samples of the clients it covers, with a hyper-prior that
// may be learned on other clients, and a test-set (Langford) bound for the
// deployed predictor.

// ClippedSquare is the loss min((y − ŷ)², c)/c ∈ [0, 1].
func ClippedSquare(y, yhat, c float64) float64 {
	d := y - yhat
	return math.Min(d*d, c) / c
}

// ExpectedClippedSquare is E min(Z², c)/c for Z ∼ N(mu, s2), in closed
// form (docs/math.md §2.18.1): the expected clipped squared error of a
// Gaussian prediction f(x) ∼ N(y − mu, s2) of the target y. s2 ≥ 0, c > 0.
func ExpectedClippedSquare(mu, s2, c float64) float64 {
	if !(s2 > 0) {
		return math.Min(mu*mu, c) / c
	}
	s := math.Sqrt(s2)
	r := math.Sqrt(c)
	a, b := (-r-mu)/s, (r-mu)/s
	pa, pb := normPDF(a), normPDF(b)
	inside := normCDFDiff(a, b) // P(a ≤ U ≤ b)
	e := mu*mu*inside + 2*mu*s*(pa-pb) + s2*(inside+a*pa-b*pb)
	e += c * (1 - inside)
	return math.Min(math.Max(e/c, 0), 1)
}

func normPDF(x float64) float64 { return math.Exp(-0.5*x*x) / math.Sqrt(2*math.Pi) }

// normCDFDiff is Φ(b) − Φ(a) for a ≤ b, from the tail on the side where
// both lie, so that no digits cancel.
func normCDFDiff(a, b float64) float64 {
	if a > 0 {
		return 0.5 * (math.Erfc(a/math.Sqrt2) - math.Erfc(b/math.Sqrt2))
	}
	if b < 0 {
		return 0.5 * (math.Erfc(-b/math.Sqrt2) - math.Erfc(-a/math.Sqrt2))
	}
	return 0.5 * (math.Erf(b/math.Sqrt2) - math.Erf(a/math.Sqrt2))
}

// EmpiricalBernsteinUpper is Maurer and Pontil's (2009, Theorem 4) upper
// confidence bound on the mean of i.i.d. [0, 1]-valued xs: with
// probability ≥ 1 − delta, E X ≤ x̄ + √(2V ln(2/δ)/T) + 7 ln(2/δ)/(3(T−1)),
// V the unbiased sample variance; capped at 1. Needs T ≥ 2.
func EmpiricalBernsteinUpper(xs []float64, delta float64) (float64, error) {
	T := len(xs)
	if T < 2 {
		return 0, fmt.Errorf("%w: empirical Bernstein needs ≥ 2 draws, got %d", ErrKLDomain, T)
	}
	if !(delta > 0 && delta < 1) {
		return 0, fmt.Errorf("%w: δ = %v must lie in (0, 1)", ErrKLDomain, delta)
	}
	mean := 0.0
	for _, x := range xs {
		if !(x >= 0 && x <= 1) {
			return 0, fmt.Errorf("%w: draw %v outside [0, 1]", ErrKLDomain, x)
		}
		mean += x
	}
	mean /= float64(T)
	v := 0.0
	for _, x := range xs {
		v += (x - mean) * (x - mean)
	}
	v /= float64(T - 1)
	l := math.Log(2 / delta)
	u := mean + math.Sqrt(2*v*l/float64(T)) + 7*l/(3*float64(T-1))
	return math.Min(u, 1), nil
}

// TestSetBound is Langford's (2005) test-set bound in its kl form: for n
// independent [0, 1]-valued losses with mean mean, each with expectation
// at most the risk R in question (or averaging to it), with probability
// ≥ 1 − delta, R ≤ kl⁻¹(mean, ln(1/δ)/n).
func TestSetBound(mean float64, n int, delta float64) (float64, error) {
	if n < 1 {
		return 0, fmt.Errorf("%w: test-set bound needs n ≥ 1, got %d", ErrKLDomain, n)
	}
	if !(delta > 0 && delta < 1) {
		return 0, fmt.Errorf("%w: δ = %v must lie in (0, 1)", ErrKLDomain, delta)
	}
	if err := checkRisk(mean); err != nil {
		return 0, err
	}
	return KLInverse(mean, math.Log(1/delta)/float64(n))
}

// CertTerms are one client's terms at one prior P and one posterior
// temperature: LossSum = Σ_j E_{h∼Q_i(P)} ℓ(h, z_j) over its m_i samples
// (each term in [0, 1]), KL = KL(Q_i(P)‖P), and PriorLossSum the same sum
// for h ∼ P itself (the fallback posterior, KL 0).
type CertTerms struct {
	LossSum, KL, PriorLossSum float64
}

// CertEvalFunc evaluates client i (an index into the bound's sample) at
// the prior with parameters phi, its posterior at temperature scale
// β/m_i = scale. It is called concurrently.
type CertEvalFunc func(phi []float64, i int, scale float64) (CertTerms, error)

// GaussianMixture is the uniform mixture (1/k) Σ_κ N(Centers_κ, Std² I)
// over parameter vectors of dimension Dim (Centers k×Dim, row-major).
type GaussianMixture struct {
	Centers []float64
	K, Dim  int
	Std     float64
}

func (g GaussianMixture) validate() error {
	if g.K < 1 || g.Dim < 1 || len(g.Centers) != g.K*g.Dim {
		return fmt.Errorf("certify: %d centre values for %d components of dimension %d", len(g.Centers), g.K, g.Dim)
	}
	if !(g.Std > 0) || math.IsInf(g.Std, 0) {
		return fmt.Errorf("certify: component std %v must be positive and finite", g.Std)
	}
	return nil
}

// MixtureKLUpper is an upper bound on KL(q‖p) for two uniform Gaussian
// mixtures with the same number of components (docs/math.md §2.18.3): the
// smaller of the best pairing bound min_π (1/k) Σ_κ KL(q_κ‖p_π(κ)) (joint
// convexity) and (1/k) Σ_κ min_l KL(q_κ‖p_l) + ln k (p ≥ p_l/k).
func MixtureKLUpper(q, p GaussianMixture) (float64, error) {
	if err := q.validate(); err != nil {
		return 0, err
	}
	if err := p.validate(); err != nil {
		return 0, err
	}
	if q.K != p.K || q.Dim != p.Dim {
		return 0, fmt.Errorf("certify: mixtures of %d×%d and %d×%d components", q.K, q.Dim, p.K, p.Dim)
	}
	k, d := q.K, q.Dim
	r := q.Std / p.Std
	base := 0.5 * float64(d) * (r*r - 1 - 2*math.Log(r))
	kl := make([]float64, k*k)
	for a := 0; a < k; a++ {
		for b := 0; b < k; b++ {
			s := 0.0
			for i := 0; i < d; i++ {
				x := q.Centers[a*d+i] - p.Centers[b*d+i]
				s += x * x
			}
			kl[a*k+b] = base + s/(2*p.Std*p.Std)
		}
	}
	best := math.Inf(1)
	if k <= 8 {
		perm := make([]int, k)
		for i := range perm {
			perm[i] = i
		}
		permute(perm, 0, func(pm []int) {
			s := 0.0
			for a, b := range pm {
				s += kl[a*k+b]
			}
			best = math.Min(best, s/float64(k))
		})
	}
	s := 0.0
	for a := 0; a < k; a++ {
		s += slices.Min(kl[a*k : (a+1)*k])
	}
	best = math.Min(best, s/float64(k)+math.Log(float64(k)))
	return best, nil
}

func permute(p []int, i int, f func([]int)) {
	if i == len(p) {
		f(p)
		return
	}
	for j := i; j < len(p); j++ {
		p[i], p[j] = p[j], p[i]
		permute(p, i+1, f)
		p[i], p[j] = p[j], p[i]
	}
}

// CertifyOptions configure Certify.
type CertifyOptions struct {
	// Delta is the total δ: the certificate holds with probability
	// ≥ 1 − Delta over the samples of the clients in the bound and the
	// Monte Carlo draws. 0 means 0.05. Half goes to the PAC-Bayes bound,
	// a quarter to each Monte Carlo term.
	Delta float64
	// Widths are the candidate stds of the hyper-posterior's components
	// (absolute, per coordinate); PriorWidths those of the hyper-prior's.
	// Scales are the candidate posterior temperatures β/m_i. The best
	// combination is reported; the prior widths pay a union bound.
	Widths, PriorWidths, Scales []float64
	// Draws is the number T of i.i.d. draws from the hyper-posterior per
	// width that choose the grid point (0: 400); FinalDraws the number of
	// fresh draws that bound the chosen point (0: 4·Draws).
	Draws, FinalDraws int
	Seed              uint64
}

// Certificate is the two-level kl bound of docs/math.md §2.18.2 with its
// terms: with probability ≥ 1 − Delta, the average over the N samples of
// the covered clients of their personalised posteriors' true risk (the
// m_i-weighted mean of the clients' risks) is at most Bound.
type Certificate struct {
	Bound float64 `json:"bound"`
	// Loss is the Monte Carlo mean of the empirical loss, LossUpper its
	// empirical-Bernstein upper bound.
	Loss      float64 `json:"empirical_loss"`
	LossUpper float64 `json:"empirical_loss_upper"`
	// HyperKL bounds KL(𝒬‖𝒫); ClientKL is the Monte Carlo mean of
	// Σ_i KL(Q_i(P)‖P), ClientKLUpper its upper bound.
	HyperKL       float64 `json:"hyper_kl"`
	ClientKL      float64 `json:"client_kl"`
	ClientKLUpper float64 `json:"client_kl_upper"`
	// LogTerm is ln(2√N·G_𝒫/δ_PB), G_𝒫 the number of prior widths;
	// Complexity = (HyperKL + ClientKLUpper +
	// LogTerm)/N; Bound = kl⁻¹(LossUpper, Complexity).
	LogTerm    float64 `json:"log_term"`
	Complexity float64 `json:"complexity"`
	N          int     `json:"samples"`
	Clients    int     `json:"clients"`
	// The chosen grid point and the grid size G.
	Width      float64 `json:"width"`
	PriorWidth float64 `json:"prior_width"`
	Scale      float64 `json:"scale"`
	Grid       int     `json:"grid"`
	Draws      int     `json:"draws"`
	// KLCap is the cap on Σ_i KL beyond which a draw falls back to the
	// priors; Fallbacks counts the final draws that did. Draws is the
	// number of final draws.
	KLCap     float64 `json:"kl_cap"`
	Fallbacks int     `json:"fallbacks"`
	Delta     float64 `json:"delta"`
}

// Certify evaluates the bound of docs/math.md §2.18.2 for the hyper-
// posterior q (its Std replaced by each of o.Widths) against the hyper-
// prior p (Std from o.PriorWidths), which must not depend on the samples
// of the clients eval covers; m[i] is client i's sample count. eval is
// called for i < len(m) only.
func Certify(q, p GaussianMixture, m []int, eval CertEvalFunc, o CertifyOptions) (Certificate, error) {
	delta := o.Delta
	if delta == 0 {
		delta = 0.05
	}
	if !(delta > 0 && delta < 1) {
		return Certificate{}, fmt.Errorf("certify: δ = %v must lie in (0, 1)", delta)
	}
	T := o.Draws
	if T == 0 {
		T = 400
	}
	if T < 2 {
		return Certificate{}, fmt.Errorf("certify: %d draws: want ≥ 2", T)
	}
	if len(o.Widths) == 0 || len(o.PriorWidths) == 0 || len(o.Scales) == 0 {
		return Certificate{}, errors.New("certify: empty width, prior width or temperature grid")
	}
	for _, v := range slices.Concat(o.Widths, o.PriorWidths, o.Scales) {
		if !(v > 0) || math.IsInf(v, 0) {
			return Certificate{}, fmt.Errorf("certify: grid value %v must be positive and finite", v)
		}
	}
	N := 0
	for i, mi := range m {
		if mi < 1 {
			return Certificate{}, fmt.Errorf("certify: client %d has %d samples", i, mi)
		}
		N += mi
	}
	if N < 8 {
		return Certificate{}, fmt.Errorf("certify: %d samples in all; Maurer's bound needs ≥ 8", N)
	}
	q.Std, p.Std = o.Widths[0], o.PriorWidths[0]
	if err := q.validate(); err != nil {
		return Certificate{}, err
	}
	if err := p.validate(); err != nil {
		return Certificate{}, err
	}
	G := len(o.Widths) * len(o.PriorWidths) * len(o.Scales)
	dPB, dMC := delta/2, delta/4
	// The PAC-Bayes bound holds for every posterior at once: only the
	// hyper-prior's grid pays a union bound there.
	logTerm := math.Log(2 * math.Sqrt(float64(N)) * float64(len(o.PriorWidths)) / dPB)
	finalT := o.FinalDraws
	if finalT == 0 {
		finalT = 4 * T
	}
	if finalT < 2 {
		return Certificate{}, fmt.Errorf("certify: %d final draws: want ≥ 2", finalT)
	}
	// Stage 1 chooses the grid point on its own draws; stage 2 bounds it
	// on fresh draws, so the Monte Carlo terms pay no union bound.
	best := Certificate{Bound: math.Inf(1)}
	caps, err := klCaps(q, m, eval, o.Scales)
	if err != nil {
		return Certificate{}, err
	}
	for wi, w := range o.Widths {
		q.Std = w
		d, err := drawTerms(q, m, N, eval, o.Scales, caps, T, o.Seed, 0, uint64(wi))
		if err != nil {
			return Certificate{}, err
		}
		for si, sc := range o.Scales {
			for _, pw := range o.PriorWidths {
				p.Std = pw
				c, err := d.certificate(si, q, p, dMC, logTerm, N)
				if err != nil {
					return Certificate{}, err
				}
				if c.Bound < best.Bound {
					best = c
					best.Scale, best.KLCap = sc, caps[si]
				}
			}
		}
	}
	q.Std, p.Std = best.Width, best.PriorWidth
	wi := slices.Index(o.Widths, best.Width)
	d, err := drawTerms(q, m, N, eval, []float64{best.Scale}, []float64{best.KLCap}, finalT, o.Seed, 1, uint64(wi))
	if err != nil {
		return Certificate{}, err
	}
	c, err := d.certificate(0, q, p, dMC, logTerm, N)
	if err != nil {
		return Certificate{}, err
	}
	c.Scale, c.KLCap = best.Scale, best.KLCap
	c.Clients, c.Grid, c.Delta = len(m), G, delta
	return c, nil
}

// klCaps are the caps on Σ_i KL per temperature, fixed from the centres
// of q before any draw: twice the largest centre's sum, plus 10 nats.
func klCaps(q GaussianMixture, m []int, eval CertEvalFunc, scales []float64) ([]float64, error) {
	caps := make([]float64, len(scales))
	for si, sc := range scales {
		for κ := 0; κ < q.K; κ++ {
			t, err := sumTerms(q.Centers[κ*q.Dim:(κ+1)*q.Dim], m, eval, sc)
			if err != nil {
				return nil, err
			}
			caps[si] = math.Max(caps[si], 2*t.KL+10)
		}
	}
	return caps, nil
}

// draws are the per-draw terms at each temperature: losses in [0, 1] (per
// sample), KL sums divided by their cap, and the number of fallbacks.
type draws struct {
	losses, kls [][]float64
	falls       []int
	caps        []float64
	width       float64
}

// drawTerms draws T priors i.i.d. from q (component uniformly, then
// Gaussian of std q.Std) and evaluates every client at each temperature,
// applying the capped posterior mapping.
func drawTerms(q GaussianMixture, m []int, N int, eval CertEvalFunc, scales, caps []float64, T int,
	seed, stage, wi uint64) (draws, error) {
	d := draws{losses: make([][]float64, len(scales)), kls: make([][]float64, len(scales)),
		falls: make([]int, len(scales)), caps: caps, width: q.Std}
	for si := range scales {
		d.losses[si], d.kls[si] = make([]float64, T), make([]float64, T)
	}
	fell := make([][]bool, len(scales))
	for si := range fell {
		fell[si] = make([]bool, T)
	}
	err := parallelFor(T, func(j int) error {
		rng := rand.New(rand.NewPCG(seed, data.StreamID(0x63657274, stage, wi, uint64(j))))
		κ := rng.IntN(q.K)
		phi := make([]float64, q.Dim)
		for i := range phi {
			phi[i] = q.Centers[κ*q.Dim+i] + q.Std*rng.NormFloat64()
		}
		for si, sc := range scales {
			t, err := sumTerms(phi, m, eval, sc)
			if err != nil {
				return err
			}
			if t.KL > caps[si] {
				t.LossSum, t.KL = t.PriorLossSum, 0
				fell[si][j] = true
			}
			d.kls[si][j] = t.KL / caps[si]
			d.losses[si][j] = t.LossSum / float64(N)
		}
		return nil
	})
	for si := range fell {
		for _, f := range fell[si] {
			if f {
				d.falls[si]++
			}
		}
	}
	return d, err
}

// certificate is the bound at temperature index si from these draws, each
// Monte Carlo mean bounded at dMC, against the hyper-prior p.
func (d draws) certificate(si int, q, p GaussianMixture, dMC, logTerm float64, N int) (Certificate, error) {
	lu, err := EmpiricalBernsteinUpper(d.losses[si], dMC)
	if err != nil {
		return Certificate{}, err
	}
	ku, err := EmpiricalBernsteinUpper(d.kls[si], dMC)
	if err != nil {
		return Certificate{}, err
	}
	hkl, err := MixtureKLUpper(q, p)
	if err != nil {
		return Certificate{}, err
	}
	c := Certificate{
		Loss: mean(d.losses[si]), LossUpper: lu, HyperKL: hkl,
		ClientKL: mean(d.kls[si]) * d.caps[si], ClientKLUpper: ku * d.caps[si],
		LogTerm: logTerm, N: N, Width: q.Std, PriorWidth: p.Std,
		Draws: len(d.losses[si]), KLCap: d.caps[si], Fallbacks: d.falls[si],
	}
	c.Complexity = (c.HyperKL + c.ClientKLUpper + c.LogTerm) / float64(N)
	if c.Bound, err = KLInverse(c.LossUpper, c.Complexity); err != nil {
		return Certificate{}, err
	}
	return c, nil
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// sumTerms sums the clients' terms at phi in index order.
func sumTerms(phi []float64, m []int, eval CertEvalFunc, scale float64) (CertTerms, error) {
	var s CertTerms
	for i, mi := range m {
		t, err := eval(phi, i, scale)
		if err != nil {
			return s, fmt.Errorf("certify: client %d: %w", i, err)
		}
		if !(t.KL >= 0) || math.IsInf(t.KL, 0) || !(t.LossSum >= 0 && t.LossSum <= float64(mi)) ||
			!(t.PriorLossSum >= 0 && t.PriorLossSum <= float64(mi)) {
			return s, fmt.Errorf("certify: client %d: terms %+v outside their ranges", i, t)
		}
		s.LossSum += t.LossSum
		s.KL += t.KL
		s.PriorLossSum += t.PriorLossSum
	}
	return s, nil
}

// Split is a partition of the existing clients into A (used only to choose
// the hyper-prior) and B (the bound's sample).
type Split struct {
	A []int `json:"a"`
	B []int `json:"b"`
}

// NewSplit puts a seeded random half (rounded down) of n clients in A.
func NewSplit(n int, seed uint64) Split {
	perm := rand.New(rand.NewPCG(seed, data.StreamID(0x73706c6974))).Perm(n)
	a, b := perm[:n/2], perm[n/2:]
	sort.Ints(a)
	sort.Ints(b)
	return Split{A: a, B: b}
}

// Validate checks that A and B are disjoint sets of indices below n and B
// is not empty: a client whose data chose the prior must not be counted
// in the bound.
func (s Split) Validate(n int) error {
	seen := make([]int8, n)
	for g, set := range [][]int{s.A, s.B} {
		for _, i := range set {
			if i < 0 || i >= n {
				return fmt.Errorf("certify: client %d outside 0..%d", i, n-1)
			}
			if seen[i] != 0 {
				return fmt.Errorf("certify: client %d appears twice in the split (A and B must be disjoint)", i)
			}
			seen[i] = int8(g + 1)
		}
	}
	if len(s.B) == 0 {
		return errors.New("certify: no client in the bound's sample B")
	}
	return nil
}

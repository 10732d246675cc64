package fl

import (
	"errors"
	"fmt"
	"math"
)

// The binary kl, its inverse and the McAllester-type bounds of GenFL
// (docs/math.md §7, Jobic et al. 2023): the bounds of a stochastic classifier Q with a loss
// in [0, 1] against a data-free prior P.

// KLInverseTol is the absolute accuracy of KLInverse: the value returned
// lies in [p*, p* + KLInverseTol] where p* is the exact kl⁻¹ (never below
// it, so a bound built on it stays a bound).
const KLInverseTol = 1e-12

// ErrKLDomain reports an argument of kl or kl⁻¹ outside its domain.
var ErrKLDomain = errors.New("kl: argument outside the domain")

// KLBernoulli is kl(q‖p) = q ln(q/p) + (1−q) ln((1−q)/(1−p)), the KL
// divergence between Bernoulli(q) and Bernoulli(p), with 0 ln 0 = 0; +Inf
// when p puts no mass where q does (p = 0 < q or p = 1 > q). q and p must
// lie in [0, 1].
func KLBernoulli(q, p float64) (float64, error) {
	if !(q >= 0 && q <= 1) || !(p >= 0 && p <= 1) {
		return 0, fmt.Errorf("%w: kl(q‖p) needs q and p in [0, 1], got q = %v, p = %v", ErrKLDomain, q, p)
	}
	return klBernoulli(q, p), nil
}

// klBernoulli is KLBernoulli without the checks. With d = p − q it is
// written as q·g(d/q) + (1−q)·g(−d/(1−q)), g(x) = x − ln(1+x) ≥ 0 (the
// linear terms cancel exactly): two non-negative terms, so no cancellation
// when p is close to q, where the textbook form loses all its digits and
// kl⁻¹ for a tiny c would be off by 1e-10.
func klBernoulli(q, p float64) float64 {
	switch {
	case q == 0:
		if p == 1 {
			return math.Inf(1)
		}
		return -math.Log1p(-p)
	case q == 1:
		if p == 0 {
			return math.Inf(1)
		}
		return -math.Log(p)
	case p == 0 || p == 1:
		return math.Inf(1)
	}
	d := p - q
	return q*xMinusLog1p(d/q) + (1-q)*xMinusLog1p(-d/(1-q))
}

// xMinusLog1p is x − ln(1+x) for x ≥ −1 (+Inf at −1), accurate to a few
// ulps also for small |x| (series below 1/64).
func xMinusLog1p(x float64) float64 {
	if math.Abs(x) >= 1.0/64 {
		if x <= -1 {
			return math.Inf(1)
		}
		return math.Max(x-math.Log1p(x), 0)
	}
	// x²/2 − x³/3 + x⁴/4 − …: 12 terms leave < 64⁻¹² relative.
	s, pw := 0.0, x*x
	for k := 2; k <= 13; k++ {
		s += pw / float64(k)
		pw *= -x
	}
	return s
}

func checkKLInverseArgs(q, c float64) error {
	if !(q >= 0 && q <= 1) {
		return fmt.Errorf("%w: kl⁻¹(q, c) needs q in [0, 1] (an empirical risk), got q = %v", ErrKLDomain, q)
	}
	if !(c >= 0) {
		return fmt.Errorf("%w: kl⁻¹(q, c) needs c ≥ 0, got c = %v", ErrKLDomain, c)
	}
	return nil
}

// klInverseEdge handles the cases with a closed form: q ≥ 1 or c = +Inf →
// 1; c = 0 → q; q = 0 → 1 − e^{−c}. ok is false otherwise.
func klInverseEdge(q, c float64) (p float64, ok bool) {
	switch {
	case q >= 1 || math.IsInf(c, 1):
		return 1, true
	case c == 0:
		return q, true
	case q == 0:
		// kl(0‖p) = −ln(1−p) ≤ c ⇔ p ≤ 1 − e^{−c}; rounded up by one ulp
		// so that it stays an upper bound.
		return math.Min(1, math.Nextafter(-math.Expm1(-c), 2)), true
	}
	return 0, false
}

// KLInverse is kl⁻¹(q, c) = sup{p ∈ [q, 1] : kl(q‖p) ≤ c}, the largest
// true risk compatible with an empirical risk q and a complexity c. It
// follows the paper's Appendix A (Dziugaite and Roy's Newton iteration on
// h(p) = kl(q‖p) − c from b̃ = q + √(c/2), which Pinsker's inequality puts
// at or above the root), safeguarded by bisection on the bracket [q, b̃]
// (or [q, 1] when b̃ ≥ 1, where the paper's recipe would return 1), until
// the root is pinned to within KLInverseTol. The value returned is the
// upper end of the final bracket: never below the exact kl⁻¹.
//
// Edge cases: q ≥ 1 or c = +Inf give 1, c = 0 gives q, q = 0 gives
// 1 − e^{−c}. q outside [0, 1], c < 0 and NaNs are errors.
func KLInverse(q, c float64) (float64, error) {
	if err := checkKLInverseArgs(q, c); err != nil {
		return 0, err
	}
	if p, ok := klInverseEdge(q, c); ok {
		return p, nil
	}
	h := func(p float64) float64 { return klBernoulli(q, p) - c }
	lo, hi := q, q+math.Sqrt(c/2)
	if hi >= 1 || !(h(hi) >= 0) {
		hi = 1 // h(1) = +Inf for q < 1
	}
	for iter := 0; iter < 400 && hi-lo > KLInverseTol; iter++ {
		var next float64
		newton := hi < 1
		if newton {
			// h is convex and increasing on [q, 1): from a point at or
			// above the root, the Newton step stays at or above it.
			d := (1-q)/(1-hi) - q/hi
			next = hi - h(hi)/d
		}
		if !newton || !(next > lo && next < hi) {
			next = lo + (hi-lo)/2
			newton = false
		}
		if h(next) >= 0 {
			step := hi - next
			hi = next
			if newton && step < KLInverseTol/2 {
				// Newton has converged: certify the bracket below it.
				if t := hi - KLInverseTol; t > lo {
					if h(t) < 0 {
						lo = t
					} else {
						hi = t
					}
				}
			}
		} else {
			lo = next
		}
	}
	return hi, nil
}

// KLInverseBisect is kl⁻¹(q, c) by plain bisection on [q, 1] to tol (> 0),
// returning the upper end of the bracket: the independent reference of
// KLInverse. Same domain and edge cases.
func KLInverseBisect(q, c, tol float64) (float64, error) {
	if err := checkKLInverseArgs(q, c); err != nil {
		return 0, err
	}
	if !(tol > 0) {
		return 0, fmt.Errorf("%w: bisection tolerance %v must be > 0", ErrKLDomain, tol)
	}
	if p, ok := klInverseEdge(q, c); ok {
		return p, nil
	}
	lo, hi := q, 1.0
	for hi-lo > tol {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if klBernoulli(q, mid) > c {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}

// KLInverseNewton is the paper's Appendix A recipe as printed: b̃ = q +
// √(c/2); 1 if b̃ ≥ 1; otherwise k Newton steps from b̃ (k ≥ 1). It is an
// upper bound of kl⁻¹ in exact arithmetic; KLInverse is what the bounds use.
func KLInverseNewton(q, c float64, k int) (float64, error) {
	if err := checkKLInverseArgs(q, c); err != nil {
		return 0, err
	}
	if k < 1 {
		return 0, fmt.Errorf("%w: %d Newton steps, want ≥ 1", ErrKLDomain, k)
	}
	if p, ok := klInverseEdge(q, c); ok {
		return p, nil
	}
	p := q + math.Sqrt(c/2)
	if p >= 1 {
		return 1, nil
	}
	for range k {
		d := (1-q)/(1-p) - q/p
		p -= (klBernoulli(q, p) - c) / d
	}
	return p, nil
}

// McAllesterComplexity is the right-hand side of McAllester's bound (GF-1),
// (KL(Q‖P) + ln(2√m/δ))/m, for m ≥ 1 samples, KL ≥ 0 and δ ∈ (0, 1).
func McAllesterComplexity(kl float64, m int, delta float64) (float64, error) {
	switch {
	case m < 1:
		return 0, fmt.Errorf("%w: McAllester's bound needs m ≥ 1 samples, got %d", ErrKLDomain, m)
	case !(kl >= 0):
		return 0, fmt.Errorf("%w: KL(Q‖P) = %v must be ≥ 0", ErrKLDomain, kl)
	case !(delta > 0 && delta < 1):
		return 0, fmt.Errorf("%w: δ = %v must lie in (0, 1)", ErrKLDomain, delta)
	}
	fm := float64(m)
	return (kl + math.Log(2*math.Sqrt(fm)/delta)) / fm, nil
}

func checkRisk(r float64) error {
	if !(r >= 0 && r <= 1) {
		return fmt.Errorf("%w: empirical risk %v must lie in [0, 1]", ErrKLDomain, r)
	}
	return nil
}

// McAllesterBound is (GF-2): with probability ≥ 1 − δ over an i.i.d.
// sample of size m, for every Q, R_D(Q) ≤ kl⁻¹(R̂_S(Q), (KL(Q‖P) +
// ln(2√m/δ))/m), for a loss in [0, 1] and a data-free prior P.
func McAllesterBound(risk, kl float64, m int, delta float64) (float64, error) {
	if err := checkRisk(risk); err != nil {
		return 0, err
	}
	c, err := McAllesterComplexity(kl, m, delta)
	if err != nil {
		return 0, err
	}
	return KLInverse(risk, c)
}

// PinskerBound is the relaxation (GF-3), R̂ + √((KL + ln(2√m/δ))/(2m)),
// from Pinsker's inequality kl(q‖p) ≥ 2(p−q)² (the paper prints (p−q)²/2,
// docs/math.md §11.8). Never below McAllesterBound; it may exceed 1.
func PinskerBound(risk, kl float64, m int, delta float64) (float64, error) {
	if err := checkRisk(risk); err != nil {
		return 0, err
	}
	c, err := McAllesterComplexity(kl, m, delta)
	if err != nil {
		return 0, err
	}
	return risk + math.Sqrt(c/2), nil
}

// QuadraticBound is the relaxation (GF-4/5), (√(R̂ + c) + √c)² with c =
// (KL + ln(2√m/δ))/(2m), from kl(q‖p) ≥ (p−q)²/(2p) (the paper prints it
// without the square, docs/math.md §11.8). Never below McAllesterBound; it may
// exceed 1.
func QuadraticBound(risk, kl float64, m int, delta float64) (float64, error) {
	if err := checkRisk(risk); err != nil {
		return 0, err
	}
	c, err := McAllesterComplexity(kl, m, delta)
	if err != nil {
		return 0, err
	}
	c /= 2
	s := math.Sqrt(risk+c) + math.Sqrt(c)
	return s * s, nil
}

// FedBoundResult is FEDBOUND's double inversion (GF-7) with its parts.
type FedBoundResult struct {
	Err         float64 `json:"mc_error"`        // Monte Carlo estimate of R̂_S(Q) from n samples
	N           int     `json:"mc_samples"`      // n
	DeltaPrime  float64 `json:"delta_prime"`     // δ′ of the sampling step
	RiskUpper   float64 `json:"risk_upper"`      // R̂ⁿ = kl⁻¹(err, ln(2/δ′)/n) ≥ R̂_S(Q) w.p. ≥ 1−δ′
	KL          float64 `json:"kl"`              // KL(Q‖P)
	M           int     `json:"m"`               // sample size of the bound
	Delta       float64 `json:"delta"`           // δ of McAllester's bound
	Complexity  float64 `json:"complexity"`      // (KL + ln(2√m/δ))/m
	Bound       float64 `json:"bound"`           // kl⁻¹(R̂ⁿ, complexity)
	NoSampling  float64 `json:"bound_exact_mc"`  // kl⁻¹(err, complexity): the bound if err were exact (not a bound)
	SamplingAdd float64 `json:"sampling_term"`   // Bound − NoSampling: what the finite n costs
	Confidence  float64 `json:"confidence"`      // 1 − δ − δ′
	PinskerAtN  float64 `json:"pinsker_bound"`   // (GF-3) at R̂ⁿ, for comparison
	QuadAtN     float64 `json:"quadratic_bound"` // (GF-4/5) at R̂ⁿ, for comparison
}

// FedBound is the bound of FEDBOUND (Alg. 2, GF-7): given the mean 0–1
// error err of n independent [0, 1]-valued unbiased estimates of R̂_S(Q)
// (for example the errors on S of n weight samples W_i ∼ Q), with
// probability ≥ 1 − δ − δ′ over the sample S (m i.i.d. examples) and the
// weight draws,
//
//	R_D(Q) ≤ kl⁻¹(kl⁻¹(err, ln(2/δ′)/n), (KL(Q‖P) + ln(2√m/δ))/m).
func FedBound(err float64, n int, deltaPrime, kl float64, m int, delta float64) (FedBoundResult, error) {
	r := FedBoundResult{Err: err, N: n, DeltaPrime: deltaPrime, KL: kl, M: m, Delta: delta}
	if e := checkRisk(err); e != nil {
		return r, e
	}
	if n < 1 {
		return r, fmt.Errorf("%w: FEDBOUND needs n ≥ 1 Monte Carlo samples, got %d", ErrKLDomain, n)
	}
	if !(deltaPrime > 0 && deltaPrime < 1) || !(delta+deltaPrime < 1) {
		return r, fmt.Errorf("%w: δ′ = %v must lie in (0, 1) with δ + δ′ < 1 (δ = %v)", ErrKLDomain, deltaPrime, delta)
	}
	c, e := McAllesterComplexity(kl, m, delta)
	if e != nil {
		return r, e
	}
	r.Complexity = c
	r.Confidence = 1 - delta - deltaPrime
	if r.RiskUpper, e = KLInverse(err, math.Log(2/deltaPrime)/float64(n)); e != nil {
		return r, e
	}
	if r.Bound, e = KLInverse(r.RiskUpper, c); e != nil {
		return r, e
	}
	if r.NoSampling, e = KLInverse(err, c); e != nil {
		return r, e
	}
	r.SamplingAdd = r.Bound - r.NoSampling
	r.PinskerAtN, _ = PinskerBound(r.RiskUpper, kl, m, delta)
	r.QuadAtN, _ = QuadraticBound(r.RiskUpper, kl, m, delta)
	return r, nil
}

package fl

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/pacpfl/pacpfl/svgd"
)

func tinyBound() BoundConfig {
	return BoundConfig{A: -1, B: 2, Delta: 0.1, Beta: 3, M: []int{3, 4, 5}, MTilde: []int{0, 2, 1}}
}

// The bounds against a direct transcription of Theorem 4.2 and Lemma 4.6 in
// their λ form, with λ chosen first and τ derived from it.
func TestBoundsMatchFormula(t *testing.T) {
	c := tinyBound()
	n, beta, a, b, delta := 3.0, 3.0, -1.0, 2.0, 0.1
	n2u := 2 + Upsilon
	lambda := 7.5
	c.Tau = TauFromLambda(lambda, beta, 3, 2, Upsilon)
	if math.Abs(c.Lambda()-lambda) > 1e-12 {
		t.Fatalf("Lambda() = %v, want %v", c.Lambda(), lambda)
	}
	logZS := -4.2
	got, err := c.Evaluate(logZS)
	if err != nil {
		t.Fatal(err)
	}
	// Δ_i by hand: client 2: m=4, m̃=2; client 3: m=5, m̃=1; a < 0, so the
	// total-variation form (b−a)·tanh(x/2) alone.
	d2 := (b - a) * math.Tanh(beta*2/6*(b-a)) / n
	d3 := (b - a) * math.Tanh(beta*1/6*(b-a)) / n
	sumInvM := 1.0/3 + 1.0/4 + 1.0/5
	cKL := 1/(n*beta) + n2u/lambda
	server := -cKL*logZS + beta*(b-a)*(b-a)/(8*n)*sumInvM + lambda*(d2*d2+d3*d3)/(8*n2u) +
		math.Log(1/delta)/math.Sqrt(n)
	newc := -cKL*logZS + (b-a)*(b-a)/(8*n)*(beta*sumInvM+lambda/n2u) + math.Log(1/delta)/math.Sqrt(n)
	if math.Abs(got.Server-server) > 1e-12 || math.Abs(got.NewClient-newc) > 1e-12 {
		t.Fatalf("bounds %v %v, want %v %v", got.Server, got.NewClient, server, newc)
	}
	// c_KL = 1/(nβτ).
	if math.Abs(cKL-1/(n*beta*c.Tau)) > 1e-12 {
		t.Fatalf("c_KL %v ≠ 1/(nβτ) %v", cKL, 1/(n*beta*c.Tau))
	}
	if want := 2 * beta * c.Tau * (b - a) / 3; math.Abs(got.EpsilonMax-want) > 1e-12 {
		t.Fatalf("ε = %v, want %v", got.EpsilonMax, want)
	}
}

// On a hyper-prior with three atoms, 𝒬* is computable exactly: check that the
// first two terms of (9) at 𝒬* collapse to −ln Z^S/(nβτ) (eqs. 31-32).
func TestGibbsHyperPosteriorIdentity(t *testing.T) {
	c := tinyBound()
	c.Tau = 0.4
	n, beta := 3.0, c.Beta
	prior := []float64{0.2, 0.5, 0.3}
	lnZC := [][]float64{{-3, -2, -5}, {-1, -4, -2}, {-6, -1, -1}} // [atom][client]
	sums := make([]float64, 3)
	for j := range sums {
		for _, v := range lnZC[j] {
			sums[j] += v
		}
	}
	zs := 0.0
	for j := range prior {
		zs += prior[j] * math.Exp(c.Tau*sums[j])
	}
	var eLnZ, kl float64
	for j := range prior {
		q := prior[j] * math.Exp(c.Tau*sums[j]) / zs
		eLnZ += q * sums[j]
		kl += q * math.Log(q/prior[j])
	}
	cKL := 1/(n*beta) + (float64(c.N2())+Upsilon)/c.Lambda()
	lhs := -eLnZ/(n*beta) + cKL*kl
	if rhs := -math.Log(zs) / (n * beta * c.Tau); math.Abs(lhs-rhs) > 1e-12 {
		t.Fatalf("first terms at 𝒬* = %v, −ln Z^S/(nβτ) = %v", lhs, rhs)
	}
}

func TestBoundsValidate(t *testing.T) {
	for name, mod := range map[string]func(*BoundConfig){
		"a≥b":       func(c *BoundConfig) { c.A, c.B = 1, 1 },
		"δ=0":       func(c *BoundConfig) { c.Delta = 0 },
		"δ=1":       func(c *BoundConfig) { c.Delta = 1 },
		"τ=1":       func(c *BoundConfig) { c.Tau = 1 },
		"τ tiny":    func(c *BoundConfig) { c.Tau = 1e-9 },
		"β<1/n":     func(c *BoundConfig) { c.Beta = 0.1 },
		"m̃ length": func(c *BoundConfig) { c.MTilde = []int{1} },
		"m=0":       func(c *BoundConfig) { c.M[0] = 0 },
		"no client": func(c *BoundConfig) { c.M, c.MTilde = nil, nil },
		// Finite a and b whose (b−a)² overflows: every bound was +Inf.
		"(b−a)² overflows": func(c *BoundConfig) { c.A, c.B = -1e300, 1e300 },
		"b−a overflows":    func(c *BoundConfig) { c.A, c.B = -1e308, 1e308 },
	} {
		c := tinyBound()
		c.Tau = 0.5
		mod(&c)
		if _, err := c.Evaluate(0); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	c := tinyBound()
	c.Tau = 0.5
	if _, err := c.Evaluate(0); err != nil {
		t.Fatal(err)
	}
	// A failed ln Z^S estimate (NaN or ±Inf) is an error, never a "bound".
	for _, lz := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if b, err := c.Evaluate(lz); err == nil {
			t.Errorf("ln Z^S = %v accepted: server bound %v", lz, b.Server)
		}
	}
}

type gauss1 struct{}

func (gauss1) Dim() int                             { return 1 }
func (gauss1) Sample(dst []float64, rng *rand.Rand) { dst[0] = rng.NormFloat64() }

// ln Z^C(φ, i) = w_i φ with φ ∼ N(0,1): ln Z^S = τ²W²/2 exactly.
func TestEstimateLogZS(t *testing.T) {
	w := []float64{0.3, 0.5, 0.2} // W = 1
	tau := 0.5
	got, err := EstimateLogZS(gauss1{}, 100000, 3, tau, func(phi []float64, i int, _ *rand.Rand) (float64, error) {
		return w[i] * phi[0], nil
	}, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	if want := tau * tau / 2; math.Abs(got-want) > 0.01 {
		t.Fatalf("ln Z^S = %v, want %v", got, want)
	}
	if _, err := EstimateLogZS(gauss1{}, 0, 3, tau, nil, nil); err == nil {
		t.Fatal("0 samples accepted")
	}
}

func TestLogSumExp(t *testing.T) {
	if got := LogSumExp([]float64{1000, 1000}); math.Abs(got-(1000+math.Ln2)) > 1e-12 {
		t.Fatalf("LSE = %v", got)
	}
	if got := LogSumExp([]float64{math.Inf(-1), 0}); got != 0 {
		t.Fatalf("LSE = %v", got)
	}
}

// Without clipping, the Monte Carlo ln Z^C with β = m is the GP log marginal
// likelihood ln N(y | mean, LLᵀ + σ²I), computed here with gonum.
func TestClippedGaussianLogZ(t *testing.T) {
	y := []float64{0.3, -0.2, 0.5}
	mean := []float64{0.1, 0.0, 0.2}
	cov := mat.NewSymDense(3, []float64{1, 0.6, 0.3, 0.6, 1, 0.6, 0.3, 0.6, 1})
	var ch mat.Cholesky
	if !ch.Factorize(cov) {
		t.Fatal("cov not PD")
	}
	var l mat.TriDense
	ch.LTo(&l)
	chol := make([]float64, 9)
	for i := 0; i < 3; i++ {
		for j := 0; j <= i; j++ {
			chol[i*3+j] = l.At(i, j)
		}
	}
	sigma := 0.5
	a := mat.NewSymDense(3, nil)
	a.CopySym(cov)
	for i := 0; i < 3; i++ {
		a.SetSym(i, i, a.At(i, i)+sigma*sigma)
	}
	var cha mat.Cholesky
	if !cha.Factorize(a) {
		t.Fatal("A not PD")
	}
	r := mat.NewVecDense(3, []float64{y[0] - mean[0], y[1] - mean[1], y[2] - mean[2]})
	var v mat.VecDense
	if err := cha.SolveVecTo(&v, r); err != nil {
		t.Fatal(err)
	}
	want := -0.5*mat.Dot(r, &v) - 0.5*cha.LogDet() - 1.5*math.Log(2*math.Pi)
	got, err := ClippedGaussianLogZ(y, mean, chol, sigma, 3, -100, 100, 200000, rand.New(rand.NewPCG(5, 6)))
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got-want) > 0.02 {
		t.Fatalf("MC ln Z = %v, exact LML %v", got, want)
	}
	// A range [a, b] below every loss clips everything to b: ln Z = −β b.
	got, _ = ClippedGaussianLogZ(y, mean, chol, sigma, 3, -10, -9, 100, rand.New(rand.NewPCG(5, 6)))
	if math.Abs(got-27) > 1e-12 {
		t.Fatalf("fully clipped ln Z = %v, want 27", got)
	}
	if _, err := ClippedGaussianLogZ(y, mean[:2], chol, sigma, 3, -1, 1, 10, rand.New(rand.NewPCG(5, 6))); err == nil {
		t.Fatal("shape mismatch accepted")
	}
}

// Δ_i bounds how far the expected loss can move when the density ratio of
// the two Gibbs posteriors stays within [e^{−x}, e^{x}]. Worst cases: a loss
// at a on one atom and b on the other, Q' = (1−q, q) on them and Q moving as
// much mass to b as the ratio allows; over a grid of q the move must never
// exceed nΔ_i. The paper's b·(e^x − e^{−x}) is 0 for a loss in [−1, 0]:
// not a bound there.
func TestDeltasBoundTheWorstTilt(t *testing.T) {
	for _, r := range [][2]float64{{-1, 0}, {-2, 2}, {0, 1}, {0.5, 3}} {
		a, b := r[0], r[1]
		for _, beta := range []float64{0.01, 0.1, 1, 10} {
			c := BoundConfig{A: a, B: b, Delta: 0.1, Beta: beta, M: []int{4}, MTilde: []int{3}}
			x := 2 * beta * 3 / 7 * (b - a)
			worst := 0.0
			for q := 0.001; q < 1; q += 0.001 {
				// Q(b) = p ≤ e^x q and Q(a) = 1 − p ≥ e^{−x}(1 − q).
				p := math.Min(math.Exp(x)*q, 1-math.Exp(-x)*(1-q))
				worst = math.Max(worst, (p-q)*(b-a))
			}
			if d := c.Deltas()[0]; worst > d+1e-12 {
				t.Fatalf("[%v,%v] β=%v: a tilt moves the loss by %v > Δ = %v", a, b, beta, worst, d)
			}
		}
	}
	c := BoundConfig{A: -1, B: 0, Delta: 0.1, Beta: 1, M: []int{4}, MTilde: []int{3}}
	if d := c.Deltas()[0]; !(d > 0) {
		t.Fatalf("loss in [−1, 0]: Δ = %v, the paper's formula (0) is not a bound there", d)
	}
}

// The closed-form KL of a Laplace component against the Gaussian hyper-prior,
// against numerical integration (1-D, trapezoid on a fine grid).
func TestLaplaceGaussianKL(t *testing.T) {
	for _, c := range [][4]float64{{0.3, 0, 1, 0.2}, {-1.5, 0.5, 2, 0.7}, {2, -1, 0.5, 0.05}} {
		phi, mu, sd, w := c[0], c[1], c[2], c[3]
		prior, err := svgd.NewGaussian([]float64{mu}, []float64{sd})
		if err != nil {
			t.Fatal(err)
		}
		got := mixtureLaplaceKL([]float64{phi}, 1, prior, w)
		b := w * sd
		lo, hi := phi-60*b, phi+60*b
		const steps = 400000
		h := (hi - lo) / steps
		want := 0.0
		for i := 0; i <= steps; i++ {
			x := lo + float64(i)*h
			q := math.Exp(-math.Abs(x-phi)/b) / (2 * b)
			p := math.Exp(-(x-mu)*(x-mu)/(2*sd*sd)) / math.Sqrt(2*math.Pi*sd*sd)
			f := q * math.Log(q/p)
			if i == 0 || i == steps {
				f /= 2
			}
			want += f * h
		}
		if math.Abs(got-want) > 1e-6*(1+math.Abs(want)) {
			t.Fatalf("%v: KL %v, numerical %v", c, got, want)
		}
	}
}

// EvaluateLearned on a case whose expectation is known: ln Z^C linear in
// φ_0 (inside the clipped range) has E_𝒬 equal to its value at the particle
// mean, so the empirical term matches it within the Hoeffding tolerance; the
// other terms are the formula's.
func TestEvaluateLearnedTinyCase(t *testing.T) {
	c := BoundConfig{A: -2, B: 2, Delta: 0.05, Beta: 4, Tau: 0.5, M: []int{4, 4, 4}}
	prior, err := svgd.Isotropic([]float64{0, 0}, 1)
	if err != nil {
		t.Fatal(err)
	}
	particles := []float64{0.3, 0.1, -0.5, 0.4} // k = 2, d = 2
	// (1/β) ln Z^C = −(0.5 + 0.2·φ_0 + 0.1·i): loss term ∈ [a, b] for |φ_0| ≲ 5.
	lnZC := func(phi []float64, i int, _ *rand.Rand) (float64, error) {
		return -c.Beta * math.Max(c.A, math.Min(c.B, 0.5+0.2*phi[0]+0.1*float64(i))), nil
	}
	const N = 4000
	lb, err := c.EvaluateLearned(particles, 2, prior, lnZC,
		LearnedBoundOptions{Widths: []float64{0.2}, Samples: N, DeltaSampling: 0.01, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	exact := 0.5 + 0.2*(0.3-0.5)/2 + 0.1 // mean over clients i = 0, 1, 2 of 0.1·i is 0.1
	tol := 4 * math.Sqrt(math.Log(1/0.01)/(2*N))
	if math.Abs(lb.EmpiricalTerm-exact) > tol {
		t.Fatalf("empirical term %v, exact expectation %v (tolerance %v)", lb.EmpiricalTerm, exact, tol)
	}
	if want := 4 * math.Sqrt(math.Log(1/0.01)/(2*N)); math.Abs(lb.SamplingTerm-want) > 1e-12 {
		t.Fatalf("sampling term %v, want %v", lb.SamplingTerm, want)
	}
	if want := mixtureLaplaceKL(particles, 2, prior, 0.2); lb.KL != want || lb.KLWeight != c.klWeight() {
		t.Fatalf("KL %v × %v, want %v × %v", lb.KL, lb.KLWeight, want, c.klWeight())
	}
	// Server = sum of the terms; the constants are those of the 𝒬* bound.
	zs, _ := c.Evaluate(-1)
	if consts := zs.Server - c.klWeight()*1; math.Abs(lb.Constants-consts) > 1e-12 {
		t.Fatalf("constants %v, want %v", lb.Constants, consts)
	}
	if sum := lb.EmpiricalTerm + lb.SamplingTerm + lb.KLWeight*lb.KL + lb.Constants; lb.Server != sum {
		t.Fatalf("server %v ≠ sum of its terms %v", lb.Server, sum)
	}
	// Several widths: the best is reported and the union bound widens the
	// sampling term.
	lb3, err := c.EvaluateLearned(particles, 2, prior, lnZC,
		LearnedBoundOptions{Widths: []float64{0.05, 0.2, 0.6}, Samples: N, DeltaSampling: 0.01, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := 4 * math.Sqrt(math.Log(3/0.01)/(2*N)); math.Abs(lb3.SamplingTerm-want) > 1e-12 {
		t.Fatalf("sampling term with 3 widths %v, want %v", lb3.SamplingTerm, want)
	}
	for _, w := range []float64{0.05, 0.2, 0.6} {
		one, _ := c.EvaluateLearned(particles, 2, prior, lnZC,
			LearnedBoundOptions{Widths: []float64{w}, Samples: N, DeltaSampling: 0.01 / 3, Seed: 1})
		if lb3.Server > one.Server+0.05 {
			t.Fatalf("best of 3 widths %v above width %v's %v", lb3.Server, w, one.Server)
		}
	}
	// Bad inputs.
	for _, o := range []LearnedBoundOptions{{Widths: []float64{0}}, {Samples: -1}, {DeltaSampling: 1.5}} {
		if _, err := c.EvaluateLearned(particles, 2, prior, lnZC, o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	if _, err := c.EvaluateLearned(particles[:3], 2, prior, lnZC, LearnedBoundOptions{}); err == nil {
		t.Error("wrong particle count accepted")
	}
}

// adamStepBound bounds every Adam step: adversarial gradient sequences (a
// long quiet stretch, then a spike) come close to it but never exceed it.
func TestAdamStepBound(t *testing.T) {
	bound := adamStepBound(0.9, 0.999)
	if bound < 7 || bound > 7.5 {
		t.Fatalf("adamStepBound = %v, want ≈ 7.27", bound)
	}
	worst := 0.0
	for _, quiet := range []int{0, 10, 100, 1000, 5000} {
		a := svgd.NewAdam(1)
		x := []float64{0}
		for s := 0; s < quiet+20; s++ {
			g := 1e-6
			if s >= quiet {
				g = math.Pow(2, float64(s-quiet)) // growing gradients
			}
			before := x[0]
			if err := a.Ascend(x, []float64{g}); err != nil {
				t.Fatal(err)
			}
			step := math.Abs(x[0] - before)
			worst = math.Max(worst, step)
			if step > bound*(1+1e-12) {
				t.Fatalf("Adam step %v > bound %v (quiet %d, step %d)", step, bound, quiet, s)
			}
		}
	}
	if worst < 2 {
		t.Fatalf("adversarial sequences reached only %v of the bound %v", worst, bound)
	}
}

package fl

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
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
	// Δ_i by hand: client 2: m=4, m̃=2; client 3: m=5, m̃=1.
	d2 := math.Min(b-a, b*(math.Exp(2*beta*2/6*(b-a))-math.Exp(-2*beta*2/6*(b-a)))) / n
	d3 := math.Min(b-a, b*(math.Exp(2*beta*1/6*(b-a))-math.Exp(-2*beta*1/6*(b-a)))) / n
	sumInvM := 1.0/3 + 1.0/4 + 1.0/5
	cKL := 1/(n*beta) + n2u/lambda
	server := -cKL*logZS + beta*(b-a)*(b-a)/(8*n)*sumInvM + lambda*(d2*d2+d3*d3)/(8*n2u) + math.Log(1/delta)/math.Sqrt(n)
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
	// A failed ln Z^S estimate used to come back as a NaN or −Inf "bound".
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

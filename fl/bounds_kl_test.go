package fl

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func TestKLBernoulliValues(t *testing.T) {
	for _, c := range []struct{ q, p, want float64 }{
		{0.5, 0.5, 0},
		{0, 0.5, math.Ln2},
		{1, 0.5, math.Ln2},
		{0.1, 0.2, 0.1*math.Log(0.5) + 0.9*math.Log(0.9/0.8)},
		{0.3, 0.05, 0.3*math.Log(6) + 0.7*math.Log(0.7/0.95)},
		{0, 0, 0},
		{1, 1, 0},
		{0.2, 0, math.Inf(1)},
		{0.2, 1, math.Inf(1)},
	} {
		got, err := KLBernoulli(c.q, c.p)
		if err != nil {
			t.Fatal(err)
		}
		if !(got == c.want || math.Abs(got-c.want) <= 1e-15*math.Max(1, c.want)) {
			t.Errorf("kl(%v‖%v) = %v, want %v", c.q, c.p, got, c.want)
		}
	}
	for _, c := range [][2]float64{{-0.1, 0.5}, {0.5, 1.1}, {math.NaN(), 0.5}, {0.5, math.NaN()}} {
		if _, err := KLBernoulli(c[0], c[1]); !errors.Is(err, ErrKLDomain) {
			t.Errorf("kl(%v‖%v): err %v, want ErrKLDomain", c[0], c[1], err)
		}
	}
}

// checkInverse checks kl⁻¹(q, c) against bisection and its defining
// property: kl(q‖p) ≥ c just above, ≤ c just below.
func checkInverse(t *testing.T, q, c float64) {
	t.Helper()
	got, err := KLInverse(q, c)
	if err != nil {
		t.Fatalf("kl⁻¹(%v, %v): %v", q, c, err)
	}
	ref, err := KLInverseBisect(q, c, 1e-14)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got-ref) > 1e-10 {
		t.Fatalf("kl⁻¹(%v, %v) = %.15g, bisection %.15g (|Δ| = %.3g)", q, c, got, ref, math.Abs(got-ref))
	}
	if got < q || got > 1 {
		t.Fatalf("kl⁻¹(%v, %v) = %v outside [q, 1]", q, c, got)
	}
	if got < 1 && klBernoulli(q, got) < c*(1-1e-12)-1e-300 {
		t.Fatalf("kl⁻¹(%v, %v) = %v is below the root: kl = %v < c", q, c, got, klBernoulli(q, got))
	}
	if below := got - 2*KLInverseTol; below > q && klBernoulli(q, below) > c {
		t.Fatalf("kl⁻¹(%v, %v) = %v is more than %g above the root", q, c, got, 2*KLInverseTol)
	}
}

func TestKLInverseGrid(t *testing.T) {
	qs := []float64{0, 1e-9, 1e-4, 0.001, 0.01, 0.03, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999999, 1}
	cs := []float64{0, 1e-12, 1e-8, 1e-5, 3.3e-4, 0.001, 0.01, 0.05, 0.1, 0.5, 1, 2, 5, 30, 1e3}
	for _, q := range qs {
		for _, c := range cs {
			checkInverse(t, q, c)
		}
	}
}

func TestKLInverseRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		q := r.Float64()
		if r.IntN(4) == 0 {
			q = math.Pow(10, -12*r.Float64())
		}
		c := math.Pow(10, -10+12*r.Float64())
		checkInverse(t, q, c)
	}
}

func TestKLInverseKnownValues(t *testing.T) {
	// q = 0: kl(0‖p) = −ln(1−p), so kl⁻¹(0, c) = 1 − e^{−c}.
	for _, c := range []float64{1e-10, 0.01, 1, 10} {
		got, _ := KLInverse(0, c)
		if want := -math.Expm1(-c); math.Abs(got-want) > 1e-15 || got < want {
			t.Errorf("kl⁻¹(0, %v) = %v, want %v (from above)", c, got, want)
		}
	}
	// q = 1/2, p with kl(1/2‖p) = c in closed form: c = −½ ln(4p(1−p)).
	for _, p := range []float64{0.6, 0.75, 0.9, 0.999} {
		c := -0.5 * math.Log(4*p*(1-p))
		got, _ := KLInverse(0.5, c)
		if math.Abs(got-p) > 1e-11 {
			t.Errorf("kl⁻¹(0.5, %v) = %.15g, want %v", c, got, p)
		}
	}
	for _, c := range []struct{ q, c, want float64 }{
		{0.3, 0, 0.3},
		{1, 0.5, 1},
		{0.2, math.Inf(1), 1},
		{0.5, 1e6, 1},
	} {
		if got, _ := KLInverse(c.q, c.c); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("kl⁻¹(%v, %v) = %v, want %v", c.q, c.c, got, c.want)
		}
	}
}

func TestKLInverseDomain(t *testing.T) {
	for _, c := range [][2]float64{{-0.01, 0.1}, {1.01, 0.1}, {0.5, -1e-9}, {math.NaN(), 1}, {0.5, math.NaN()},
		{math.Inf(1), 1}} {
		if _, err := KLInverse(c[0], c[1]); !errors.Is(err, ErrKLDomain) {
			t.Errorf("kl⁻¹(%v, %v): err %v, want ErrKLDomain", c[0], c[1], err)
		}
	}
	if _, err := KLInverseBisect(0.1, 0.1, 0); err == nil {
		t.Error("bisection with tolerance 0 accepted")
	}
	if _, err := KLInverseNewton(0.1, 0.1, 0); err == nil {
		t.Error("0 Newton steps accepted")
	}
}

func TestKLInverseMonotone(t *testing.T) {
	prev := -1.0
	for q := 0.0; q <= 1; q += 0.001 {
		p, _ := KLInverse(q, 0.02)
		if p < prev-1e-12 {
			t.Fatalf("kl⁻¹(q, 0.02) decreases at q = %v: %v < %v", q, p, prev)
		}
		prev = p
	}
	prev = -1.0
	for _, c := range []float64{0, 1e-6, 1e-4, 1e-3, 0.01, 0.02, 0.1, 0.3, 1, 3} {
		p, _ := KLInverse(0.15, c)
		if p < prev {
			t.Fatalf("kl⁻¹(0.15, c) decreases at c = %v: %v < %v", c, p, prev)
		}
		prev = p
	}
}

// The paper's Newton recipe approaches the root from above and agrees with
// KLInverse once it has converged.
func TestKLInverseNewtonRecipe(t *testing.T) {
	for _, q := range []float64{0.01, 0.1, 0.3, 0.6} {
		for _, c := range []float64{1e-4, 1e-3, 0.01, 0.1} {
			exact, _ := KLInverse(q, c)
			prev := 2.0
			for k := 1; k <= 30; k++ {
				p, _ := KLInverseNewton(q, c, k)
				if p < exact-1e-12 || p > prev+1e-15 {
					t.Fatalf("q=%v c=%v: Newton step %d gives %v (root %v, previous %v)", q, c, k, p, exact, prev)
				}
				prev = p
			}
			if math.Abs(prev-exact) > 1e-10 {
				t.Errorf("q=%v c=%v: 30 Newton steps %v, kl⁻¹ %v", q, c, prev, exact)
			}
		}
	}
	if p, _ := KLInverseNewton(0.9, 0.5, 5); p != 1 {
		t.Errorf("b̃ ≥ 1 should give 1, got %v", p)
	}
}

func TestRelaxationsAboveKLInverse(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		risk := r.Float64()
		kl := math.Pow(10, -3+8*r.Float64())
		m := 1 + r.IntN(100000)
		delta := 0.001 + 0.2*r.Float64()
		mc, err := McAllesterBound(risk, kl, m, delta)
		if err != nil {
			t.Fatal(err)
		}
		pin, _ := PinskerBound(risk, kl, m, delta)
		quad, _ := QuadraticBound(risk, kl, m, delta)
		if pin < mc-1e-12 || quad < mc-1e-12 {
			t.Fatalf("risk %v KL %v m %d δ %v: kl⁻¹ bound %v above Pinsker %v or quadratic %v", risk, kl, m, delta, mc,
				pin, quad)
		}
		if mc < risk {
			t.Fatalf("bound %v below the empirical risk %v", mc, risk)
		}
	}
}

func TestMcAllesterFormula(t *testing.T) {
	// A tiny case by hand: R̂ = 0.1, KL = 5, m = 100, δ = 0.05.
	c := (5 + math.Log(2*10/0.05)) / 100
	got, err := McAllesterComplexity(5, 100, 0.05)
	if err != nil || math.Abs(got-c) > 1e-15 {
		t.Fatalf("complexity %v (%v), want %v", got, err, c)
	}
	b, _ := McAllesterBound(0.1, 5, 100, 0.05)
	if kl := klBernoulli(0.1, b); math.Abs(kl-c) > 1e-9 {
		t.Errorf("kl(0.1‖bound) = %v, want %v", kl, c)
	}
	pin, _ := PinskerBound(0.1, 5, 100, 0.05)
	if want := 0.1 + math.Sqrt(c/2); math.Abs(pin-want) > 1e-15 {
		t.Errorf("Pinsker %v, want %v", pin, want)
	}
	quad, _ := QuadraticBound(0.1, 5, 100, 0.05)
	if want := math.Pow(math.Sqrt(0.1+c/2)+math.Sqrt(c/2), 2); math.Abs(quad-want) > 1e-15 {
		t.Errorf("quadratic %v, want %v", quad, want)
	}
	for _, bad := range []func() error{
		func() error { _, err := McAllesterBound(1.2, 1, 10, 0.05); return err },
		func() error { _, err := McAllesterBound(0.1, -1, 10, 0.05); return err },
		func() error { _, err := McAllesterBound(0.1, 1, 0, 0.05); return err },
		func() error { _, err := McAllesterBound(0.1, 1, 10, 1); return err },
		func() error { _, err := PinskerBound(0.1, math.NaN(), 10, 0.05); return err },
		func() error { _, err := QuadraticBound(-0.1, 1, 10, 0.05); return err },
	} {
		if err := bad(); !errors.Is(err, ErrKLDomain) {
			t.Errorf("bad argument: err %v", err)
		}
	}
}

func TestFedBoundDoubleInversion(t *testing.T) {
	r, err := FedBound(0.12, 1000, 0.01, 300, 27000, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	rn, _ := KLInverse(0.12, math.Log(200)/1000)
	c := (300 + math.Log(2*math.Sqrt(27000)/0.05)) / 27000
	want, _ := KLInverse(rn, c)
	if r.RiskUpper != rn || math.Abs(r.Complexity-c) > 1e-16 || r.Bound != want {
		t.Fatalf("FedBound %+v, want R̂ⁿ %v complexity %v bound %v", r, rn, c, want)
	}
	if !(r.SamplingAdd > 0) || r.Bound < r.NoSampling || math.Abs(r.Confidence-0.94) > 1e-15 {
		t.Errorf("sampling term %v, bound %v vs %v, confidence %v", r.SamplingAdd, r.Bound, r.NoSampling, r.Confidence)
	}
	// More samples, a smaller sampling term.
	r2, _ := FedBound(0.12, 100000, 0.01, 300, 27000, 0.05)
	if !(r2.SamplingAdd < r.SamplingAdd) {
		t.Errorf("sampling term %v at n = 1e5 not below %v at n = 1e3", r2.SamplingAdd, r.SamplingAdd)
	}
	for _, bad := range []func() error{
		func() error { _, err := FedBound(0.1, 0, 0.01, 1, 10, 0.05); return err },
		func() error { _, err := FedBound(0.1, 10, 0.96, 1, 10, 0.05); return err },
		func() error { _, err := FedBound(1.5, 10, 0.01, 1, 10, 0.05); return err },
	} {
		if err := bad(); !errors.Is(err, ErrKLDomain) {
			t.Errorf("bad argument: err %v", err)
		}
	}
}

// The McAllester bound holds on a synthetic task with a known risk: a
// fixed classifier (Q = P, KL = 0) with true error 0.2, empirical risks of
// m = 200 Bernoulli(0.2) losses; with δ = 0.05 the bound may fail in at
// most 5% of the samples (in fact it never does, being conservative).
func TestMcAllesterHoldsOnBernoulli(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const trials, m, risk = 2000, 200, 0.2
	fails := 0
	for range trials {
		k := 0
		for range m {
			if r.Float64() < risk {
				k++
			}
		}
		b, _ := McAllesterBound(float64(k)/m, 0, m, 0.05)
		if b < risk {
			fails++
		}
	}
	if fails > trials/20 {
		t.Errorf("bound below the true risk in %d of %d samples (δ = 0.05)", fails, trials)
	}
}

// The bound grows with the empirical risk and the KL, shrinks with m and
// with δ, and FEDBOUND's grows with the Monte Carlo error.
func TestBoundsMonotone(t *testing.T) {
	prev := 0.0
	for _, r := range []float64{0, 0.01, 0.05, 0.1, 0.3, 0.6, 0.9, 1} {
		b, _ := McAllesterBound(r, 10, 1000, 0.05)
		if b < prev {
			t.Fatalf("bound decreases in the risk at %v", r)
		}
		prev = b
	}
	prev = 0
	for _, kl := range []float64{0, 1, 10, 100, 1000, 1e4} {
		b, _ := McAllesterBound(0.1, kl, 1000, 0.05)
		if b < prev {
			t.Fatalf("bound decreases in KL at %v", kl)
		}
		prev = b
	}
	prev = 2
	for _, m := range []int{1, 2, 10, 100, 1000, 1e5, 1e7} {
		b, _ := McAllesterBound(0.1, 10, m, 0.05)
		if b > prev {
			t.Fatalf("bound increases in m at %d", m)
		}
		prev = b
	}
	prev = 2
	for _, d := range []float64{1e-6, 1e-3, 0.01, 0.05, 0.2, 0.9} {
		b, _ := McAllesterBound(0.1, 10, 1000, d)
		if b > prev {
			t.Fatalf("bound increases in δ at %v", d)
		}
		prev = b
	}
	prev = 0
	for _, e := range []float64{0, 0.02, 0.1, 0.5, 1} {
		r, _ := FedBound(e, 5000, 0.01, 10, 1000, 0.05)
		if r.Bound < prev || r.Bound < r.RiskUpper || r.RiskUpper < e {
			t.Fatalf("FEDBOUND at err %v: %+v", e, r)
		}
		prev = r.Bound
	}
}

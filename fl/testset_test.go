package fl

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pacpfl/pacpfl/data"
)

// klDirect is kl(q‖p) of two Bernoulli means, written out.
func klDirect(q, p float64) float64 {
	s := 0.0
	if q > 0 {
		s += q * math.Log(q/p)
	}
	if q < 1 {
		s += (1 - q) * math.Log((1-q)/(1-p))
	}
	return s
}

// TestNewTestSetCertificatesDirect checks the certificates of a tiny case
// against a direct computation: the pooled and per-client means by hand,
// the bound the p ≥ mean at which kl(mean‖p) = ln(1/δ)/n; the bound ≥ the
// mean, ≤ 1, and growing as δ shrinks.
func TestNewTestSetCertificatesDirect(t *testing.T) {
	existing := []ClientLoss{{Sum: 1.5, N: 3}, {Sum: 0.25, N: 1}, {Sum: 0, N: 0}}
	new := []ClientLoss{{Sum: 0.2, N: 2}, {Sum: 0.9, N: 3}}
	prev := map[string]float64{}
	for _, delta := range []float64{0.5, 0.2, 0.05, 0.01, 0.001} {
		c, err := NewTestSetCertificates(existing, new, delta)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name string
			got  *TestSetTerms
			n    int
			mean float64
		}{
			{"existing", &c.Existing, 4, 1.75 / 4},
			{"new", c.New, 2, (0.1 + 0.3) / 2},
			{"new pooled", c.NewPooled, 5, 1.1 / 5},
		} {
			g := tc.got
			if g.N != tc.n || math.Abs(g.Mean-tc.mean) > 1e-15 || g.Delta != delta {
				t.Errorf("%s, δ %v: %+v, want n %d, mean %v", tc.name, delta, *g, tc.n, tc.mean)
			}
			if k := klDirect(g.Mean, g.Bound); math.Abs(k-math.Log(1/delta)/float64(tc.n)) > 1e-9 {
				t.Errorf("%s, δ %v: kl(mean‖bound) %v, want ln(1/δ)/n %v", tc.name, delta, k,
					math.Log(1/delta)/float64(tc.n))
			}
			if !(g.Bound >= g.Mean && g.Bound <= 1) || g.Bound <= prev[tc.name] {
				t.Errorf("%s, δ %v: bound %v, mean %v, at the larger δ %v", tc.name, delta, g.Bound, g.Mean,
					prev[tc.name])
			}
			prev[tc.name] = g.Bound
		}
	}
	if c, err := NewTestSetCertificates(existing, []ClientLoss{{N: 0}}, 0.05); err != nil || c.New != nil {
		t.Errorf("new clients without test points: %+v, %v", c, err)
	}
	for _, bad := range [][]ClientLoss{{{Sum: 2, N: 1}}, {{Sum: -0.1, N: 1}}, {{Sum: math.NaN(), N: 1}}, {{N: 0}}} {
		if _, err := NewTestSetCertificates(bad, nil, 0.05); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// TestTestSetCertificatesGPDirect recomputes the GP certificates of the
// hyper-prior mean's particle from PredictGroup's means.
func TestTestSetCertificatesGPDirect(t *testing.T) {
	ds, err := data.Polynomial(smallPoly(4))
	if err != nil {
		t.Fatal(err)
	}
	g := NewGPModel(ds.D)
	phi := g.Model.HyperPriorMean()
	const clip = 0.5
	c, err := TestSetCertificatesGP(ds, g, phi, clip, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	losses := func(cs []data.ClientData) (pooled float64, n int, per []float64) {
		preds, err := g.PredictGroup(phi, cs)
		if err != nil {
			t.Fatal(err)
		}
		s := 0.0
		for i := range cs {
			ci := 0.0
			for j, y := range cs[i].YTest {
				d := y - preds[i].Mean[j]
				ci += math.Min(d*d, clip) / clip
			}
			s += ci
			n += len(cs[i].YTest)
			per = append(per, ci/float64(len(cs[i].YTest)))
		}
		return s / float64(n), n, per
	}
	me, ne, _ := losses(ds.Existing)
	_, _, per := losses(ds.New)
	mn := 0.0
	for _, v := range per {
		mn += v / float64(len(per))
	}
	be, _ := KLInverse(me, math.Log(10)/float64(ne))
	bn, _ := KLInverse(mn, math.Log(10)/float64(len(per)))
	if c.Loss != "clipped_square" || c.Clip != clip || c.Existing.N != ne || math.Abs(c.Existing.Mean-me) > 1e-12 ||
		math.Abs(c.Existing.Bound-be) > 1e-12 || c.New == nil || c.New.N != len(ds.New) ||
		math.Abs(c.New.Mean-mn) > 1e-12 || math.Abs(c.New.Bound-bn) > 1e-12 {
		t.Errorf("%+v (new %+v), want existing %v ≤ %v over %d, new %v ≤ %v", c, c.New, me, be, ne, mn, bn)
	}
}

// TestTestSetCertificatesZeroOne checks the 0–1 certificates recover the
// error counts from the accuracies and skip clients without test points.
func TestTestSetCertificatesZeroOne(t *testing.T) {
	cs := []data.ClientData{{YTest: make([]float64, 3)}, {YTest: make([]float64, 7)}, {}}
	nw := []data.ClientData{{YTest: make([]float64, 4)}, {YTest: make([]float64, 5)}}
	c, err := TestSetCertificatesZeroOne(cs, nw, []float64{100.0 * 2 / 3, 100.0 * 6 / 7, math.NaN()},
		[]float64{75, 20}, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if c.Loss != "zero_one" || c.Existing.N != 10 || math.Abs(c.Existing.Mean-0.2) > 1e-15 || c.New.N != 2 ||
		math.Abs(c.New.Mean-0.525) > 1e-15 || c.NewPooled.N != 9 || math.Abs(c.NewPooled.Mean-5.0/9) > 1e-15 {
		t.Errorf("%+v, new %+v, pooled %+v", c, c.New, c.NewPooled)
	}
	if _, err := TestSetCertificatesZeroOne(cs, nw, []float64{1}, []float64{1, 2}, 0.05); err == nil {
		t.Error("too few accuracies accepted")
	}
}

// TestTestSetCertificatesHoldInSimulation draws many federations from a
// known environment and counts how often each certificate falls below the
// risk it bounds: at most a δ fraction (with 3 standard deviations of
// slack). A client's risk is r = U² (U uniform on [0, 1]: mean 1/3 over
// the environment), its losses continuous in [0, 1] with mean r:
// r + (V − ½)·min(r, 1 − r), V uniform. The existing clients' certificate
// bounds the mean of their risks weighted by test points, the new
// clients' the environment's mean risk 1/3.
func TestTestSetCertificatesHoldInSimulation(t *testing.T) {
	const reps, delta = 3000, 0.1
	rng := rand.New(rand.NewPCG(7, 11))
	draw := func(n int) (ClientLoss, float64) {
		u := rng.Float64()
		r := u * u
		l := ClientLoss{N: n}
		for range n {
			l.Sum += r + (rng.Float64()-0.5)*math.Min(r, 1-r)
		}
		return l, r
	}
	failE, failN := 0, 0
	for range reps {
		var ex, nw []ClientLoss
		risk, w := 0.0, 0
		for i := range 5 {
			n := 5 + 3*i
			l, r := draw(n)
			ex = append(ex, l)
			risk += r * float64(n)
			w += n
		}
		for range 20 {
			l, _ := draw(4)
			nw = append(nw, l)
		}
		c, err := NewTestSetCertificates(ex, nw, delta)
		if err != nil {
			t.Fatal(err)
		}
		if c.Existing.Bound < risk/float64(w) {
			failE++
		}
		if c.New.Bound < 1.0/3 {
			failN++
		}
	}
	limit := delta + 3*math.Sqrt(delta*(1-delta)/reps)
	for name, f := range map[string]int{"existing": failE, "new": failN} {
		if r := float64(f) / reps; r > limit {
			t.Errorf("%s clients' certificate below the risk in %v of %d federations (δ = %v)", name, r, reps, delta)
		}
	}
}

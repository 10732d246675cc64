package fl

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/internal/emulated"
	"gonum.org/v1/gonum/mat"
)

// simpson integrates f over [a, b] with n (even) intervals.
func simpson(f func(float64) float64, a, b float64, n int) float64 {
	h := (b - a) / float64(n)
	s := f(a) + f(b)
	for i := 1; i < n; i++ {
		w := 2.0
		if i%2 == 1 {
			w = 4
		}
		s += w * f(a+float64(i)*h)
	}
	return s * h / 3
}

func TestExpectedClippedSquare(t *testing.T) {
	for _, c := range []struct{ mu, s2, c float64 }{
		{0, 1, 1}, {0.3, 0.04, 1}, {-2, 0.5, 1}, {1.5, 2, 4}, {0, 1e-6, 0.5}, {5, 0.1, 1}, {-0.7, 3, 0.2},
	} {
		s := math.Sqrt(c.s2)
		f := func(z float64) float64 {
			u := (z - c.mu) / s
			return math.Min(z*z, c.c) / c.c * math.Exp(-0.5*u*u) / (s * math.Sqrt(2*math.Pi))
		}
		want := simpson(f, c.mu-12*s, c.mu+12*s, 200000)
		got := ExpectedClippedSquare(c.mu, c.s2, c.c)
		if math.Abs(got-want) > 1e-8 {
			t.Errorf("E min(Z², %g)/%g, Z ∼ N(%g, %g) = %.12g, want %.12g", c.c, c.c, c.mu, c.s2, got, want)
		}
	}
	if got := ExpectedClippedSquare(0.5, 0, 1); got != 0.25 {
		t.Errorf("s² = 0: %v, want 0.25", got)
	}
	if got := ExpectedClippedSquare(3, 0, 4); got != 1 {
		t.Errorf("s² = 0 beyond the clip: %v, want 1", got)
	}
	if got := ClippedSquare(1, 0.5, 1); got != 0.25 {
		t.Errorf("ClippedSquare = %v", got)
	}
}

// rbf is a test kernel matrix on 1-d inputs.
func rbf(x []float64, ell, sf2 float64) []float64 {
	m := len(x)
	K := make([]float64, m*m)
	for i := range x {
		for j := range x {
			d := (x[i] - x[j]) / ell
			K[i*m+j] = sf2 * math.Exp(-0.5*d*d)
		}
	}
	return K
}

// TestGPCertTermsDirect checks the KL and the losses against the textbook
// formulas with dense inverses.
func TestGPCertTermsDirect(t *testing.T) {
	x := []float64{-0.8, -0.1, 0.3, 0.9}
	y := []float64{0.5, -0.2, 0.1, 1.2}
	mean := []float64{0.1, 0, -0.1, 0.2}
	K := rbf(x, 0.5, 1.3)
	s2, c := 0.09, 1.0
	got, err := gpCertTerms(y, mean, K, s2, c)
	if err != nil {
		t.Fatal(err)
	}
	m := len(y)
	Km := mat.NewDense(m, m, K)
	A := mat.NewDense(m, m, nil)
	A.Add(Km, diagDense(m, s2))
	var Ai mat.Dense
	if err := Ai.Inverse(A); err != nil {
		t.Fatal(err)
	}
	// Σ_f = K − K A⁻¹ K, μ_f = mean + K A⁻¹ (y − mean).
	var KAi, S mat.Dense
	KAi.Mul(Km, &Ai)
	S.Mul(&KAi, Km)
	S.Sub(Km, &S)
	r := mat.NewVecDense(m, nil)
	for i := range y {
		r.SetVec(i, y[i]-mean[i])
	}
	var dmu mat.VecDense
	dmu.MulVec(&KAi, r)
	var Ki mat.Dense
	if err := Ki.Inverse(Km); err != nil {
		t.Fatal(err)
	}
	var KiS mat.Dense
	KiS.Mul(&Ki, &S)
	quad := mat.Inner(&dmu, &Ki, &dmu)
	want := 0.5 * (mat.Trace(&KiS) + quad - float64(m) + math.Log(mat.Det(Km)) - math.Log(mat.Det(&S)))
	if math.Abs(got.KL-want) > 1e-8*math.Max(1, want) {
		t.Errorf("KL = %.12g, want %.12g", got.KL, want)
	}
	wl, wp := 0.0, 0.0
	for j := 0; j < m; j++ {
		wl += ExpectedClippedSquare(y[j]-mean[j]-dmu.AtVec(j), S.At(j, j), c)
		wp += ExpectedClippedSquare(y[j]-mean[j], K[j*m+j], c)
	}
	if math.Abs(got.LossSum-wl) > 1e-10 || math.Abs(got.PriorLossSum-wp) > 1e-12 {
		t.Errorf("losses %v, %v; want %v, %v", got.LossSum, got.PriorLossSum, wl, wp)
	}
}

func diagDense(m int, v float64) *mat.Dense {
	d := mat.NewDense(m, m, nil)
	for i := 0; i < m; i++ {
		d.Set(i, i, v)
	}
	return d
}

func TestEmpiricalBernsteinUpper(t *testing.T) {
	xs := []float64{0.1, 0.3, 0.2, 0.2}
	got, err := EmpiricalBernsteinUpper(xs, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	v := (0.01 + 0.01 + 0 + 0) / 3
	l := math.Log(20)
	want := 0.2 + math.Sqrt(2*v*l/4) + 7*l/9
	if math.Abs(got-math.Min(want, 1)) > 1e-15 {
		t.Errorf("got %v, want %v", got, want)
	}
	for _, bad := range [][]float64{{0.5}, {0.5, 1.5}, {math.NaN(), 0}} {
		if _, err := EmpiricalBernsteinUpper(bad, 0.1); !errors.Is(err, ErrKLDomain) {
			t.Errorf("%v: err %v", bad, err)
		}
	}
}

func TestTestSetBound(t *testing.T) {
	prev := 0.0
	for _, d := range []float64{0.5, 0.1, 0.05, 0.01} {
		got, err := TestSetBound(0.1, 200, d)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := KLInverse(0.1, math.Log(1/d)/200)
		if got != want || got <= prev {
			t.Errorf("δ = %v: %v (want %v, above %v)", d, got, want, prev)
		}
		prev = got
	}
	if _, err := TestSetBound(1.2, 10, 0.1); err == nil {
		t.Error("mean above 1 accepted")
	}
}

// TestMixtureKLUpper checks the closed form for k = 1, the pairing for
// swapped centres, and that the bound lies above the exact KL of two 1-d
// mixtures (by quadrature).
func TestMixtureKLUpper(t *testing.T) {
	q := GaussianMixture{Centers: []float64{1, 2}, K: 1, Dim: 2, Std: 0.5}
	p := GaussianMixture{Centers: []float64{0, 0}, K: 1, Dim: 2, Std: 1}
	got, err := MixtureKLUpper(q, p)
	if err != nil {
		t.Fatal(err)
	}
	want := 2*0.5*(0.25-1-2*math.Log(0.5)) + 5.0/2
	if math.Abs(got-want) > 1e-12 {
		t.Errorf("k = 1: %v, want %v", got, want)
	}
	q2 := GaussianMixture{Centers: []float64{0, 3}, K: 2, Dim: 1, Std: 0.3}
	p2 := GaussianMixture{Centers: []float64{3, 0}, K: 2, Dim: 1, Std: 0.3}
	if got, _ := MixtureKLUpper(q2, p2); math.Abs(got) > 1e-12 {
		t.Errorf("swapped centres: %v, want 0", got)
	}
	q3 := GaussianMixture{Centers: []float64{-1, 2}, K: 2, Dim: 1, Std: 0.4}
	p3 := GaussianMixture{Centers: []float64{0, 1.5}, K: 2, Dim: 1, Std: 0.8}
	dens := func(g GaussianMixture, x float64) float64 {
		s := 0.0
		for _, c := range g.Centers {
			u := (x - c) / g.Std
			s += math.Exp(-0.5*u*u) / (g.Std * math.Sqrt(2*math.Pi))
		}
		return s / float64(g.K)
	}
	exact := simpson(func(x float64) float64 {
		a := dens(q3, x)
		if a == 0 {
			return 0
		}
		return a * math.Log(a/dens(p3, x))
	}, -10, 12, 100000)
	up, _ := MixtureKLUpper(q3, p3)
	if !(up >= exact) {
		t.Errorf("bound %v below the exact KL %v", up, exact)
	}
	if _, err := MixtureKLUpper(q3, p); err == nil {
		t.Error("mismatched mixtures accepted")
	}
}

func TestSplit(t *testing.T) {
	s := NewSplit(11, 3)
	if len(s.A) != 5 || len(s.B) != 6 {
		t.Fatalf("split %v", s)
	}
	all := slices.Sorted(slices.Values(slices.Concat(s.A, s.B)))
	for i, v := range all {
		if v != i {
			t.Fatalf("split %v does not partition 0..10", s)
		}
	}
	if err := s.Validate(11); err != nil {
		t.Error(err)
	}
	for _, bad := range []Split{{A: []int{0, 1}, B: []int{1, 2}}, {A: []int{0}, B: nil}, {B: []int{5}}} {
		if err := bad.Validate(5); err == nil {
			t.Errorf("split %v accepted", bad)
		}
	}
}

// constEval is an evaluator whose terms do not depend on the prior.
func constEval(terms []CertTerms) CertEvalFunc {
	return func(phi []float64, i int, scale float64) (CertTerms, error) { return terms[i], nil }
}

// TestCertifyDirect recomputes the certificate by hand where every draw
// gives the same terms (zero sample variance).
func TestCertifyDirect(t *testing.T) {
	terms := []CertTerms{{LossSum: 1, KL: 2, PriorLossSum: 3}, {LossSum: 2, KL: 1, PriorLossSum: 4}}
	m := []int{10, 10}
	q := GaussianMixture{Centers: []float64{0.1, 0.2}, K: 1, Dim: 2}
	p := GaussianMixture{Centers: []float64{0, 0}, K: 1, Dim: 2}
	o := CertifyOptions{
		Delta:       0.1,
		Widths:      []float64{0.05},
		PriorWidths: []float64{0.1},
		Scales:      []float64{1},
		Draws:       50,
		FinalDraws:  50,
	}
	c, err := Certify(q, p, m, constEval(terms), o)
	if err != nil {
		t.Fatal(err)
	}
	l := math.Log(2 / 0.025)
	lossUp := 3.0/20 + 7*l/(3*49)
	cap := 2*3.0 + 10
	klUp := math.Min(3/cap+7*l/(3*49), 1) * cap
	q.Std, p.Std = 0.05, 0.1
	hkl, _ := MixtureKLUpper(q, p)
	cx := (hkl + klUp + math.Log(2*math.Sqrt(20)/0.05)) / 20
	want, _ := KLInverse(lossUp, cx)
	if math.Abs(c.Bound-want) > 1e-12 || math.Abs(c.LossUpper-lossUp) > 1e-12 ||
		math.Abs(c.ClientKLUpper-klUp) > 1e-9 {
		t.Errorf("certificate %+v, want bound %v (loss ≤ %v, KL ≤ %v)", c, want, lossUp, klUp)
	}
	if c.N != 20 || c.Clients != 2 || c.Grid != 1 || c.Fallbacks != 0 {
		t.Errorf("counts %+v", c)
	}
	// Monotone in δ.
	prev := 0.0
	for _, d := range []float64{0.5, 0.2, 0.05, 0.01} {
		o.Delta = d
		c, err := Certify(q, p, m, constEval(terms), o)
		if err != nil {
			t.Fatal(err)
		}
		if !(c.Bound > prev) {
			t.Errorf("δ = %v: bound %v not above %v", d, c.Bound, prev)
		}
		prev = c.Bound
	}
	// A larger prior grid costs (union bound) unless a point is better;
	// a larger posterior grid does not (the final draws are fresh).
	o.Delta = 0.1
	o.Scales = []float64{1, 1}
	if c2, _ := Certify(q, p, m, constEval(terms), o); c2.Bound != c.Bound {
		t.Errorf("temperature grid of 2: %v, want %v", c2.Bound, c.Bound)
	}
	o.PriorWidths = []float64{0.1, 0.1}
	if c2, _ := Certify(q, p, m, constEval(terms), o); !(c2.Bound > c.Bound) {
		t.Errorf("prior grid of 2: %v, not above %v", c2.Bound, c.Bound)
	}
	for _, bad := range []CertifyOptions{{Delta: 1.5, Widths: o.Widths, PriorWidths: o.PriorWidths, Scales: o.Scales},
		{Widths: nil, PriorWidths: o.PriorWidths, Scales: o.Scales},
		{Widths: []float64{-1}, PriorWidths: o.PriorWidths, Scales: o.Scales}} {
		if _, err := Certify(q, p, m, constEval(terms), bad); err == nil {
			t.Errorf("options %+v accepted", bad)
		}
	}
	if _, err := Certify(q, p, []int{1, 2}, constEval(terms), o); err == nil {
		t.Error("3 samples accepted")
	}
}

// simClient is a client of the simulated environment: f ∼ GP(0, RBF(0.4)),
// x ∼ U(−1, 1), y = f(x) + N(0, 0.2²), m training and t test points.
type simClient struct{ x, y, xt, yt []float64 }

func drawSimClient(rng *rand.Rand, m, t int) simClient {
	x := make([]float64, m+t)
	for i := range x {
		x[i] = 2*rng.Float64() - 1
	}
	K := rbf(x, 0.4, 1)
	n := len(x)
	for i := 0; i < n; i++ {
		K[i*n+i] += 1e-8
	}
	var ch mat.Cholesky
	if !ch.Factorize(mat.NewSymDense(n, K)) {
		panic("sim kernel")
	}
	var L mat.TriDense
	ch.LTo(&L)
	z := mat.NewVecDense(n, nil)
	for i := 0; i < n; i++ {
		z.SetVec(i, rng.NormFloat64())
	}
	var f mat.VecDense
	f.MulVec(&L, z)
	y := make([]float64, n)
	for i := range y {
		y[i] = f.AtVec(i) + 0.2*rng.NormFloat64()
	}
	return simClient{x: x[:m], y: y[:m], xt: x[m:], yt: y[m:]}
}

// simTerms are the certificate's terms of a sim client under the prior
// GP(0, RBF(e^φ₀)) with noise 0.2², and its test loss (the true risk
// estimated on t fresh points).
func (c simClient) terms(phi []float64, scale float64) (CertTerms, float64) {
	ell := math.Exp(phi[0])
	tr, err := gpCertTerms(c.y, make([]float64, len(c.y)), rbf(c.x, ell, 1), 0.04/scale, 1)
	if err != nil {
		panic(err)
	}
	m := len(c.x)
	all := append(append([]float64(nil), c.x...), c.xt...)
	K := rbf(all, ell, 1)
	n := len(all)
	post, err := newGPPost(c.y, make([]float64, m), rbf(c.x, ell, 1), 0.04/scale)
	if err != nil {
		panic(err)
	}
	linv := post.lowerInverse()
	risk := 0.0
	for s := m; s < n; s++ {
		mu, v := 0.0, K[s*n+s]
		for l := 0; l < m; l++ {
			mu += K[l*n+s] * post.alpha[l]
		}
		for r := 0; r < m; r++ {
			w := 0.0
			for l := 0; l <= r; l++ {
				w += linv[r*m+l] * K[l*n+s]
			}
			v -= w * w
		}
		risk += ExpectedClippedSquare(c.yt[s-m]-mu, math.Max(v, 0), 1)
	}
	return tr, risk / float64(n-m)
}

// TestCertifyHoldsInSimulation draws many federations from one known
// environment and counts how often the certificate lies below the true
// risk of the certified model (estimated on fresh points and fresh
// hyper-posterior draws): at most a δ fraction, with slack.
func TestCertifyHoldsInSimulation(t *testing.T) {
	if emulated.Is() {
		// 40 simulated federations of scalar GPs: arithmetic that does not
		// depend on the architecture, and five minutes under qemu.
		t.Skip("architecture-independent simulation; skipped under emulation (it runs natively)")
	}
	const runs, nc, m, delta = 40, 6, 10, 0.2
	rng := rand.New(rand.NewPCG(7, 1))
	fails := 0
	for r := 0; r < runs; r++ {
		cl := make([]simClient, nc)
		for i := range cl {
			cl[i] = drawSimClient(rng, m, 100)
		}
		ms := make([]int, nc)
		for i := range ms {
			ms[i] = m
		}
		eval := func(phi []float64, i int, scale float64) (CertTerms, error) {
			tr, _ := cl[i].terms(phi, scale)
			return tr, nil
		}
		// The hyper-posterior is centred on a length scale picked with the
		// data (the best training loss on a small grid); the hyper-prior
		// is data-free.
		bestPhi, bestLoss := 0.0, math.Inf(1)
		for _, lp := range []float64{math.Log(0.2), math.Log(0.4), math.Log(0.8)} {
			s := 0.0
			for i := range cl {
				tr, _ := cl[i].terms([]float64{lp}, 1)
				s += tr.LossSum
			}
			if s < bestLoss {
				bestPhi, bestLoss = lp, s
			}
		}
		q := GaussianMixture{Centers: []float64{bestPhi}, K: 1, Dim: 1}
		p := GaussianMixture{Centers: []float64{math.Log(0.4)}, K: 1, Dim: 1}
		cert, err := Certify(
			q,
			p,
			ms,
			eval,
			CertifyOptions{Delta: delta, Widths: []float64{0.1}, PriorWidths: []float64{1},
				Scales: []float64{1, 0.3}, Draws: 30, Seed: uint64(r)},
		)
		if err != nil {
			t.Fatal(err)
		}
		// True risk: E_{P∼𝒬} of the clients' mean risk, by fresh draws.
		risk := 0.0
		const draws = 30
		for j := 0; j < draws; j++ {
			phi := []float64{bestPhi + 0.1*rng.NormFloat64()}
			for i := range cl {
				_, ri := cl[i].terms(phi, cert.Scale)
				risk += ri / (draws * nc)
			}
		}
		if r == 0 {
			t.Logf(
				"run 0: certificate %.3f (loss %.3f, complexity %.3f), true risk %.3f",
				cert.Bound,
				cert.Loss,
				cert.Complexity,
				risk,
			)
			if !(cert.Bound < 1) {
				t.Errorf("vacuous certificate %v in the simulation", cert.Bound)
			}
		}
		if risk > cert.Bound {
			fails++
		}
	}
	sd := math.Sqrt(delta * (1 - delta) / runs)
	if float64(fails)/runs > delta+3*sd {
		t.Errorf("certificate failed %d of %d times (δ = %v)", fails, runs, delta)
	}
}

// TestCertifyGPPriorFromAOnly checks that the hyper-prior depends on A's
// data alone and the bound counts B's samples alone: changing B's targets
// leaves the prior particles unchanged, and an overlapping split fails.
func TestCertifyGPPriorFromAOnly(t *testing.T) {
	ds, err := data.Polynomial(smallPoly(5))
	if err != nil {
		t.Fatal(err)
	}
	o := PACPFLOptions{Server: Config{K: 2, Rounds: 10, ClientsPerRound: 4, LR: 1e-2, Tau: 0.5, Seed: 4}, SigmaP: 0.5}
	res, g, err := trainPACPFL(ds, NewGPModel(ds.D), o)
	if err != nil {
		t.Fatal(err)
	}
	co := GPCertifyOptions{Seed: 2, TestDraws: 2, Certify: CertifyOptions{Draws: 4, Widths: []float64{0.01},
		PriorWidths: []float64{0.1}, Scales: []float64{0.3}}}
	c1, err := CertifyGP(ds, g, o, res.Particles, co)
	if err != nil {
		t.Fatal(err)
	}
	nB := len(c1.Split.B)
	if c1.Existing.Clients != nB || c1.Existing.N != 10*nB {
		t.Errorf("bound over %d clients / %d samples, want B's %d / %d", c1.Existing.Clients, c1.Existing.N, nB, 10*nB)
	}
	// The new clients' test-set bound, recomputed.
	preds, err := g.PredictGroup(res.Particles, ds.New)
	if err != nil {
		t.Fatal(err)
	}
	per := 0.0
	for i, c := range ds.New {
		s := 0.0
		for j, y := range c.YTest {
			s += ClippedSquare(y, preds[i].Mean[j], 1)
		}
		per += s / float64(len(c.YTest)) / float64(len(ds.New))
	}
	want, _ := TestSetBound(per, len(ds.New), 0.05)
	ts := c1.TestSet
	if ts == nil || ts.New == nil || math.Abs(ts.New.Mean-per) > 1e-12 || math.Abs(ts.New.Bound-want) > 1e-12 ||
		ts.New.N != len(ds.New) || !(ts.NewPooled.Bound > per) {
		t.Fatalf("new clients: %+v, want %v ≤ %v", ts, per, want)
	}
	if !(ts.Existing.Bound > 0 && ts.Existing.Bound < 1 && c1.Existing.Bound > c1.Existing.Loss) {
		t.Errorf("certificates %+v", c1)
	}
	for _, i := range c1.Split.B {
		for j := range ds.Existing[i].Y {
			ds.Existing[i].Y[j] += 0.5
		}
	}
	c2, err := CertifyGP(ds, g, o, res.Particles, co)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c1.PriorParticles, c2.PriorParticles) {
		t.Error("the hyper-prior changed with the data of B")
	}
	if c1.Existing.Loss == c2.Existing.Loss {
		t.Error("the bound did not see the data of B")
	}
	co.Split = &Split{A: []int{0, 1, 2}, B: []int{2, 3, 4}}
	if _, err := CertifyGP(ds, g, o, res.Particles, co); err == nil {
		t.Error("overlapping split accepted")
	}
}

// TestCertifyFallback checks the capped posterior mapping: draws whose KL
// sum exceeds the cap use the priors (KL 0, the prior's loss).
func TestCertifyFallback(t *testing.T) {
	eval := func(phi []float64, i int, scale float64) (CertTerms, error) {
		if math.Abs(phi[0]) < 0.5 {
			return CertTerms{LossSum: 1, KL: 1, PriorLossSum: 5}, nil
		}
		return CertTerms{LossSum: 1, KL: 1000, PriorLossSum: 5}, nil
	}
	q := GaussianMixture{Centers: []float64{0}, K: 1, Dim: 1}
	o := CertifyOptions{Widths: []float64{1}, PriorWidths: []float64{1}, Scales: []float64{1}, Draws: 400}
	c, err := Certify(q, q, []int{10}, eval, o)
	if err != nil {
		t.Fatal(err)
	}
	// P(|N(0,1)| ≥ 0.5) ≈ 0.617.
	frac := float64(c.Fallbacks) / float64(c.Draws)
	if c.Draws != 1600 || math.Abs(frac-0.617) > 0.1 || c.KLCap != 12 {
		t.Fatalf("%d fallbacks of %d, cap %v", c.Fallbacks, c.Draws, c.KLCap)
	}
	wantLoss := (frac*5 + (1-frac)*1) / 10
	wantKL := (1 - frac) * 1
	if math.Abs(c.Loss-wantLoss) > 1e-12 || math.Abs(c.ClientKL-wantKL) > 1e-12 {
		t.Errorf("loss %v KL %v, want %v %v", c.Loss, c.ClientKL, wantLoss, wantKL)
	}
}

// TestConcentrationBoundsHold draws many samples with a known mean and
// counts how often TestSetBound and EmpiricalBernsteinUpper fall below it:
// at most a δ fraction (with 3 standard deviations of slack), and not far
// below δ for the kl form (it is nearly exact for Bernoulli losses).
func TestConcentrationBoundsHold(t *testing.T) {
	const reps, n, p, delta = 4000, 50, 0.2, 0.1
	rng := rand.New(rand.NewPCG(3, 4))
	failKL, failEB := 0, 0
	xs := make([]float64, n)
	for r := 0; r < reps; r++ {
		s := 0.0
		for i := range xs {
			xs[i] = 0
			if rng.Float64() < p {
				xs[i] = 1
			}
			s += xs[i]
		}
		b, err := TestSetBound(s/n, n, delta)
		if err != nil {
			t.Fatal(err)
		}
		if b < p {
			failKL++
		}
		e, err := EmpiricalBernsteinUpper(xs, delta)
		if err != nil {
			t.Fatal(err)
		}
		if e < p {
			failEB++
		}
	}
	limit := delta + 3*math.Sqrt(delta*(1-delta)/reps)
	if f := float64(failKL) / reps; f > limit || f < delta/10 {
		t.Errorf("test-set bound below the mean in %v of the samples (δ = %v)", f, delta)
	}
	if f := float64(failEB) / reps; f > limit {
		t.Errorf("empirical Bernstein bound below the mean in %v of the samples (δ = %v)", f, delta)
	}
}

func TestGPCertificatesSentences(t *testing.T) {
	c := &GPCertificates{Clip: 1, Delta: 0.05, Split: Split{A: []int{0, 1}, B: []int{2, 3}},
		Existing: Certificate{Bound: 0.5, Clients: 2}, ExistingMeasured: 0.2, ExistingDeployed: 0.1,
		TestSet: &TestSetCertificates{Loss: "clipped_square", Clip: 1, Delta: 0.05,
			Existing: TestSetTerms{N: 40, Mean: 0.1, Bound: 0.12}, New: &TestSetTerms{N: 2, Mean: 0.1, Bound: 0.3},
			NewPooled: &TestSetTerms{N: 20, Mean: 0.1, Bound: 0.2}},
		PriorModel: &Certificate{Bound: 0.4}}
	s := c.Sentences()
	if len(s) != 4 {
		t.Fatalf("%d sentences", len(s))
	}
	for _, want := range []string{"0.500", "0.120", "0.300", "0.400"} {
		found := false
		for _, x := range s {
			found = found || strings.Contains(x, want)
		}
		if !found {
			t.Errorf("no sentence carries %s: %q", want, s)
		}
	}
}

// Every term of a certificate has a JSON name: the reports (pacpfl train
// --json) carry them all, under names that do not change with a Go field's.
func TestCertificateTermsHaveJSONNames(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[Certificate](), reflect.TypeFor[GPCertificates](),
		reflect.TypeFor[Split](), reflect.TypeFor[TestSetCertificates](), reflect.TypeFor[TestSetTerms]()} {
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" {
				t.Errorf("%s.%s has no JSON name", typ.Name(), f.Name)
			}
		}
	}
}

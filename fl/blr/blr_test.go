package blr

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
)

// clientData draws m rows of dimension d with targets from w = w0 + noise.
func clientData(rng *rand.Rand, m, d int, w0 []float64, noise float64) data.ClientData {
	w := make([]float64, d)
	for p := range w {
		w[p] = w0[p] + 0.3*rng.NormFloat64()
	}
	gen := func(rows int) ([]float64, []float64) {
		x := make([]float64, rows*d)
		y := make([]float64, rows)
		for j := 0; j < rows; j++ {
			for p := 0; p < d; p++ {
				x[j*d+p] = rng.NormFloat64()
				y[j] += x[j*d+p] * w[p]
			}
			y[j] += noise * rng.NormFloat64()
		}
		return x, y
	}
	var c data.ClientData
	c.X, c.Y = gen(m)
	c.XTest, c.YTest = gen(5)
	return c
}

// denseLogML is ln N(y | Xμ, s²XXᵀ + vI) from the m×m covariance with
// gonum: an independent reference for the D×D (Woodbury) evaluation.
func denseLogML(t *testing.T, x, y, mu []float64, s2, v float64, d int) float64 {
	m := len(y)
	X := mat.NewDense(m, d, x)
	var S mat.SymDense
	S.SymOuterK(s2, X)
	for j := 0; j < m; j++ {
		S.SetSym(j, j, S.At(j, j)+v)
	}
	var ch mat.Cholesky
	if !ch.Factorize(&S) {
		t.Fatal("reference covariance not PD")
	}
	r := mat.NewVecDense(m, nil)
	r.MulVec(X, mat.NewVecDense(d, append([]float64(nil), mu...)))
	r.SubVec(mat.NewVecDense(m, append([]float64(nil), y...)), r)
	var a mat.VecDense
	if err := ch.SolveVecTo(&a, r); err != nil {
		t.Fatal(err)
	}
	return -0.5*mat.Dot(r, &a) - 0.5*ch.LogDet() - 0.5*float64(m)*math.Log(2*math.Pi)
}

func TestLogMLMatchesDenseReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, d := range []int{1, 3, 6} {
		for _, m := range []int{1, 4, 17} {
			model, err := New(d, 0.4, 1.3, true)
			if err != nil {
				t.Fatal(err)
			}
			c := clientData(rng, m, d, make([]float64, d), 0.4)
			phi := make([]float64, d+1)
			for p := range phi {
				phi[p] = 0.5 * rng.NormFloat64()
			}
			got, _, err := model.LogML(phi, c.X, c.Y)
			if err != nil {
				t.Fatal(err)
			}
			want := denseLogML(t, c.X, c.Y, phi[:d], math.Exp(phi[d]), 0.16, d)
			if math.Abs(got-want) > 1e-10*math.Max(1, math.Abs(want)) {
				t.Errorf("d=%d m=%d: ln Z = %.15g, dense reference %.15g", d, m, got, want)
			}
		}
	}
}

func TestGradientMatchesFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, learn := range []bool{false, true} {
		model, _ := New(3, 0.5, 0.8, learn)
		c := clientData(rng, 9, 3, []float64{1, -1, 0.5}, 0.5)
		phi := make([]float64, model.Dim())
		for p := range phi {
			phi[p] = 0.4 * rng.NormFloat64()
		}
		_, grad, err := model.LogML(phi, c.X, c.Y)
		if err != nil {
			t.Fatal(err)
		}
		const h = 1e-5
		for p := range phi {
			pp := append([]float64(nil), phi...)
			pp[p] += h
			fp, _, _ := model.LogML(pp, c.X, c.Y)
			pp[p] -= 2 * h
			fm, _, _ := model.LogML(pp, c.X, c.Y)
			fd := (fp - fm) / (2 * h)
			if math.Abs(fd-grad[p]) > 1e-6*math.Max(1, math.Abs(fd)) {
				t.Errorf("learnScale=%v ∂/∂φ[%d] = %.10g, finite differences %.10g", learn, p, grad[p], fd)
			}
		}
	}
}

// TestTemperedBatch checks the mini-batch objective against quadrature of
// its definition, ln ∫ N(w|μ,s²) Π_{j∈batch} N(y_j|x_j w, σ²)^{m/b} dw, in
// one dimension, and its gradient against finite differences.
func TestTemperedBatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	model, _ := New(1, 0.7, 0.9, true)
	cd := clientData(rng, 8, 1, []float64{0.6}, 0.7)
	cl, err := model.NewClient(&cd)
	if err != nil {
		t.Fatal(err)
	}
	const batch = 3
	phi := []float64{0.2, math.Log(0.5)}
	update := func(phi []float64) (float64, []float64) {
		g := make([]float64, 2)
		lz, err := cl.Update(phi, 1, 2, batch, rand.New(rand.NewPCG(7, 8)), g)
		if err != nil {
			t.Fatal(err)
		}
		return lz, g
	}
	got, grad := update(phi)
	// The batch the client drew from the same stream.
	var probe data.RowSampler
	bx, by, _ := probe.Sample(cd.X, cd.Y, 1, batch, rand.New(rand.NewPCG(7, 8)))
	tpow := 8.0 / batch
	mu, s := phi[0], math.Sqrt(math.Exp(phi[1]))
	integrand := func(w float64) float64 {
		v := -0.5*((w-mu)/s)*((w-mu)/s) - math.Log(s*math.Sqrt(2*math.Pi))
		for j := range by {
			z := (by[j] - bx[j]*w) / 0.7
			v += tpow * (-0.5*z*z - math.Log(0.7*math.Sqrt(2*math.Pi)))
		}
		return v
	}
	// Trapezoid on a wide, fine grid in log space around the maximum.
	lo, hi, n := mu-12*s, mu+12*s, 200000
	hstep := (hi - lo) / float64(n)
	vals := make([]float64, n+1)
	for i := range vals {
		vals[i] = integrand(lo + float64(i)*hstep)
	}
	want := fl.LogSumExp(vals) + math.Log(hstep)
	if math.Abs(got-want) > 1e-7 {
		t.Errorf("tempered batch ln Z = %.12g, quadrature %.12g", got, want)
	}
	const h = 1e-5
	for p := range phi {
		pp := append([]float64(nil), phi...)
		pp[p] += h
		fp, _ := update(pp)
		pp[p] -= 2 * h
		fm, _ := update(pp)
		if fd := (fp - fm) / (2 * h); math.Abs(fd-grad[p]) > 1e-6*math.Max(1, math.Abs(fd)) {
			t.Errorf("tempered ∂/∂φ[%d] = %.10g, finite differences %.10g", p, grad[p], fd)
		}
	}
}

// closedFormMode is the mean (= mode) of the exact hyper-posterior over μ
// for a fixed prior scale: 𝒬* ∝ N(μ; 0, σ_P²I)·Π_i N(y_i; X_iμ, Σ_i)^τ is
// Gaussian with precision Λ = I/σ_P² + τΣ X_iᵀΣ_i⁻¹X_i and mean
// Λ⁻¹ τΣ X_iᵀΣ_i⁻¹y_i. It also returns Λ's largest eigenvalue.
func closedFormMode(clients []data.ClientData, d int, s2, v, sigmaP, tau float64) ([]float64, float64) {
	lam := mat.NewSymDense(d, nil)
	rhs := mat.NewVecDense(d, nil)
	for p := 0; p < d; p++ {
		lam.SetSym(p, p, 1/(sigmaP*sigmaP))
	}
	for _, c := range clients {
		m := len(c.Y)
		X := mat.NewDense(m, d, c.X)
		var S mat.SymDense
		S.SymOuterK(s2, X)
		for j := 0; j < m; j++ {
			S.SetSym(j, j, S.At(j, j)+v)
		}
		var Si mat.Dense
		if err := Si.Inverse(&S); err != nil {
			panic(err)
		}
		var t1, t2 mat.Dense
		t1.Mul(X.T(), &Si)
		t2.Mul(&t1, X)
		for p := 0; p < d; p++ {
			for q := 0; q <= p; q++ {
				lam.SetSym(p, q, lam.At(p, q)+tau*t2.At(p, q))
			}
		}
		var b mat.VecDense
		b.MulVec(&t1, mat.NewVecDense(m, c.Y))
		rhs.AddScaledVec(rhs, tau, &b)
	}
	var ch mat.Cholesky
	ch.Factorize(lam)
	var mode mat.VecDense
	_ = ch.SolveVecTo(&mode, rhs)
	var eig mat.EigenSym
	eig.Factorize(lam, false)
	vals := eig.Values(nil)
	return mode.RawVector().Data, vals[len(vals)-1]
}

// TestFederatedRunMatchesClosedForm trains the hyper-posterior through the
// unmodified fl.Server with one particle, all clients every round, full
// batches and plain gradient ascent: the particle must converge to the
// closed-form mode of 𝒬*.
func TestFederatedRunMatchesClosedForm(t *testing.T) {
	const d, n, tau, sigmaP = 3, 5, 0.5, 2.0
	rng := rand.New(rand.NewPCG(9, 10))
	model, _ := New(d, 0.5, 0.7, false)
	var clients []fl.Client
	var cds []data.ClientData
	for i := 0; i < n; i++ {
		cds = append(cds, clientData(rng, 6+i, d, []float64{1, -2, 0.5}, 0.5))
	}
	for i := range cds {
		c, err := model.NewClient(&cds[i])
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	want, lamMax := closedFormMode(cds, d, 0.49, 0.25, sigmaP, tau)
	hp, _ := model.HyperPrior(sigmaP)
	// Score = ∇ln𝒫 + τ·n·mean_i ∇ln Z_i = −∇(½μᵀΛμ − …): ascent with step
	// 1/λ_max contracts the error by (1 − λ_min/λ_max) per round.
	srv, err := fl.NewServer(fl.Config{K: 1, Rounds: 400, ClientsPerRound: n, LR: 1 / lamMax, Optimizer: "sgd",
		Tau: tau, Seed: 1}, hp, clients)
	if err != nil {
		t.Fatal(err)
	}
	res, err := srv.Run()
	if err != nil {
		t.Fatal(err)
	}
	for p := range want {
		if math.Abs(res.Particles[p]-want[p]) > 1e-9 {
			t.Errorf("μ[%d] = %.12g after training, closed form %.12g", p, res.Particles[p], want[p])
		}
	}
}

func TestPredictMatchesDenseGP(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const d = 2
	model, _ := New(d, 0.3, 1.1, true)
	c := clientData(rng, 7, d, []float64{0.5, 1}, 0.3)
	phi := []float64{0.1, -0.2, math.Log(0.8)}
	pred, err := model.Predict(phi, 1, c.X, c.Y, c.XTest, c.YTest)
	if err != nil {
		t.Fatal(err)
	}
	// A linear-kernel GP: k(x, x') = s²xᵀx', mean xᵀμ.
	s2, v, m, nt := 0.8, 0.09, len(c.Y), len(c.YTest)
	X := mat.NewDense(m, d, c.X)
	Xs := mat.NewDense(nt, d, c.XTest)
	var K mat.Dense
	K.Mul(X, X.T())
	K.Scale(s2, &K)
	for j := 0; j < m; j++ {
		K.Set(j, j, K.At(j, j)+v)
	}
	var Ki mat.Dense
	if err := Ki.Inverse(&K); err != nil {
		t.Fatal(err)
	}
	mu := mat.NewVecDense(d, phi[:d])
	r := mat.NewVecDense(m, nil)
	r.MulVec(X, mu)
	r.SubVec(mat.NewVecDense(m, c.Y), r)
	var Ks mat.Dense
	Ks.Mul(Xs, X.T())
	Ks.Scale(s2, &Ks)
	var a mat.VecDense
	a.MulVec(&Ki, r)
	var KsKi mat.Dense
	KsKi.Mul(&Ks, &Ki)
	for j := 0; j < nt; j++ {
		mean := mat.Dot(Xs.RowView(j), mu) + mat.Dot(Ks.RowView(j), &a)
		vr := s2*mat.Dot(Xs.RowView(j), Xs.RowView(j)) - mat.Dot(KsKi.RowView(j), Ks.RowView(j)) + v
		cdf := 0.5 * math.Erfc(-(c.YTest[j]-mean)/math.Sqrt(2*vr))
		if math.Abs(pred.Mean[j]-mean) > 1e-10 || math.Abs(pred.CDFAtY[j]-cdf) > 1e-10 {
			t.Errorf("test point %d: mean %.12g cdf %.12g, dense GP %.12g %.12g", j, pred.Mean[j], pred.CDFAtY[j], mean,
				cdf)
		}
	}
	// Two particles: the mixture weights are the normalised marginal
	// likelihoods of the conditioning data.
	phi2 := append(append([]float64(nil), phi...), 1.5, 0.3, math.Log(0.2))
	pm, _ := model.Predict(phi2, 2, c.X, c.Y, c.XTest, nil)
	p1, _ := model.Predict(phi2[3:], 1, c.X, c.Y, c.XTest, nil)
	l0, _, _ := model.LogML(phi2[:3], c.X, c.Y)
	l1, _, _ := model.LogML(phi2[3:], c.X, c.Y)
	a1 := 1 / (1 + math.Exp(l0-l1))
	for j := range pm.Mean {
		if want := (1-a1)*pred.Mean[j] + a1*p1.Mean[j]; math.Abs(pm.Mean[j]-want) > 1e-10 {
			t.Errorf("mixture mean %d = %.12g, want %.12g", j, pm.Mean[j], want)
		}
	}
}

func TestClippedLogZ(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	model, _ := New(1, 1, 0.3, false)
	cds := []data.ClientData{clientData(rng, 3, 1, []float64{0.2}, 1)}
	phi := []float64{0.1}
	// A constant loss c per sample: exactly −m·c.
	f := model.ClippedLogZ(cds, 2.5, 2.5, 10)
	if got, err := f(phi, 0, rng); err != nil || math.Abs(got+7.5) > 1e-12 {
		t.Errorf("clip to the constant 2.5: ln Z^C = %v (%v), want −7.5", got, err)
	}
	// No clipping: the Monte Carlo estimate approaches the exact LML.
	exact, _, _ := model.LogML(phi, cds[0].X, cds[0].Y)
	got, err := model.ClippedLogZ(cds, -1e9, 1e9, 200000)(phi, 0, rng)
	if err != nil || math.Abs(got-exact) > 0.01 {
		t.Errorf("unclipped ln Z^C = %v (%v), exact ln Z = %v", got, err, exact)
	}
}

func TestUpdateDoesNotAllocate(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	model, _ := New(4, 0.5, 1, true)
	cd := clientData(rng, 40, 4, make([]float64, 4), 0.5)
	cl, _ := model.NewClient(&cd)
	k, dphi := 3, model.Dim()
	particles := make([]float64, k*dphi)
	grad := make([]float64, k*dphi)
	for _, batch := range []int{0, 10} {
		cl.Update(particles, k, dphi, batch, rng, grad) // warm-up
		if a := testing.AllocsPerRun(20, func() { cl.Update(particles, k, dphi, batch, rng, grad) }); a != 0 {
			t.Errorf("batch %d: %v allocations per Update, want 0", batch, a)
		}
	}
}

func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		d            int
		noise, prior float64
	}{{0, 1, 1}, {2, 0, 1}, {2, math.NaN(), 1}, {2, 1, math.Inf(1)}} {
		if _, err := New(tc.d, tc.noise, tc.prior, false); err == nil {
			t.Errorf("New(%d, %v, %v) accepted", tc.d, tc.noise, tc.prior)
		}
	}
	model, _ := New(2, 1, 1, false)
	for _, tc := range []struct {
		c    data.ClientData
		want string
	}{
		{data.ClientData{}, "no data"},
		{data.ClientData{X: []float64{1, 2, 3}, Y: []float64{1, 2}}, "3 inputs for 2 targets"},
		{data.ClientData{X: []float64{1, 2, 3, math.NaN()}, Y: []float64{1, 2}}, "row 1 column 1 is NaN"},
		{data.ClientData{X: []float64{1, 2, 3, 4}, Y: []float64{1, math.Inf(-1)}}, "target 1 is -Inf"},
	} {
		if _, err := model.NewClient(&tc.c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewClient: error %v, want one containing %q", err, tc.want)
		}
	}
	cd := data.ClientData{X: []float64{1, 2, 3, 4}, Y: []float64{1, 2}}
	cl, _ := model.NewClient(&cd)
	if _, err := cl.Update(make([]float64, 3), 1, 3, 0, nil, make([]float64, 3)); err == nil {
		t.Error("Update accepted particles of the wrong dimension")
	}
	if _, err := model.Predict(make([]float64, 2), 1, nil, nil, []float64{1, 2, 3}, nil); err == nil {
		t.Error("Predict accepted 3 test inputs of dimension 2")
	}
}

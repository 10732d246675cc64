package fl

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/lml"
	"github.com/pacpfl/pacpfl/svgd"
)

func smallGP() *GPModel {
	return &GPModel{Model: lml.Model{D: 1, DF: 2, MeanHidden: []int{4}, KernelHidden: []int{4}}}
}

func randPhi(g *GPModel, k int, seed uint64) []float64 {
	pr, _ := svgd.Isotropic(g.Model.HyperPriorMean(), 0.5)
	phi := make([]float64, k*g.Dim())
	rng := rand.New(rand.NewPCG(seed, 1))
	for r := 0; r < k; r++ {
		pr.Sample(phi[r*g.Dim():(r+1)*g.Dim()], rng)
	}
	return phi
}

// priorMoments (our own forward pass from Layout) gives, through a gonum
// Gaussian log-density, the same LML as package lml: two independent
// implementations of (33).
func TestPriorMomentsMatchLML(t *testing.T) {
	g := smallGP()
	ds, err := data.Polynomial(smallPoly(2))
	if err != nil {
		t.Fatal(err)
	}
	c := &ds.Existing[0]
	phi := randPhi(g, 1, 3)
	mean, K, sigma := g.priorMoments(phi, c.X)
	m := len(c.Y)
	a := mat.NewSymDense(m, nil)
	for i := 0; i < m; i++ {
		for j := i; j < m; j++ {
			a.SetSym(i, j, K[i*m+j])
		}
		a.SetSym(i, i, K[i*m+i]+sigma*sigma)
	}
	var ch mat.Cholesky
	if !ch.Factorize(a) {
		t.Fatal("not PD")
	}
	r := make([]float64, m)
	for i := range r {
		r[i] = c.Y[i] - mean[i]
	}
	var v mat.VecDense
	rv := mat.NewVecDense(m, r)
	if err := ch.SolveVecTo(&v, rv); err != nil {
		t.Fatal(err)
	}
	want := -0.5*mat.Dot(rv, &v) - 0.5*ch.LogDet() - 0.5*float64(m)*math.Log(2*math.Pi)
	cl, err := g.NewClient(c)
	if err != nil {
		t.Fatal(err)
	}
	grad := make([]float64, g.Dim())
	got, err := cl.Update(phi, 1, g.Dim(), 0, rand.New(rand.NewPCG(1, 1)), grad)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got-want) > 1e-8*math.Max(1, math.Abs(want)) {
		t.Fatalf("lml LML %v, our moments give %v", got, want)
	}
}

// Client.Update: the k rows are the per-particle gradients, the value their
// mean, and a mini-batch depends only on the rng.
func TestGPClientUpdate(t *testing.T) {
	g := smallGP()
	ds, _ := data.Polynomial(smallPoly(4))
	c := &ds.Existing[1]
	cl, err := g.NewClient(c)
	if err != nil {
		t.Fatal(err)
	}
	d := g.Dim()
	phis := randPhi(g, 3, 5)
	grad := make([]float64, 3*d)
	mean, err := cl.Update(phis, 3, d, 0, nil, grad)
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for r := 0; r < 3; r++ {
		g1 := make([]float64, d)
		v, err := cl.Update(phis[r*d:(r+1)*d], 1, d, 0, nil, g1)
		if err != nil {
			t.Fatal(err)
		}
		sum += v
		if !slices.Equal(g1, grad[r*d:(r+1)*d]) {
			t.Fatalf("row %d of the k-particle gradient differs from the single-particle one", r)
		}
	}
	if math.Abs(sum/3-mean) > 1e-12 {
		t.Fatalf("mean LML %v, want %v", mean, sum/3)
	}
	// Mini-batches: same rng state → same result; tempered ≠ literal.
	b1 := make([]float64, 3*d)
	b2 := make([]float64, 3*d)
	v1, err := cl.Update(phis, 3, d, 4, rand.New(rand.NewPCG(9, 9)), b1)
	if err != nil {
		t.Fatal(err)
	}
	v2, _ := cl.Update(phis, 3, d, 4, rand.New(rand.NewPCG(9, 9)), b2)
	if v1 != v2 || !slices.Equal(b1, b2) {
		t.Fatal("mini-batch update not reproducible from the rng")
	}
	lit := &GPModel{Model: g.Model, LiteralBatch: true}
	cl2, _ := lit.NewClient(c)
	v3, _ := cl2.Update(phis, 3, d, 4, rand.New(rand.NewPCG(9, 9)), b2)
	if v3 == v1 {
		t.Fatal("literal and tempered batch objectives coincide")
	}
	if _, err := cl.Update(phis[:d], 1, d-1, 0, nil, grad[:d-1]); err == nil {
		t.Fatal("wrong dφ accepted")
	}
}

// With a single particle and huge data noise the predictive is close to the
// prior; the harness wires Fit/Predict into per-client means and CDFs in [0,1].
func TestPredictGroup(t *testing.T) {
	g := smallGP()
	ds, _ := data.Polynomial(smallPoly(6))
	phis := randPhi(g, 2, 7)
	preds, err := g.PredictGroup(phis, ds.New)
	if err != nil {
		t.Fatal(err)
	}
	if len(preds) != len(ds.New) {
		t.Fatalf("%d predictions", len(preds))
	}
	for i, p := range preds {
		if len(p.Mean) != len(ds.New[i].YTest) || len(p.CDFAtY) != len(p.Mean) {
			t.Fatalf("client %d: sizes %d %d", i, len(p.Mean), len(p.CDFAtY))
		}
		for _, v := range p.CDFAtY {
			if !(v >= 0 && v <= 1) {
				t.Fatalf("CDF %v", v)
			}
		}
	}
	// The mixture weights are eq. (37b): a softmax of each particle's LML of
	// the client's data, here from the training client's own Update.
	for i, p := range preds {
		cl, err := g.NewClient(&ds.New[i])
		if err != nil {
			t.Fatal(err)
		}
		d := g.Dim()
		lml := make([]float64, 2)
		for κ := range lml {
			lml[κ], _ = cl.Update(phis[κ*d:(κ+1)*d], 1, d, 0, nil, make([]float64, d))
		}
		want := 1 / (1 + math.Exp(lml[1]-lml[0]))
		if len(p.Weights) != 2 || math.Abs(p.Weights[0]-want) > 1e-9 || math.Abs(p.Weights[0]+p.Weights[1]-1) > 1e-12 {
			t.Fatalf("client %d: weights %v, want [%v, %v] from LMLs %v", i, p.Weights, want, 1-want, lml)
		}
	}
	// Independent of the worker count.
	again, err := g.PredictGroup(phis, ds.New)
	if err != nil || !slices.Equal(again[2].Mean, preds[2].Mean) {
		t.Fatal("prediction not reproducible")
	}
}

func TestClippedLogZFromGP(t *testing.T) {
	g := smallGP()
	ds, _ := data.Polynomial(smallPoly(8))
	phi := randPhi(g, 1, 9)
	cl, _ := g.NewClient(&ds.Existing[0])
	exact, _ := cl.Update(phi, 1, g.Dim(), 0, nil, make([]float64, g.Dim()))
	f := g.ClippedLogZ(ds.Existing, 10, -1e3, 1e3, 20000)
	got, err := f(phi, 0, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	// Unclipped, β = m: the MC estimate of the LML (biased low, small here).
	if math.Abs(got-exact) > 0.3 {
		t.Fatalf("MC ln Z^C %v, exact LML %v", got, exact)
	}
	clipped, _ := g.ClippedLogZ(ds.Existing, 10, -1, 2, 2000)(phi, 0, rand.New(rand.NewPCG(1, 2)))
	if clipped < -20-1e-9 || clipped > 10+1e-9 {
		t.Fatalf("clipped ln Z^C %v outside [−βb, −βa] = [−20, 10]", clipped)
	}
}

// Client_Update does not allocate in steady state (full data and batches).
func TestGPClientUpdateDoesNotAllocate(t *testing.T) {
	g := smallGP()
	ds, _ := data.Polynomial(smallPoly(4))
	cl, err := g.NewClient(&ds.Existing[0])
	if err != nil {
		t.Fatal(err)
	}
	d := g.Dim()
	phis := randPhi(g, 3, 5)
	grad := make([]float64, 3*d)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, b := range []int{0, 5} {
		cl.Update(phis, 3, d, b, rng, grad)
		if a := testing.AllocsPerRun(20, func() { cl.Update(phis, 3, d, b, rng, grad) }); a != 0 {
			t.Errorf("batch %d: %v allocations per Update", b, a)
		}
	}
}

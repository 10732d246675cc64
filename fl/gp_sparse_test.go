package fl

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/option"
	"github.com/pacpfl/pacpfl/svgd"
)

// particlesFor draws k particles from the default hyper-prior of g.
func particlesFor(t *testing.T, g *GPModel, k int, seed uint64) []float64 {
	t.Helper()
	prior, err := svgd.Isotropic(g.Model.HyperPriorMean(), 0.5)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	p := make([]float64, k*g.Dim())
	for r := 0; r < k; r++ {
		prior.Sample(p[r*g.Dim():(r+1)*g.Dim()], rng)
	}
	return p
}

// spreadFeatures scales the kernel network's last layer of every particle
// by 8: a prior draw maps 1-D inputs to features so close together that
// K_uu of the rows needs jitter, which would break the Z = X identity.
func spreadFeatures(g *GPModel, p []float64, k int) []float64 {
	var last string
	for _, b := range g.Model.Layout() {
		if strings.HasPrefix(b.Name, "kernel.W") {
			last = b.Name
		}
	}
	for _, b := range g.Model.Layout() {
		if b.Name == last {
			for r := 0; r < k; r++ {
				for i := 0; i < b.Size(); i++ {
					p[r*g.Dim()+b.Offset+i] *= 8
				}
			}
		}
	}
	return p
}

func relErr(a, b []float64) float64 {
	var d, n float64
	for i := range a {
		d += (a[i] - b[i]) * (a[i] - b[i])
		n += b[i] * b[i]
	}
	return math.Sqrt(d / math.Max(n, 1e-300))
}

// With as many inducing inputs as rows (Z = the rows, in another order),
// a sparse client's update equals the exact client's to 1e-8: value and
// gradient, with the client temperature and with mini-batches.
func TestSparseClientEqualsExactWithAllRows(t *testing.T) {
	ds, err := data.Polynomial(smallPoly(3))
	if err != nil {
		t.Fatal(err)
	}
	c := &ds.Existing[0]
	m := c.M()
	for _, beta := range []string{"m", "sqrt"} {
		for _, batch := range []int{0, m / 2} {
			exact, sparse := NewGPModel(ds.D), NewGPModel(ds.D)
			tb, err := ParseTemperature(beta)
			if err != nil {
				t.Fatal(err)
			}
			exact.Beta, sparse.Beta = tb, tb
			exact.Inference = GPInference{Mode: InferenceExact}
			sparse.Inference = GPInference{Mode: InferenceSparse, Inducing: m, Seed: 5}
			ce, err := exact.NewClient(c)
			if err != nil {
				t.Fatal(err)
			}
			cs, err := sparse.NewClient(c)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := cs.(*sparseClient); !ok {
				t.Fatalf("sparse inference gave a %T", cs)
			}
			const k = 2
			p := spreadFeatures(exact, particlesFor(t, exact, k, 9), k)
			ge, gs := make([]float64, k*exact.Dim()), make([]float64, k*exact.Dim())
			le, err := ce.Update(p, k, exact.Dim(), batch, rand.New(rand.NewPCG(1, 2)), ge)
			if err != nil {
				t.Fatal(err)
			}
			ls, err := cs.Update(p, k, exact.Dim(), batch, rand.New(rand.NewPCG(1, 2)), gs)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(ls-le) > 1e-8*math.Abs(le) {
				t.Errorf("β %s, batch %d: sparse %v, exact %v", beta, batch, ls, le)
			}
			if e := relErr(gs, ge); e > 1e-8 {
				t.Errorf("β %s, batch %d: gradient relative error %.3g", beta, batch, e)
			}
		}
	}
}

// Fewer inducing inputs: a lower bound on the exact value.
func TestSparseClientBelowExact(t *testing.T) {
	ds, err := data.Polynomial(smallPoly(4))
	if err != nil {
		t.Fatal(err)
	}
	for i := range ds.Existing[:4] {
		c := &ds.Existing[i]
		exact, sparse := NewGPModel(ds.D), NewGPModel(ds.D)
		exact.Inference = GPInference{Mode: InferenceExact}
		sparse.Inference = GPInference{Mode: InferenceSparse, Inducing: c.M() / 3, Seed: 1}
		ce, _ := exact.NewClient(c)
		cs, err := sparse.NewClient(c)
		if err != nil {
			t.Fatal(err)
		}
		p := particlesFor(t, exact, 3, uint64(i))
		g := make([]float64, len(p))
		le, _ := ce.Update(p, 3, exact.Dim(), 0, nil, g)
		ls, err := cs.Update(p, 3, exact.Dim(), 0, nil, g)
		if err != nil {
			t.Fatal(err)
		}
		if !(ls <= le+1e-9*math.Abs(le)) {
			t.Errorf("client %d: bound %v above the exact %v", i, ls, le)
		}
	}
}

func TestGPInferencePlan(t *testing.T) {
	cases := []struct {
		gi     GPInference
		m      int
		sparse bool
		M      int
		err    string
	}{
		{GPInference{}, 100, false, 0, ""},
		{GPInference{}, AutoExactMaxRows, false, 0, ""},
		{GPInference{}, AutoExactMaxRows + 1, true, DefaultInducing, ""},
		{GPInference{Mode: InferenceAuto, Inducing: 64}, 10000, true, 64, ""},
		{GPInference{Mode: InferenceExact}, 1 << 20, false, 0, ""},
		{GPInference{Mode: InferenceSparse}, 100, true, 100, ""},
		{GPInference{Mode: InferenceSparse}, 100000, true, DefaultInducing, ""},
		{GPInference{Mode: InferenceSparse, Inducing: 200}, 100, false, 0,
			"200 inducing inputs but the client has only 100 rows"},
		{GPInference{Mode: "approximate"}, 100, false, 0, `GP inference "approximate"`},
		{GPInference{Mode: InferenceSparse, Inducing: -1}, 100, false, 0, "-1 inducing inputs"},
	}
	for _, c := range cases {
		sparse, M, err := c.gi.Plan(c.m)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%+v, m = %d: err %v, want %q", c.gi, c.m, err, c.err)
			}
			if tooMany := strings.Contains(c.err, "inducing inputs but"); errors.Is(err,
				ErrTooManyInducing) != tooMany {
				t.Errorf("%+v, m = %d: errors.Is(%v, ErrTooManyInducing) = %v", c.gi, c.m, err, !tooMany)
			}
			var fe *option.FieldError
			if tooMany := errors.Is(err, ErrTooManyInducing); tooMany && (!errors.As(err, &fe) ||
				fe.Fields[0] != "Inducing") {
				t.Errorf("%+v, m = %d: %v is no FieldError of Inducing", c.gi, c.m, err)
			}
			continue
		}
		if err != nil || sparse != c.sparse || M != c.M {
			t.Errorf("%+v, m = %d: (%v, %d, %v), want (%v, %d)", c.gi, c.m, sparse, M, err, c.sparse, c.M)
		}
	}
}

// A PAC-PFL run with sparse clients trains, predicts (sparse predictive),
// says why the bounds are not computed, and does not depend on the number
// of concurrent client updates.
func TestSparsePACPFLRun(t *testing.T) {
	ds, err := data.Polynomial(smallPoly(6))
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultPACPFLOptions()
	o.Server.K, o.Server.Rounds, o.Server.ClientsPerRound, o.Server.Seed = 2, 20, 4, 3
	o.Bounds.PriorSamples = 5
	run := func(workers int) *MethodResult {
		g := NewGPModel(ds.D)
		g.Inference = GPInference{Mode: InferenceSparse, Inducing: 6, Seed: 3}
		o.Server.Workers = workers
		res, err := RunPACPFL(ds, g, o, MethodPACPFL)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	a, b := run(1), run(3)
	for i := range a.Train.Particles {
		if math.Float64bits(a.Train.Particles[i]) != math.Float64bits(b.Train.Particles[i]) {
			t.Fatalf("particle value %d differs between 1 and 3 workers", i)
		}
	}
	if !(a.Existing.MeanRSMSE > 0) || math.IsInf(a.Existing.MeanRSMSE, 0) || !(a.New.MeanCE >= 0) {
		t.Errorf("metrics %+v / %+v", a.Existing, a.New)
	}
	// With the default loss range [−2, 2] clipping could raise the NLL:
	// no bound at 𝒬*; the trained hyper-posterior's bound never.
	if a.Bounds != nil || a.Learned != nil || !strings.Contains(a.BoundsUnavailable, "sparse bound with M = 6") ||
		!strings.Contains(a.BoundsUnavailable, "loss range must start") ||
		!strings.Contains(a.LearnedUnavailable, "Hoeffding") {
		t.Errorf("bounds %v %v, unavailable %q / %q", a.Bounds, a.Learned, a.BoundsUnavailable, a.LearnedUnavailable)
	}
	// From −6: the bound at 𝒬* through F.
	o.Bounds.A = -6
	c := run(2)
	if c.Bounds == nil || !strings.Contains(c.Bounds.Description, "sparse variational posterior") ||
		!(c.Bounds.Server > o.Bounds.A) || math.IsInf(c.Bounds.Server, 0) {
		t.Errorf("bounds from −6: %+v (unavailable %q)", c.Bounds, c.BoundsUnavailable)
	}
}

// F_β ≤ ln Z^C_β of the clipped loss when a ≤ MinGaussianNLL: checked
// against the exact client's Monte Carlo ln Z^C with many draws.
func TestSparseBoundLogZBelowClipped(t *testing.T) {
	ds, err := data.Polynomial(smallPoly(2))
	if err != nil {
		t.Fatal(err)
	}
	exact, sparse := NewGPModel(ds.D), NewGPModel(ds.D)
	exact.Inference = GPInference{Mode: InferenceExact}
	sparse.Inference = GPInference{Mode: InferenceSparse, Inducing: 4, Seed: 2}
	a, b := MinGaussianNLL, 2.0
	le, err := exact.BoundLogZ(ds.Existing, 10, a, b, 4000)
	if err != nil {
		t.Fatal(err)
	}
	ls, err := sparse.BoundLogZ(ds.Existing, 10, a, b, 1)
	if err != nil {
		t.Fatal(err)
	}
	p := particlesFor(t, exact, 3, 4)
	for r := 0; r < 3; r++ {
		phi := p[r*exact.Dim() : (r+1)*exact.Dim()]
		for i := 0; i < 3; i++ {
			ve, err := le(phi, i, rand.New(rand.NewPCG(uint64(r), uint64(i))))
			if err != nil {
				t.Fatal(err)
			}
			vs, err := ls(phi, i, nil)
			if err != nil {
				t.Fatal(err)
			}
			// The Monte Carlo estimate is biased low: allow its noise.
			if vs > ve+0.05 {
				t.Errorf("particle %d, client %d: F = %.4f above ln Z^C of the clipped loss ≈ %.4f", r, i, vs, ve)
			}
		}
	}
}

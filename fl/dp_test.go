package fl

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/svgd"
)

// The noise scale follows from ε, δ, T, c and γ as derived in docs/math.md.
func TestNoiseScaleFollowsFromParameters(t *testing.T) {
	T, c, gamma, eps := 300, 6, 0.5, 2.0
	lap := &DPConfig{Epsilon: eps, Clip: gamma}
	if got, want := lap.NoiseScale(T, c), 2*float64(T)*gamma/(eps*float64(c)); math.Abs(got-want) > 1e-12*want {
		t.Fatalf("laplace scale %v, want 2Tγ/(εc) = %v", got, want)
	}
	paper := &DPConfig{Mechanism: DPPaper, Epsilon: eps, Clip: gamma}
	if got, want := paper.NoiseScale(T, c), float64(T)*gamma/(eps*float64(c)); math.Abs(got-want) > 1e-12*want {
		t.Fatalf("paper scale %v, want Tγ/(εc) = %v", got, want)
	}
	for _, delta := range []float64{1e-5, 1e-3} {
		for _, e := range []float64{0.1, 1, 8} {
			g := &DPConfig{Mechanism: DPGaussian, Epsilon: e, Delta: delta, Clip: gamma}
			z := GaussianNoiseMultiplier(e, delta, T)
			if got := GaussianEpsilon(z, T, delta); math.Abs(got-e) > 1e-9*e {
				t.Fatalf("accountant round trip: z(ε=%v) = %v gives ε = %v", e, z, got)
			}
			if got, want := g.NoiseScale(T, c), z*2*gamma/float64(c); math.Abs(got-want) > 1e-12*want {
				t.Fatalf("gaussian std %v, want z·2γ/c = %v", got, want)
			}
		}
	}
	// More rounds, a smaller ε or δ: more noise.
	if !(GaussianNoiseMultiplier(1, 1e-5, 400) > GaussianNoiseMultiplier(1, 1e-5, 100)) ||
		!(GaussianNoiseMultiplier(0.5, 1e-5, 100) > GaussianNoiseMultiplier(1, 1e-5, 100)) ||
		!(GaussianNoiseMultiplier(1, 1e-7, 100) > GaussianNoiseMultiplier(1, 1e-5, 100)) {
		t.Fatal("noise multiplier not monotone in T, ε, δ")
	}
}

// The closed-form accountant is the minimum over α of the RDP conversion.
func TestGaussianAccountantIsOptimumOfRDP(t *testing.T) {
	for _, c := range []struct {
		z     float64
		T     int
		delta float64
	}{{1.1, 100, 1e-5}, {5, 3000, 1e-6}, {30, 3000, 1e-3}} {
		best := math.Inf(1)
		for a := 1.0001; a < 1e4; a *= 1.0005 {
			best = math.Min(best, float64(c.T)*a/(2*c.z*c.z)+math.Log(1/c.delta)/(a-1))
		}
		got := GaussianEpsilon(c.z, c.T, c.delta)
		if got > best*(1+1e-6) || got < best*(1-1e-3) {
			t.Fatalf("z=%v T=%d: closed form %v, grid minimum %v", c.z, c.T, got, best)
		}
	}
}

// neighbourRound runs one round of a server on the Polynomial clients and on
// a neighbouring federation (one target of client 0 changed by a lot), with
// the same particles, selection and batches, and returns both clipped means.
func neighbourRound(t *testing.T, dp *DPConfig, k int) (a, b []float64, c, dim int) {
	t.Helper()
	cfg := data.DefaultPolynomial()
	cfg.Existing, cfg.New, cfg.Seed = 6, 0, 3
	ds, err := data.Polynomial(cfg)
	if err != nil {
		t.Fatal(err)
	}
	g := NewGPModel(ds.D)
	run := func(change float64) []float64 {
		clients := make([]Client, len(ds.Existing))
		for i := range ds.Existing {
			cd := ds.Existing[i]
			if i == 0 {
				cd.Y = slices.Clone(cd.Y)
				cd.Y[3] += change
			}
			if clients[i], err = g.NewClient(&cd); err != nil {
				t.Fatal(err)
			}
		}
		prior, err := svgd.Isotropic(g.Model.HyperPriorMean(), 0.5)
		if err != nil {
			t.Fatal(err)
		}
		dpc := *dp
		dpc.Noise = rand.NewPCG(1, 1)
		s, err := NewServer(Config{K: k, Rounds: 10, ClientsPerRound: len(clients), LR: 1e-3, Tau: 0.5, Seed: 9,
			DP: &dpc}, prior, clients)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.updateRound(0, newStream()); err != nil {
			t.Fatal(err)
		}
		c, dim = s.c, s.dim
		return slices.Clone(s.clippedMean(s.c))
	}
	return run(0), run(50), c, dim
}

func l1(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += math.Abs(a[i] - b[i])
	}
	return s
}

func l2(a, b []float64) float64 {
	d := make([]float64, len(a))
	for i := range a {
		d[i] = a[i] - b[i]
	}
	return norm2(d)
}

// For neighbouring federations the clipped aggregates never move further
// than the sensitivity the noise is calibrated to, in the mechanism's norm.
// The printed Algorithm 3 (row-wise L2 clip, Laplace calibrated to γ/c)
// moves them far more than its calibration assumes, so its nominal ε does
// not hold.
func TestSensitivityHoldsForNeighbours(t *testing.T) {
	const k, gamma = 3, 0.05
	for _, m := range []DPMechanism{DPLaplace, DPGaussian, DPPaper} {
		dp := &DPConfig{Mechanism: m, Epsilon: 1, Clip: gamma}
		if m == DPGaussian {
			dp.Delta = 1e-5
		}
		a, b, c, dim := neighbourRound(t, dp, k)
		sens := dp.Sensitivity(c, k, dim)
		var dist float64
		switch m {
		case DPGaussian:
			dist = l2(a, b)
		default:
			dist = l1(a, b)
		}
		t.Logf("%s: distance %.4g, sensitivity %.4g (c=%d, dφ=%d)", m, dist, sens, c, dim)
		if dist == 0 {
			t.Fatalf("%s: the neighbouring federations gave identical aggregates: the test cannot fail", m)
		}
		if dist > sens*(1+1e-12) {
			t.Fatalf("%s: neighbours moved the clipped mean by %v > sensitivity %v", m, dist, sens)
		}
		if m == DPPaper {
			if nominal := gamma / float64(c); !(dist > 10*nominal) {
				t.Fatalf("paper: L1 distance %v not above the paper's calibration γ/c = %v", dist, nominal)
			}
		}
	}
}

// The privacy statement of each mechanism: the paper variant's nominal ε is
// flagged and the level that holds is reported instead.
func TestPrivacyReport(t *testing.T) {
	var none *DPConfig
	if p := none.privacy(10, 2, 3, 100); !math.IsInf(p.Epsilon, 1) {
		t.Fatalf("no DP: ε = %v", p.Epsilon)
	}
	p := (&DPConfig{Mechanism: DPPaper, Epsilon: 1, Clip: 1}).privacy(10, 2, 4, 2340)
	if want := 2 * 4 * math.Sqrt(2340) * 1; math.Abs(p.Epsilon-want) > 1e-9 || p.NominalEpsilon != 1 ||
		!strings.Contains(p.Statement, "NOT a guarantee") {
		t.Fatalf("paper: %+v, want ε = %v and a warning", p, want)
	}
	p = (&DPConfig{Epsilon: 2, Clip: 1}).privacy(10, 2, 4, 2340)
	if p.Epsilon != 2 || p.Delta != 0 || !p.SecretNoise || !strings.Contains(p.Statement, "pure ε-DP") {
		t.Fatalf("laplace: %+v", p)
	}
	p = (&DPConfig{Mechanism: DPGaussian, Epsilon: 2, Delta: 1e-5, Clip: 1, Noise: rand.NewPCG(1, 2)}).privacy(10, 2, 4,
		2340)
	if p.Epsilon != 2 || p.Delta != 1e-5 || p.SecretNoise || !strings.Contains(p.Statement, "seeded source") {
		t.Fatalf("gaussian with a seeded source: %+v", p)
	}
}

// Kolmogorov–Smirnov test of the noise samplers against their distributions
// (n = 20000: the 1 % critical value is 1.63/√n ≈ 0.0115).
func TestNoiseDistribution(t *testing.T) {
	const n = 20000
	crit := 1.63 / math.Sqrt(n)
	for _, c := range []struct {
		dp  *DPConfig
		cdf func(x float64) float64
	}{
		{&DPConfig{Epsilon: 1, Clip: 1}, distuv.Laplace{Mu: 0, Scale: 0.7}.CDF},
		{&DPConfig{Mechanism: DPGaussian, Epsilon: 1, Delta: 1e-5, Clip: 1}, distuv.Normal{Mu: 0, Sigma: 0.7}.CDF},
	} {
		rng := rand.New(rand.NewPCG(3, 4))
		x := make([]float64, n)
		for i := range x {
			x[i] = c.dp.noise(rng, 0.7)
		}
		sort.Float64s(x)
		d := 0.0
		for i, v := range x {
			f := c.cdf(v)
			d = math.Max(d, math.Max(math.Abs(f-float64(i)/n), math.Abs(float64(i+1)/n-f)))
		}
		if d > crit {
			t.Fatalf("%s noise: KS distance %v > %v", c.dp.mechanism(), d, crit)
		}
	}
}

// zeroSource returns 0 forever: the uniform draw at which a naive inversion
// sampler returns −Inf.
type zeroSource struct{}

func (zeroSource) Uint64() uint64 { return 0 }

func TestLaplaceIsFiniteOnAZeroDraw(t *testing.T) {
	if v := laplace(rand.New(zeroSource{}), 1.5); math.IsInf(v, 0) || math.IsNaN(v) {
		t.Fatalf("Laplace on a zero draw = %v", v)
	}
}

// Without a caller-supplied source the noise is secret: two runs with the
// same seed differ. With equal seeded sources they are identical.
func TestDPNoiseIsSecretByDefault(t *testing.T) {
	a := runQuad(t, 2, 42, &DPConfig{Epsilon: 5, Clip: 1})
	b := runQuad(t, 2, 42, &DPConfig{Epsilon: 5, Clip: 1})
	if slices.Equal(a.Particles, b.Particles) {
		t.Fatal("two DP runs with secret noise gave identical particles")
	}
	if !a.Privacy.SecretNoise {
		t.Fatal("secret noise not reported as such")
	}
	c := runQuad(t, 2, 42, &DPConfig{Epsilon: 5, Clip: 1, Noise: rand.NewPCG(5, 5)})
	d := runQuad(t, 2, 42, &DPConfig{Epsilon: 5, Clip: 1, Noise: rand.NewPCG(5, 5)})
	if !slices.Equal(c.Particles, d.Particles) {
		t.Fatal("equal seeded noise sources gave different particles")
	}
}

func TestDPConfigValidate(t *testing.T) {
	for name, d := range map[string]DPConfig{
		"eps 0":           {Epsilon: 0, Clip: 1},
		"eps NaN":         {Epsilon: math.NaN(), Clip: 1},
		"clip -1":         {Epsilon: 1, Clip: -1},
		"clip Inf":        {Epsilon: 1, Clip: math.Inf(1)},
		"unknown":         {Mechanism: "exponential", Epsilon: 1, Clip: 1},
		"gaussian δ 0":    {Mechanism: DPGaussian, Epsilon: 1, Clip: 1},
		"gaussian δ 1":    {Mechanism: DPGaussian, Epsilon: 1, Delta: 1, Clip: 1},
		"laplace with δ":  {Epsilon: 1, Delta: 1e-5, Clip: 1},
		"paper with δ":    {Mechanism: DPPaper, Epsilon: 1, Delta: 1e-5, Clip: 1},
		"gaussian δ NaN":  {Mechanism: DPGaussian, Epsilon: 1, Delta: math.NaN(), Clip: 1},
		"gaussian eps -1": {Mechanism: DPGaussian, Epsilon: -1, Delta: 1e-5, Clip: 1},
	} {
		if err := d.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	for _, d := range []DPConfig{{Epsilon: 1, Clip: 1}, {Mechanism: DPGaussian, Epsilon: 1, Delta: 1e-5, Clip: 1},
		{Mechanism: DPPaper, Epsilon: 1, Clip: 1}} {
		if err := d.Validate(); err != nil {
			t.Errorf("%+v: %v", d, err)
		}
	}
}

func TestClipNorms(t *testing.T) {
	g := []float64{3, -4, 1}
	ClipL1(g, 4)
	if s := math.Abs(g[0]) + math.Abs(g[1]) + math.Abs(g[2]); math.Abs(s-4) > 1e-14 || g[0] != 1.5 {
		t.Fatalf("ClipL1 → %v", g)
	}
	h := []float64{3, -4}
	ClipL2(h, 1)
	if math.Abs(h[0]-0.6) > 1e-15 || math.Abs(h[1]+0.8) > 1e-15 {
		t.Fatalf("ClipL2 → %v", h)
	}
	small := []float64{0.1, 0.1}
	ClipL1(small, 1)
	ClipL2(small, 1)
	if small[0] != 0.1 || small[1] != 0.1 {
		t.Fatal("clipping changed a vector inside the ball")
	}
	// Entries around 1e200: the sum of squares would overflow.
	big := []float64{3e200, 4e200}
	if n := norm2(big); math.Abs(n-5e200) > 1e186 {
		t.Fatalf("norm2 = %v, want 5e200", n)
	}
}

package fedvi

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/pacpfl/pacpfl/conv"
	"github.com/pacpfl/pacpfl/data"
)

// tiny is a small network on 8×8 images: conv 2 → conv 3 → 2×2 pool →
// dense 6 (4 global, 2 local features), P with 5 hidden units, 3 classes.
var tiny = Arch{InH: 8, InW: 8, Classes: 3, Conv1: 2, Conv2: 3, Embed: 6, Global: 4, PHidden: 5}

func newTiny(t *testing.T, seed uint64) (*Model, []float64) { return newTinyArch(t, tiny, seed) }

func newTinyArch(t *testing.T, a Arch, seed uint64) (*Model, []float64) {
	t.Helper()
	m, err := NewModel(a, nil)
	if err != nil {
		t.Fatal(err)
	}
	theta := make([]float64, m.NumParams())
	if err := m.Init(theta, rand.New(rand.NewPCG(seed, 1))); err != nil {
		t.Fatal(err)
	}
	// Positive biases, so that most ReLUs of so small a network are
	// active and every gradient path is exercised.
	rng := rand.New(rand.NewPCG(seed, 2))
	for i := range theta {
		if theta[i] == 0 {
			theta[i] = 0.6 + 0.2*rng.Float64()
		}
	}
	if err := m.Set(theta); err != nil {
		t.Fatal(err)
	}
	return m, theta
}

// kinkP gives P's first layer biases of both signs, so that some of its
// ReLUs are off for some inputs and P is not linear (with every unit on,
// the mean of P's outputs would equal P of the mean features).
func kinkP(t *testing.T, m *Model, theta []float64) {
	t.Helper()
	for i := range m.p1.Bias {
		m.p1.Bias[i] = []float64{0.12, 0.08, -0.05}[i%3]
	}
	m.Get(theta)
}

func randImages(rng *rand.Rand, n int) *conv.Tensor {
	x := conv.NewTensor(n, 1, 8, 8)
	for i := range x.Data {
		x.Data[i] = rng.Float64()
	}
	return x
}

func TestArchDefaults(t *testing.T) {
	a := Paper(62)
	if a.Embed != 128 || a.Global != 102 || a.Local() != 26 || a.PHidden != 256 || a.Conv1 != 32 || a.Conv2 != 64 ||
		a.Kernel != 3 || a.Drop1 != 0.25 || a.Drop2 != 0.5 {
		t.Errorf("Paper(62) = %+v, want docs/math.md §9's d = 128 split 102/26, P 256-256, conv 32/64 3×3, dropout "+
			"0.25/0.5", a)
	}
	m, err := NewModel(Paper(62), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.p3.Out; got != (2*26+1)*62 {
		t.Errorf("P's output has %d units, want (2·26 + 1)·62 = %d", got, (2*26+1)*62)
	}
	if m.dense.In != 64*12*12 {
		t.Errorf("E's dense layer takes %d features, want 64·12·12", m.dense.In)
	}
	for _, bad := range []Arch{{Global: 128}, {Embed: 8, Global: 9}, {InH: 5, InW: 5}, {Classes: 1}, {Drop1: 1}} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if a := (Arch{Drop1: -1, Drop2: -1}).withDefaults(); a.Drop1 != 0 || a.Drop2 != 0 {
		t.Errorf("negative dropout rates should mean none, got %v, %v", a.Drop1, a.Drop2)
	}
}

// TestPosteriorShapesAndKL: P's output is split into μ, σ = softplus(ρ)
// and the bias, and the KL term matches numerical integration of
// ∫ q ln(q/r) for every local weight.
func TestPosteriorShapesAndKL(t *testing.T) {
	m, theta := newTiny(t, 3)
	rng := rand.New(rand.NewPCG(4, 4))
	x := randImages(rng, 7)
	if err := m.Personalise(theta, x.Data); err != nil {
		t.Fatal(err)
	}
	dl, C := tiny.Local(), tiny.Classes
	p := &m.post
	if len(p.mu) != dl*C || len(p.sigma) != dl*C || len(p.bias) != C {
		t.Fatalf("μ %d, σ %d, bias %d values; want %d, %d, %d", len(p.mu), len(p.sigma), len(p.bias), dl*C, dl*C, C)
	}
	// P's raw output, recomputed from the pooled features.
	h, _ := m.p1.Forward(&m.pooled)
	h, _ = m.prelu1.Forward(h)
	h, _ = m.p2.Forward(h)
	h, _ = m.prelu2.Forward(h)
	h, _ = m.p3.Forward(h)
	for i := 0; i < dl*C; i++ {
		if p.mu[i] != h.Data[i] || p.sigma[i] != softplus(h.Data[dl*C+i]) {
			t.Fatalf("weight %d: μ %v σ %v, P gives %v and softplus(%v)", i, p.mu[i], p.sigma[i], h.Data[i],
				h.Data[dl*C+i])
		}
	}
	for c := 0; c < C; c++ {
		if p.bias[c] != h.Data[2*dl*C+c] {
			t.Fatalf("bias %d: %v, P gives %v", c, p.bias[c], h.Data[2*dl*C+c])
		}
	}
	// Hand-set posterior: KL against a quadrature of ∫ q ln(q/r).
	for i := range p.mu {
		p.mu[i] = 0.3 * float64(i%5-2)
		p.rho[i] = -1.5 + 0.4*float64(i%4)
		p.sigma[i] = softplus(p.rho[i])
	}
	sr := m.PriorStd()
	want := 0.0
	for i := range p.mu {
		mu, sg := p.mu[i], p.sigma[i]
		// Simpson's rule over μ ± 12σ.
		const N = 4000
		lo, hi := mu-12*sg, mu+12*sg
		hstep := (hi - lo) / N
		s := 0.0
		for j := 0; j <= N; j++ {
			b := lo + float64(j)*hstep
			lq := -0.5*math.Log(2*math.Pi*sg*sg) - (b-mu)*(b-mu)/(2*sg*sg)
			lr := -0.5*math.Log(2*math.Pi*sr*sr) - b*b/(2*sr*sr)
			f := math.Exp(lq) * (lq - lr)
			w := 2.0
			switch {
			case j == 0 || j == N:
				w = 1
			case j%2 == 1:
				w = 4
			}
			s += w * f
		}
		want += s * hstep / 3
	}
	if got := p.kl(m.priorVar); math.Abs(got-want) > 1e-8*math.Max(1, want) {
		t.Errorf("KL = %.12g, quadrature %.12g", got, want)
	}
	// σ_r² is Glorot's variance for a d_l → |Y| dense layer.
	if math.Abs(m.priorVar-2.0/float64(dl+C)) > 1e-15 {
		t.Errorf("σ_r² = %v, want 2/(d_l+|Y|)", m.priorVar)
	}
	// Where softplus underflows, ln σ is still finite and the KL too.
	p.rho[0], p.sigma[0] = -800, softplus(-800)
	if kl := p.kl(m.priorVar); math.IsInf(kl, 0) || math.IsNaN(kl) {
		t.Errorf("KL with ρ = −800 is %v", kl)
	}
}

// TestPersonalisePooling: the support set enters P only through its mean
// global features, so duplicating or reordering it changes nothing, also
// across evaluation chunks.
func TestPersonalisePooling(t *testing.T) {
	m, theta := newTiny(t, 5)
	rng := rand.New(rand.NewPCG(6, 6))
	x := randImages(rng, 300) // more than one evaluation chunk
	if err := m.Personalise(theta, x.Data); err != nil {
		t.Fatal(err)
	}
	mu := slices.Clone(m.post.mu)
	rev := make([]float64, len(x.Data))
	for i := 0; i < 300; i++ {
		copy(rev[i*64:(i+1)*64], x.Data[(299-i)*64:(300-i)*64])
	}
	if err := m.Personalise(theta, append(rev, rev...)); err != nil {
		t.Fatal(err)
	}
	for i := range mu {
		if math.Abs(mu[i]-m.post.mu[i]) > 1e-12 {
			t.Fatalf("μ[%d] = %v for the set, %v for it reversed and twice", i, mu[i], m.post.mu[i])
		}
	}
	// Dropout is off in evaluation: a second call gives the same.
	probs1, err := m.Predict(x.Data[:10*64], 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	probs2, _ := m.Predict(x.Data[:10*64], 0, nil)
	if !slices.Equal(probs1, probs2) {
		t.Error("two evaluations of the same images differ")
	}
	for i := 0; i < 10; i++ {
		s := 0.0
		for _, v := range probs1[i*3 : (i+1)*3] {
			s += v
		}
		if math.Abs(s-1) > 1e-12 {
			t.Errorf("row %d sums to %v", i, s)
		}
	}
	if _, err := m.Predict(x.Data[:10], 1, rand.New(rand.NewPCG(1, 1))); err == nil {
		t.Error("a partial image accepted")
	}
	if err := m.Personalise(theta, nil); err == nil {
		t.Error("an empty support set accepted")
	}
}

// TestLossGradFiniteDifferences checks every gradient of the client loss
// (E, P, G, through β = μ + σε and the τ·KL term) against central
// differences, with the dropout masks and ε fixed.
func TestLossGradFiniteDifferences(t *testing.T) {
	for _, po := range []bool{false, true} {
		t.Run(map[bool]string{false: "pool-features", true: "pool-outputs"}[po], func(t *testing.T) {
			a := tiny
			a.PoolOutputs = po
			lossGradFD(t, a)
		})
	}
}

func lossGradFD(t *testing.T, a Arch) {
	m, theta := newTinyArch(t, a, 7)
	kinkP(t, m, theta)
	rng := rand.New(rand.NewPCG(8, 8))
	m.setTrain(true, rand.New(rand.NewPCG(9, 9)))
	m.drop1.Fixed, m.drop2.Fixed = true, true
	x := randImages(rng, 9)
	y := []int{0, 1, 2, 2, 1, 0, 1, 2, 0}
	eps := make([]float64, tiny.Local()*tiny.Classes)
	for i := range eps {
		eps[i] = rng.NormFloat64()
	}
	const tau = 0.8 // large, so that the KL's gradient counts
	ns := 4
	if _, err := m.LossGrad(x, y, ns, eps, tau); err != nil {
		t.Fatal(err)
	}
	grad := make([]float64, m.NumParams())
	m.Grad(grad)
	loss := func() float64 {
		if err := m.Set(theta); err != nil {
			t.Fatal(err)
		}
		l, err := m.LossGrad(x, y, ns, eps, tau)
		if err != nil {
			t.Fatal(err)
		}
		return l.Total
	}
	worst := 0.0
	off := 0
	for _, p := range m.params {
		idx := make([]int, 0, 12)
		for i := 0; i < len(p.Value); i += max(1, len(p.Value)/12) {
			idx = append(idx, off+i)
		}
		for _, i := range idx {
			const h = 1e-6
			old := theta[i]
			theta[i] = old + h
			lp := loss()
			theta[i] = old - h
			lm := loss()
			theta[i] = old
			fd := (lp - lm) / (2 * h)
			err := math.Abs(fd-grad[i]) / math.Max(math.Abs(fd)+math.Abs(grad[i]), 1e-4)
			worst = math.Max(worst, err)
			if err > 1e-5 {
				t.Errorf("%s[%d]: analytic %.10g, finite difference %.10g", p.Name, i-off, grad[i], fd)
			}
		}
		off += len(p.Value)
	}
	t.Logf("worst relative error %.2g", worst)
	// The gradient reaches every block: E, P (through μ, σ and the bias)
	// and G.
	off = 0
	for _, p := range m.params {
		nz := false
		for _, g := range grad[off : off+len(p.Value)] {
			nz = nz || g != 0
		}
		if !nz && !strings.HasSuffix(p.Name, "bias") {
			t.Errorf("%s has an all-zero gradient", p.Name)
		}
		off += len(p.Value)
	}
}

// TestSupportQuerySplit: the first half of a mini-batch is the support set
// (its labels are never used, its images only through P), the second half
// the query set.
func TestSupportQuerySplit(t *testing.T) {
	if s, q := Split(256); s != 128 || q != 128 {
		t.Errorf("Split(256) = %d, %d", s, q)
	}
	if s, q := Split(7); s != 3 || q != 4 {
		t.Errorf("Split(7) = %d, %d", s, q)
	}
	for _, c := range []struct {
		n, b int
		want []int
	}{{10, 4, []int{4, 4, 2}}, {9, 4, []int{4, 5}}, {3, 256, []int{3}}, {256, 256, []int{256}},
		{513, 256, []int{256, 257}}} {
		if got := Batches(c.n, c.b); !slices.Equal(got, c.want) {
			t.Errorf("Batches(%d, %d) = %v, want %v", c.n, c.b, got, c.want)
		}
	}
	if q := QueryCount(10, 4, 2); q != 2*(2+2+1) {
		t.Errorf("QueryCount(10, 4, 2) = %d, want 10", q)
	}
	m, theta := newTiny(t, 11)
	m.setTrain(false, nil)
	rng := rand.New(rand.NewPCG(12, 12))
	x := randImages(rng, 8)
	y := []int{0, 1, 2, 0, 1, 2, 0, 1}
	eps := make([]float64, tiny.Local()*tiny.Classes)
	for i := range eps {
		eps[i] = rng.NormFloat64()
	}
	base, err := m.LossGrad(x, y, 4, eps, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Support labels do not matter.
	y2 := slices.Clone(y)
	y2[0], y2[3] = 2, 1
	if l, _ := m.LossGrad(x, y2, 4, eps, 0); l.Total != base.Total {
		t.Errorf("changing support labels changed the loss: %v → %v", base.Total, l.Total)
	}
	// A query label does.
	y2 = slices.Clone(y)
	y2[5] = 0
	if l, _ := m.LossGrad(x, y2, 4, eps, 0); l.Total == base.Total {
		t.Error("changing a query label left the loss unchanged")
	}
	// A support image does (through P), and the loss equals a direct
	// computation: mean CE of G(R^g_q) + R^l_q βᵀ + b over the query.
	x2 := &conv.Tensor{N: x.N, C: x.C, H: x.H, W: x.W, Data: slices.Clone(x.Data)}
	for j := 0; j < 64; j++ {
		x2.Data[j] = 1 - x2.Data[j]
	}
	if l, _ := m.LossGrad(x2, y, 4, eps, 0); l.Total == base.Total {
		t.Error("changing a support image left the loss unchanged")
	}
	if _, err := m.LossGrad(x, y, 8, eps, 0); err == nil {
		t.Error("an empty query set accepted")
	}
	if _, err := m.LossGrad(x, y[:7], 4, eps, 0); err == nil {
		t.Error("7 labels for 8 images accepted")
	}
	bad := slices.Clone(y)
	bad[6] = 3
	if _, err := m.LossGrad(x, bad, 4, eps, 0); err == nil {
		t.Error("label 3 of 3 classes accepted")
	}
	// The direct computation.
	if err := m.Set(theta); err != nil {
		t.Fatal(err)
	}
	R, _ := m.embed(x)
	Rd := slices.Clone(R.Data)
	pool := make([]float64, 4)
	for i := 0; i < 4; i++ {
		for j := 0; j < 4; j++ {
			pool[j] += Rd[i*6+j] / 4
		}
	}
	copy(m.pooled.Data, pool)
	if err := m.constructPosterior(); err != nil {
		t.Fatal(err)
	}
	ce := 0.0
	for i := 4; i < 8; i++ {
		z := make([]float64, 3)
		for c := 0; c < 3; c++ {
			s := m.post.bias[c] + m.g.Bias[c]
			for j := 0; j < 4; j++ {
				s += m.g.Weight[c*4+j] * Rd[i*6+j]
			}
			for j := 0; j < 2; j++ {
				s += (m.post.mu[c*2+j] + m.post.sigma[c*2+j]*eps[c*2+j]) * Rd[i*6+4+j]
			}
			z[c] = s
		}
		lse := math.Log(math.Exp(z[0]) + math.Exp(z[1]) + math.Exp(z[2]))
		ce += (lse - z[y[i]]) / 4
	}
	if math.Abs(ce-base.CE) > 1e-12 {
		t.Errorf("loss %v, direct computation %v", base.CE, ce)
	}
}

// synthetic is a small federated image set: 8×8 images of 3 classes, each
// class a bright bar (row, column or diagonal) on noise, split over
// clients by a Dirichlet(0.5) over labels.
func synthetic(t *testing.T, clients, newClients int, seed uint64) *data.Dataset {
	t.Helper()
	const n = 900
	rng := rand.New(rand.NewPCG(seed, 99))
	im := &data.Images{Name: "synthetic", Rows: 8, Cols: 8, Classes: 3, Pixels: make([]uint8, n*64),
		Labels: make([]uint8, n)}
	for i := 0; i < n; i++ {
		c := i % 3
		im.Labels[i] = uint8(c)
		p := im.Pixels[i*64 : (i+1)*64]
		off := rng.IntN(4)
		for j := range p {
			p[j] = uint8(rng.IntN(80))
		}
		for k := 0; k < 8; k++ {
			switch c {
			case 0:
				p[(2+off)*8+k] = 255
			case 1:
				p[k*8+2+off] = 255
			default:
				p[k*8+k] = 255
			}
		}
	}
	ds, err := data.Dirichlet(im, data.DirichletConfig{Clients: clients, New: newClients, Alpha: 0.5, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func tinyOptions() Options {
	o := DefaultOptions()
	o.Arch = tiny
	o.Arch.Conv1, o.Arch.Conv2, o.Arch.Embed, o.Arch.Global, o.Arch.PHidden = 4, 6, 10, 8, 8
	o.Rounds, o.ClientsPerRound, o.Batch, o.EvalLast = 18, 3, 32, 3
	o.ClientLR, o.ServerLR, o.Momentum = 0.1, 1, 0.5
	o.Seed = 5
	return o
}

// TestTrainLearnsAndIsDeterministic: a short run on the synthetic set
// classifies both groups far above chance, gives the same θ and figures
// with GOMAXPROCS 1 and 2, and does not look at the non-participating
// clients while training.
func TestTrainLearnsAndIsDeterministic(t *testing.T) {
	ds := synthetic(t, 8, 3, 1)
	o := tinyOptions()
	prev := runtime.GOMAXPROCS(1)
	r1, err := Train(ds, o)
	runtime.GOMAXPROCS(2)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := Train(ds, o)
	runtime.GOMAXPROCS(prev)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r1.Theta, r2.Theta) {
		t.Fatal("θ differs between GOMAXPROCS 1 and 2")
	}
	if r1.LastExisting != r2.LastExisting || r1.LastNew != r2.LastNew {
		t.Errorf("accuracies differ: %v/%v and %v/%v", r1.LastExisting, r1.LastNew, r2.LastExisting, r2.LastNew)
	}
	if len(r1.History) != 3 || r1.History[2].Round != 18 || r1.History[0].Round != 16 {
		t.Fatalf("evaluated rounds %+v, want 16..18", r1.History)
	}
	f := r1.Final()
	t.Logf("weighted accuracy: participating %.1f%%, non-participating %.1f%% (last 3 rounds %.1f%%, %.1f%%)",
		f.ExistingWeighted, f.NewWeighted, r1.LastExisting, r1.LastNew)
	if f.ExistingWeighted < 80 || f.NewWeighted < 80 {
		t.Errorf("accuracy %.1f%% / %.1f%% after training, want ≥ 80%% (chance 33%%)", f.ExistingWeighted,
			f.NewWeighted)
	}
	mean := (r1.History[0].ExistingWeighted + r1.History[1].ExistingWeighted + r1.History[2].ExistingWeighted) / 3
	if math.Abs(mean-r1.LastExisting) > 1e-12 {
		t.Errorf("mean over the last rounds %v, want %v", r1.LastExisting, mean)
	}
	// The weighted accuracy is the fraction of the group's test images
	// classified correctly.
	correct, total := 0.0, 0.0
	for k, c := range ds.Existing {
		correct += r1.Existing.Accuracy[k] / 100 * float64(len(c.YTest))
		total += float64(len(c.YTest))
	}
	if math.Abs(100*correct/total-f.ExistingWeighted) > 1e-9 {
		t.Errorf("weighted accuracy %v, pooled %v", f.ExistingWeighted, 100*correct/total)
	}
	// Training never reads the non-participating clients.
	ds2 := *ds
	ds2.New = synthetic(t, 8, 3, 2).New
	o.EvalLast = 0
	r3, err := Train(&ds2, o)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r3.Theta, r1.Theta) {
		t.Error("θ depends on the non-participating clients")
	}
}

func TestServerMomentumStep(t *testing.T) {
	// One participating client, all rounds: its Δ is −lr·∇ of its loss;
	// two rounds of the server's momentum SGD from θ⁽⁰⁾ must equal
	// θ⁽⁰⁾ + v₁ + v₂ with v₁ = α·Δ₁, v₂ = μ·v₁ + α·Δ₂.
	ds := synthetic(t, 2, 0, 3)
	ds.Existing = ds.Existing[:1]
	o := tinyOptions()
	o.ServerLR, o.Momentum, o.EvalLast = 2.5, 0.9, 0
	o.Rounds = 2
	r, err := Train(ds, o)
	if err != nil {
		t.Fatal(err)
	}
	// Reproduce by hand with the same streams.
	m, err := NewModel(o.Arch, nil)
	if err != nil {
		t.Fatal(err)
	}
	theta := make([]float64, m.NumParams())
	m.Init(theta, rand.New(rand.NewPCG(o.Seed, tagInit)))
	v := make([]float64, len(theta))
	out := make([]float64, len(theta))
	for round := 0; round < 2; round++ {
		rng := rand.New(rand.NewPCG(o.Seed, data.StreamID(tagRound, uint64(round), 0)))
		if _, err := m.ClientUpdate(theta, out, ds.Existing[0].X, ds.Existing[0].Y, &o, rng); err != nil {
			t.Fatal(err)
		}
		for j := range theta {
			v[j] = o.Momentum*v[j] + o.ServerLR*(out[j]-theta[j])
			theta[j] += v[j]
		}
	}
	d := 0.0
	for j := range theta {
		d = math.Max(d, math.Abs(theta[j]-r.Theta[j]))
	}
	if d > 1e-12 {
		t.Errorf("θ differs from the hand-computed server steps by %g", d)
	}
}

func TestOptionsErrors(t *testing.T) {
	ds := synthetic(t, 2, 0, 3)
	for _, mod := range []func(*Options){
		func(o *Options) { o.Batch = 1 },
		func(o *Options) { o.ClientLR = 0 },
		func(o *Options) { o.ServerLR = math.Inf(1) },
		func(o *Options) { o.Momentum = 1 },
		func(o *Options) { o.Tau = -1 },
		func(o *Options) { o.LocalEpochs = 0 },
		func(o *Options) { o.Arch.Classes = 5 },
	} {
		o := tinyOptions()
		mod(&o)
		if _, err := Train(ds, o); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
	o := tinyOptions()
	o.ClientLR, o.Rounds = 1e150, 3
	if _, err := Train(ds, o); err == nil || !strings.Contains(err.Error(), "learning rate") {
		t.Errorf("a diverging run: %v", err)
	}
}

// TestPoolOutputs: with Arch.PoolOutputs the posterior of a support set is
// the mean of P's outputs over its images (σ = softplus of the mean ρ),
// which differs from P of the mean features once P is not linear; and in
// both modes the client loss builds the same posterior from its support
// half (dropout off) as evaluation does from the same images.
func TestPoolOutputs(t *testing.T) {
	a := tiny
	a.PoolOutputs = true
	m, theta := newTinyArch(t, a, 11)
	rng := rand.New(rand.NewPCG(12, 12))
	x := randImages(rng, 5)
	// P's first-layer biases minus the mean pre-activation over the five
	// images' global features: every hidden unit is on for some images and
	// off for others, so P is not linear on them.
	if err := m.Personalise(theta, x.Data); err != nil {
		t.Fatal(err)
	}
	clear(m.p1.Bias)
	h, err := m.p1.Forward(&m.pooled)
	if err != nil {
		t.Fatal(err)
	}
	for u := range m.p1.Bias {
		for r := 0; r < h.N; r++ {
			m.p1.Bias[u] -= h.Data[r*len(m.p1.Bias)+u] / float64(h.N)
		}
	}
	m.Get(theta)
	k, C := a.Local()*a.Classes, a.Classes
	mu, rho, bias := make([]float64, k), make([]float64, k), make([]float64, C)
	for i := 0; i < 5; i++ {
		if err := m.Personalise(theta, x.Data[i*64:(i+1)*64]); err != nil {
			t.Fatal(err)
		}
		for j := range mu {
			mu[j] += m.post.mu[j] / 5
			rho[j] += m.post.rho[j] / 5
		}
		for j := range bias {
			bias[j] += m.post.bias[j] / 5
		}
	}
	if err := m.Personalise(theta, x.Data); err != nil {
		t.Fatal(err)
	}
	p := &m.post
	for j := range mu {
		if math.Abs(p.mu[j]-mu[j]) > 1e-12 || math.Abs(p.rho[j]-rho[j]) > 1e-12 || p.sigma[j] != softplus(p.rho[j]) {
			t.Fatalf("weight %d: μ %v ρ %v σ %v; mean of the images' P outputs μ %v ρ %v", j, p.mu[j], p.rho[j],
				p.sigma[j], mu[j], rho[j])
		}
	}
	for j := range bias {
		if math.Abs(p.bias[j]-bias[j]) > 1e-12 {
			t.Fatalf("bias %d: %v, mean of the images' %v", j, p.bias[j], bias[j])
		}
	}
	// P of the mean features is another posterior.
	mf, _ := newTinyArch(t, tiny, 11)
	if err := mf.Personalise(theta, x.Data); err != nil {
		t.Fatal(err)
	}
	diff := 0.0
	for j := range bias {
		diff = math.Max(diff, math.Abs(mf.post.bias[j]-p.bias[j]))
	}
	if diff < 1e-6 {
		t.Errorf("pooling P's outputs and pooling the features give the same bias (max difference %g): P is linear "+
			"on these inputs", diff)
	}
	// Training's posterior (support = first half, dropout off) equals
	// evaluation's on the same support images, in both modes.
	for _, mm := range []*Model{m, mf} {
		xs := randImages(rng, 8)
		if err := mm.Personalise(theta, xs.Data[:4*64]); err != nil {
			t.Fatal(err)
		}
		want := slices.Concat(mm.post.mu, mm.post.rho, mm.post.bias)
		mm.setTrain(false, nil)
		if _, err := mm.LossGrad(xs, []int{0, 1, 2, 0, 1, 2, 0, 1}, 4, make([]float64, k), 0); err != nil {
			t.Fatal(err)
		}
		got := slices.Concat(mm.post.mu, mm.post.rho, mm.post.bias)
		for j := range want {
			if math.Abs(got[j]-want[j]) > 1e-12 {
				t.Fatalf("PoolOutputs %v: posterior output %d is %v in the loss, %v in evaluation", mm.A.PoolOutputs, j,
					got[j], want[j])
			}
		}
	}
}

// TestInitNarrowPosterior: θ⁽⁰⁾ gives P's scale outputs the bias Rho0
// and its mean and bias outputs zero biases.
func TestInitNarrowPosterior(t *testing.T) {
	m, err := NewModel(tiny, nil)
	if err != nil {
		t.Fatal(err)
	}
	theta := make([]float64, m.NumParams())
	if err := m.Init(theta, rand.New(rand.NewPCG(1, 1))); err != nil {
		t.Fatal(err)
	}
	k := tiny.Local() * tiny.Classes
	for i, b := range m.p3.Bias {
		want := 0.0
		if i >= k && i < 2*k {
			want = Rho0
		}
		if b != want {
			t.Fatalf("P's output bias %d is %v, want %v", i, b, want)
		}
	}
	if s := softplus(Rho0); s > 0.01 || s < 0.005 {
		t.Errorf("initial σ = softplus(%v) = %v", Rho0, s)
	}
}

// TestEmbedReLU: the paper's E ends dense → dropout, so its features take
// both signs; with EmbedReLU (Reddi et al.'s CNN, the FedAvg network) none
// is negative.
func TestEmbedReLU(t *testing.T) {
	for _, relu := range []bool{false, true} {
		a := tiny
		a.EmbedReLU = relu
		m, theta := newTinyArch(t, a, 13)
		if err := m.Set(theta); err != nil {
			t.Fatal(err)
		}
		// Biases of both signs on E's dense layer.
		for i := range m.dense.Bias {
			m.dense.Bias[i] = float64(i%2*2-1) * 3
		}
		m.setTrain(false, nil)
		R, err := m.embed(randImages(rand.New(rand.NewPCG(14, 14)), 4))
		if err != nil {
			t.Fatal(err)
		}
		neg := 0
		for _, v := range R.Data {
			if v < 0 {
				neg++
			}
		}
		if relu && neg > 0 || !relu && neg == 0 {
			t.Errorf("EmbedReLU %v: %d of %d features negative", relu, neg, len(R.Data))
		}
		if got := strings.Contains(a.String(), "dense6 → relu"); got != relu {
			t.Errorf("EmbedReLU %v: String() = %q", relu, a.String())
		}
	}
}

package lml

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pacpfl/pacpfl/conv"
)

// tinyModels are the two architectures shrunk so that finite differences
// over every coordinate of φ stay fast.
func tinyModels() []BNN {
	return []BNN{
		{Arch: ArchMLP, InC: 1, InH: 2, InW: 3, Hidden: 4, Classes: 3},
		{Arch: ArchBCNN, InC: 1, InH: 11, InW: 10, Conv1: 2, Conv2: 3, Kernel: 3, Hidden: 4, Classes: 3},
	}
}

// randomPhi draws μ ~ N(0, 0.5²) and ω around ln(2/fan-in).
func randomPhi(m BNN, rng *rand.Rand) []float64 {
	phi := m.HyperPriorMean()
	nw := m.NumWeights()
	for i := range nw {
		phi[i] = 0.5 * rng.NormFloat64()
		phi[nw+i] += 0.3 * rng.NormFloat64()
	}
	return phi
}

func randomBatch(m BNN, rng *rand.Rand, n int) (X, y []float64) {
	m = m.WithDefaults()
	X = make([]float64, n*m.D())
	for i := range X {
		X[i] = rng.Float64()
	}
	y = make([]float64, n)
	for i := range y {
		y[i] = float64(rng.IntN(m.Classes))
	}
	return X, y
}

func randomNoise(rng *rand.Rand, n int) []float64 {
	eps := make([]float64, n)
	for i := range eps {
		eps[i] = rng.NormFloat64()
	}
	return eps
}

func TestBNNLayoutMatchesNetwork(t *testing.T) {
	models := append(tinyModels(), BNN{Arch: ArchMLP}, BNN{Arch: ArchBCNN, Classes: 62})
	for _, m := range models {
		net, err := m.Build(2, conv.Options{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		wl := m.WeightLayout()
		ps := net.Params()
		if len(ps) != len(wl) {
			t.Fatalf("%v: %d layout blocks, %d network parameters", m, len(wl), len(ps))
		}
		off := 0
		for i, p := range ps {
			if p.Name != wl[i].Name || len(p.Value) != 2*wl[i].Size() || wl[i].Offset != off {
				t.Errorf("%v: block %d: layout %s size %d offset %d, network %s size %d/2", m, i, wl[i].Name,
					wl[i].Size(), wl[i].Offset, p.Name, len(p.Value))
			}
			off += wl[i].Size()
		}
		if off != m.NumWeights() || m.NumParams() != 2*off {
			t.Errorf("%v: |θ| = %d, blocks sum to %d, dφ = %d", m, m.NumWeights(), off, m.NumParams())
		}
		pl := m.PhiLayout()
		if last := pl[len(pl)-1]; last.Offset+last.Size() != m.NumParams() || pl[len(wl)].Name != "omega."+wl[0].Name {
			t.Errorf("%v: φ layout ends at %d (dφ %d), block %d is %s", m, last.Offset+last.Size(), m.NumParams(),
				len(wl), pl[len(wl)].Name)
		}
	}
	// The paper-size networks: 784-100-10 and the BCNN with dense 512.
	if n := (BNN{Arch: ArchMLP}).NumWeights(); n != 784*100+100+100*10+10 {
		t.Errorf("MLP 784-100-10 has %d weights", n)
	}
	if n := (BNN{Arch: ArchBCNN}).NumWeights(); n != 10*25+10+62*10*25+62+992*512+512+512*10+10 {
		t.Errorf("BCNN has %d weights", n)
	}
}

func TestBNNHyperPriorMean(t *testing.T) {
	m := tinyModels()[1]
	mean := m.HyperPriorMean()
	nw := m.NumWeights()
	fan := m.FanIns()
	want := map[string]float64{"conv1": 1 * 9, "conv2": 2 * 9, "dense1": 3 * 1 * 1, "dense2": 4}
	for _, b := range m.WeightLayout() {
		f := want[b.Name[:len(b.Name)-len(".weight")]]
		if b.Name[len(b.Name)-5:] == ".bias" {
			f = want[b.Name[:len(b.Name)-len(".bias")]]
		}
		for i := b.Offset; i < b.Offset+b.Size(); i++ {
			if mean[i] != 0 || mean[nw+i] != math.Log(2/f) || fan[i] != f {
				t.Fatalf("%s[%d]: hyper-prior mean (%v, %v), fan-in %v; want (0, ln(2/%v))", b.Name, i-b.Offset,
					mean[i], mean[nw+i], fan[i], f)
			}
		}
	}
}

func TestBNNValidate(t *testing.T) {
	bad := []BNN{
		{Arch: "resnet"},
		{Arch: ArchMLP, Classes: 1},
		{Arch: ArchMLP, Hidden: -1},
		{Arch: ArchBCNN, InH: 12, InW: 12},
		{Arch: ArchBCNN, Kernel: -3},
	}
	for _, m := range bad {
		if err := m.Validate(); err == nil {
			t.Errorf("%+v: no error", m)
		}
	}
	m := tinyModels()[0]
	X, y := randomBatch(m, rand.New(rand.NewPCG(1, 2)), 3)
	if err := m.CheckData(X, y); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func(){
		"short X":    func() { X = X[:len(X)-1] },
		"NaN input":  func() { X[4] = math.NaN() },
		"label 3":    func() { y[1] = 3 },
		"label -1":   func() { y[2] = -1 },
		"label 0.5":  func() { y[0] = 0.5 },
		"no samples": func() { X, y = nil, nil },
	} {
		X, y = randomBatch(m, rand.New(rand.NewPCG(1, 2)), 3)
		f()
		if err := m.CheckData(X, y); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// The gradient of the estimate (38) with the noise held fixed against
// central finite differences, every coordinate of φ.
func TestBNNLMLGradientFiniteDifferences(t *testing.T) {
	for _, m := range tinyModels() {
		rng := rand.New(rand.NewPCG(3, 4))
		const L = 3
		e, err := NewBNNEstimator(m, L, conv.Options{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		phi := randomPhi(m, rng)
		X, y := randomBatch(m, rng, 5)
		eps := randomNoise(rng, L*m.NumWeights())
		const scale = 0.7 // soft weights w_j, so every sample contributes
		grad := make([]float64, len(phi))
		if _, err := e.LMLWithNoise(phi, X, y, scale, eps, grad); err != nil {
			t.Fatal(err)
		}
		f := func(p []float64) float64 {
			v, err := e.LMLWithNoise(p, X, y, scale, eps, nil)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		const h = 1e-6
		worst := 0.0
		for i := range phi {
			p := append([]float64(nil), phi...)
			p[i] += h
			fp := f(p)
			p[i] -= 2 * h
			fm := f(p)
			fd := (fp - fm) / (2 * h)
			d := math.Abs(fd-grad[i]) / math.Max(1, math.Abs(fd))
			worst = math.Max(worst, d)
			if d > 1e-6 {
				t.Errorf("%v: ∂/∂φ[%d]: analytic %.10g, finite differences %.10g", m, i, grad[i], fd)
			}
		}
		t.Logf("%v: dφ = %d, worst relative error %.2g", m, len(phi), worst)
	}
}

// referenceLML evaluates (38) and its gradient with one single-sample
// network run once per weight sample: independent of the stacked layers
// and of the estimator's bookkeeping.
func referenceLML(t *testing.T, m BNN, L int, phi, X, y []float64, scale float64, eps []float64) (float64, []float64) {
	t.Helper()
	net, err := m.Build(1, conv.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	m = m.WithDefaults()
	nw := m.NumWeights()
	x := &conv.Tensor{N: len(y), C: m.InC, H: m.InH, W: m.InW, Data: X}
	labels := make([]int, len(y))
	for i, v := range y {
		labels[i] = int(v)
	}
	theta := func(j int) {
		off := 0
		for _, p := range net.Params() {
			for i := range p.Value {
				k := off + i
				p.Value[i] = phi[k] + math.Exp(phi[nw+k]/2)*eps[j*nw+k]
			}
			off += len(p.Value)
		}
	}
	s := make([]float64, L)
	for j := range s {
		theta(j)
		loss, err := net.Forward(x, labels)
		if err != nil {
			t.Fatal(err)
		}
		s[j] = -scale * loss * float64(len(y)) // loss is the mean NLL
	}
	lse := logSumExp(s)
	grad := make([]float64, 2*nw)
	for j := range s {
		w := math.Exp(s[j] - lse)
		theta(j)
		if _, err := net.Forward(x, labels); err != nil {
			t.Fatal(err)
		}
		if err := net.Backward(); err != nil {
			t.Fatal(err)
		}
		off := 0
		for _, p := range net.Params() {
			for i, g := range p.Grad {
				k := off + i
				gj := -scale * float64(len(y)) * g
				grad[k] += w * gj
				grad[nw+k] += w * gj * eps[j*nw+k] * 0.5 * math.Exp(phi[nw+k]/2)
			}
			off += len(p.Value)
		}
	}
	return lse - math.Log(float64(L)), grad
}

// The stacked evaluation of the L samples equals L separate evaluations.
func TestBNNStackedEqualsSeparate(t *testing.T) {
	models := append(tinyModels(), BNN{Arch: ArchMLP}, BNN{Arch: ArchBCNN})
	for _, m := range models {
		rng := rand.New(rand.NewPCG(5, 6))
		const L = 4
		e, err := NewBNNEstimator(m, L, conv.Options{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		phi := randomPhi(m, rng)
		if m.InH == 0 { // paper-size networks: He-scale means, a readable LML
			nw := m.NumWeights()
			fan := m.FanIns()
			for i := range nw {
				phi[i] = math.Sqrt(2/fan[i]) * rng.NormFloat64()
				phi[nw+i] -= 2
			}
		}
		X, y := randomBatch(m, rng, 6)
		grad := make([]float64, len(phi))
		v, err := e.LML(phi, X, y, 0.05, rng, grad)
		if err != nil {
			t.Fatal(err)
		}
		rv, rgrad := referenceLML(t, m, L, phi, X, y, 0.05, e.Noise())
		if math.Abs(v-rv) > 1e-12*math.Max(1, math.Abs(rv)) {
			t.Errorf("%v: stacked %.17g, separate %.17g", m, v, rv)
		}
		worst := 0.0
		for i := range grad {
			worst = math.Max(worst, math.Abs(grad[i]-rgrad[i])/math.Max(1e-3, math.Abs(rgrad[i])))
		}
		if worst > 1e-9 {
			t.Errorf("%v: gradients differ by up to %.3g (relative)", m, worst)
		}
	}
}

// With σ → 0 every sample is μ and the estimate is scale·Σ ln p(y | x, μ),
// computed here by hand for the MLP.
func TestBNNLMLPointMassLimit(t *testing.T) {
	m := tinyModels()[0].WithDefaults()
	rng := rand.New(rand.NewPCG(7, 8))
	phi := randomPhi(m, rng)
	nw := m.NumWeights()
	for i := range nw {
		phi[nw+i] = -80 // σ = e^{-40}
	}
	X, y := randomBatch(m, rng, 7)
	e, err := NewBNNEstimator(m, 3, conv.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	v, err := e.LML(phi, X, y, 1.5, rng, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := 0.0
	for r, lp := range mlpLogProbs(m, phi[:nw], X) {
		want += lp[int(y[r])]
	}
	want *= 1.5
	if math.Abs(v-want) > 1e-9*math.Max(1, math.Abs(want)) {
		t.Errorf("point-mass prior: estimate %.15g, scale·Σ ln p(y|x,μ) = %.15g", v, want)
	}
}

// The noise depends on the caller's seed only, not on the workers.
func TestBNNNoiseIndependentOfWorkers(t *testing.T) {
	m := BNN{Arch: ArchMLP, Hidden: 30} // 23,860 weights: several noise segments
	var eps [2][]float64
	var vals [2]float64
	for k, w := range []int{1, 3} {
		e, err := NewBNNEstimator(m, 2, conv.Options{Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(9, 10))
		phi := randomPhi(m, rng)
		X, y := randomBatch(m, rng, 4)
		if vals[k], err = e.LML(phi, X, y, 1, rand.New(rand.NewPCG(11, 12)), nil); err != nil {
			t.Fatal(err)
		}
		eps[k] = append([]float64(nil), e.Noise()...)
	}
	for i := range eps[0] {
		if eps[0][i] != eps[1][i] {
			t.Fatalf("noise %d differs between 1 and 3 workers: %v vs %v", i, eps[0][i], eps[1][i])
		}
	}
	if math.Abs(vals[0]-vals[1]) > 1e-12*math.Abs(vals[0]) {
		t.Errorf("estimate with 1 worker %v, with 3 workers %v", vals[0], vals[1])
	}
}

func TestBNNEstimatorNoAllocs(t *testing.T) {
	for _, m := range []BNN{{Arch: ArchMLP}, tinyModels()[1]} {
		rng := rand.New(rand.NewPCG(13, 14))
		e, err := NewBNNEstimator(m, 5, conv.Options{})
		if err != nil {
			t.Fatal(err)
		}
		phi := randomPhi(m, rng)
		X, y := randomBatch(m, rng, 16)
		grad := make([]float64, len(phi))
		if a := testing.AllocsPerRun(5, func() {
			if _, err := e.LML(phi, X, y, 2, rng, grad); err != nil {
				t.Fatal(err)
			}
		}); a != 0 {
			t.Errorf("%v: %v allocations per LML", m, a)
		}
	}
}

func TestBNNEstimatorErrors(t *testing.T) {
	m := tinyModels()[0]
	e, err := NewBNNEstimator(m, 2, conv.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	phi := randomPhi(m, rng)
	X, y := randomBatch(m, rng, 3)
	cases := map[string]func() error{
		"short φ":     func() error { _, err := e.LML(phi[1:], X, y, 1, rng, nil); return err },
		"short grad":  func() error { _, err := e.LML(phi, X, y, 1, rng, make([]float64, 3)); return err },
		"zero scale":  func() error { _, err := e.LML(phi, X, y, 0, rng, nil); return err },
		"NaN scale":   func() error { _, err := e.LML(phi, X, y, math.NaN(), rng, nil); return err },
		"bad label":   func() error { _, err := e.LML(phi, X, []float64{0, 7, 1}, 1, rng, nil); return err },
		"ragged X":    func() error { _, err := e.LML(phi, X[1:], y, 1, rng, nil); return err },
		"empty batch": func() error { _, err := e.LML(phi, nil, nil, 1, rng, nil); return err },
		"short noise": func() error { _, err := e.LMLWithNoise(phi, X, y, 1, make([]float64, 5), nil); return err },
	}
	for name, f := range cases {
		if err := f(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := NewBNNEstimator(m, 0, conv.Options{}); err == nil {
		t.Error("L = 0: no error")
	}
}

// mlpLogProbs evaluates the log class probabilities of the MLP with weights
// theta on every row of X by hand, from the documented layout.
func mlpLogProbs(m BNN, theta, X []float64) [][]float64 {
	m = m.WithDefaults()
	D, H, C := m.D(), m.Hidden, m.Classes
	W1, b1 := theta[:H*D], theta[H*D:H*D+H]
	W2, b2 := theta[H*D+H:H*D+H+C*H], theta[H*D+H+C*H:]
	out := make([][]float64, len(X)/D)
	for r := range out {
		h := make([]float64, H)
		for o := range H {
			a := b1[o]
			for i := range D {
				a += W1[o*D+i] * X[r*D+i]
			}
			h[o] = math.Max(a, 0)
		}
		z := make([]float64, C)
		for c := range C {
			z[c] = b2[c]
			for o := range H {
				z[c] += W2[c*H+o] * h[o]
			}
		}
		lse := logSumExp(z)
		for c := range z {
			z[c] -= lse
		}
		out[r] = z
	}
	return out
}

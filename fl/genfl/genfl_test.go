package genfl

import (
	"math"
	"math/rand/v2"
	"testing"
)

var tinyArch = Arch{In: 6, Hidden: []int{5, 4}, Classes: 3}

// tinyData returns n random rows of a's inputs with random labels.
func tinyData(a Arch, n int, seed uint64) Client {
	r := rand.New(rand.NewPCG(seed, 99))
	c := Client{X: make([]float64, n*a.In), Y: make([]int, n)}
	for i := range c.X {
		c.X[i] = r.NormFloat64()
	}
	for i := range c.Y {
		c.Y[i] = r.IntN(a.Classes)
	}
	return c
}

// tinyPosterior returns a prior with random means and a posterior near it.
func tinyPosterior(t *testing.T, a Arch, seed uint64) (*Prior, *Posterior) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	p, err := RandomPrior(a, 0.3, r)
	if err != nil {
		t.Fatal(err)
	}
	q := PosteriorAt(p)
	for j := range q.Mu {
		q.Mu[j] += 0.2 * r.NormFloat64()
		q.Rho[j] += 0.5 * r.NormFloat64()
	}
	return p, q
}

func TestArchLayout(t *testing.T) {
	if n := DefaultArch().NumParams(); n != 784*600+600+600*600+600+600*10+10 {
		t.Errorf("784-600-600-10 has %d parameters", n)
	}
	// The paper's count, 1,198,210, is the three-hidden-layer network.
	if n := (Arch{In: 784, Hidden: []int{600, 600, 600}, Classes: 10}).NumParams(); n != 1198210 {
		t.Errorf("784-600-600-600-10 has %d parameters, the paper says 1,198,210", n)
	}
	if s := DefaultArch().String(); s != "784-600-600-10" {
		t.Errorf("String %q", s)
	}
	for _, bad := range []Arch{{In: 0, Classes: 3}, {In: 3, Classes: 1}, {In: 3, Hidden: []int{0}, Classes: 2}} {
		if bad.Validate() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

func TestRandomPriorTruncated(t *testing.T) {
	a := Arch{In: 100, Hidden: []int{50}, Classes: 10}
	p, err := RandomPrior(a, 0.025, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	ins, outs := a.layers()
	off := 0
	for l := range ins {
		lim := 2 / math.Sqrt(float64(ins[l]))
		w := p.Mu[off : off+outs[l]*ins[l]]
		var s2 float64
		for _, v := range w {
			if math.Abs(v) > lim {
				t.Fatalf("layer %d weight mean %v beyond ±%v", l, v, lim)
			}
			s2 += v * v
		}
		// Truncated at ±2 standard deviations: variance 0.774/n_in.
		if got, want := s2/float64(len(w)), 0.774/float64(ins[l]); math.Abs(got-want) > 0.15*want {
			t.Errorf("layer %d: mean square %v, want ≈ %v", l, got, want)
		}
		for _, v := range p.Mu[off+outs[l]*ins[l] : off+outs[l]*ins[l]+outs[l]] {
			if v != 0 {
				t.Fatalf("bias mean %v, want 0", v)
			}
		}
		off += outs[l]*ins[l] + outs[l]
	}
}

func TestKLClosedForm(t *testing.T) {
	p := &Prior{Mu: []float64{0, 1}, Sigma: 0.5}
	q := &Posterior{Mu: []float64{0.3, 1}, Rho: []float64{invSoftplus(0.5), invSoftplus(0.2)}}
	want := (0.3*0.3)/(2*0.25) + math.Log(0.5/0.2) + (0.04)/(2*0.25) - 0.5
	got, err := KL(q, p)
	if err != nil || math.Abs(got-want) > 1e-12 {
		t.Errorf("KL = %v (%v), want %v", got, err, want)
	}
	if kl, _ := KL(PosteriorAt(p), p); kl > 1e-12 {
		t.Errorf("KL(P‖P) = %v", kl)
	}
}

// objectiveAt evaluates the objective with fixed noise at (μ, ρ).
func objectiveAt(t *testing.T, w *worker, c *Client, p *Prior, terms objectiveTerms, pMin float64) float64 {
	t.Helper()
	f, err := w.objective(c.X, c.Y, p, terms, pMin)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestObjectiveGradientFiniteDifferences(t *testing.T) {
	a := tinyArch
	c := tinyData(a, 7, 3)
	for _, cfg := range []struct {
		obj     Objective
		penalty float64
		m       int
	}{{F1, 1, 50}, {F2, 1, 50}, {F1, 0.1, 20}, {F2, 0.1, 500}} {
		p, q := tinyPosterior(t, a, 11)
		terms, err := newObjectiveTerms(cfg.obj, cfg.m, 0.05, cfg.penalty)
		if err != nil {
			t.Fatal(err)
		}
		w := newWorker(a, true)
		copy(w.mu, q.Mu)
		copy(w.rho, q.Rho)
		r := rand.New(rand.NewPCG(5, 5))
		for j := range w.eps {
			w.eps[j] = r.NormFloat64()
		}
		objectiveAt(t, w, &c, p, terms, 1e-6)
		gm := append([]float64(nil), w.g...)
		gr := append([]float64(nil), w.gr...)
		const h = 1e-6
		for j := 0; j < a.NumParams(); j += 3 {
			for _, v := range []struct {
				x    []float64
				want float64
				name string
			}{{w.mu, gm[j], "μ"}, {w.rho, gr[j], "ρ"}} {
				x0 := v.x[j]
				v.x[j] = x0 + h
				fp := objectiveAt(t, w, &c, p, terms, 1e-6)
				v.x[j] = x0 - h
				fm := objectiveAt(t, w, &c, p, terms, 1e-6)
				v.x[j] = x0
				fd := (fp - fm) / (2 * h)
				if math.Abs(fd-v.want) > 1e-6+1e-4*math.Abs(fd) {
					t.Errorf("%v penalty %v: ∂f/∂%s[%d] = %.9g, finite differences %.9g", cfg.obj, cfg.penalty, v.name,
						j, v.want, fd)
				}
			}
		}
	}
}

func TestObjectiveTerms(t *testing.T) {
	terms, _ := newObjectiveTerms(F1, 1000, 0.05, 1)
	c := (20 + math.Log(2*math.Sqrt(1000)/0.05)) / 2000
	f, dR, dKL := terms.eval(0.1, 20)
	if math.Abs(f-(0.1+math.Sqrt(c))) > 1e-15 || dR != 1 {
		t.Errorf("f1 = %v (∂R %v), want %v", f, dR, 0.1+math.Sqrt(c))
	}
	h := 1e-5
	fp, _, _ := terms.eval(0.1, 20+h)
	fm, _, _ := terms.eval(0.1, 20-h)
	if math.Abs((fp-fm)/(2*h)-dKL) > 1e-9 {
		t.Errorf("f1 ∂KL %v, finite differences %v", dKL, (fp-fm)/(2*h))
	}
	terms2, _ := newObjectiveTerms(F2, 1000, 0.05, 0.1)
	f2, dR2, dKL2 := terms2.eval(0.1, 20)
	c2 := (0.1*20 + math.Log(2*math.Sqrt(1000)/0.05)) / 2000
	if want := math.Pow(math.Sqrt(0.1+c2)+math.Sqrt(c2), 2); math.Abs(f2-want) > 1e-15 {
		t.Errorf("f2 = %v, want %v", f2, want)
	}
	fp, _, _ = terms2.eval(0.1+h, 20)
	fm, _, _ = terms2.eval(0.1-h, 20)
	if math.Abs((fp-fm)/(2*h)-dR2) > 1e-8 {
		t.Errorf("f2 ∂R %v, finite differences %v", dR2, (fp-fm)/(2*h))
	}
	fp, _, _ = terms2.eval(0.1, 20+h)
	fm, _, _ = terms2.eval(0.1, 20-h)
	if math.Abs((fp-fm)/(2*h)-dKL2) > 1e-9 {
		t.Errorf("f2 ∂KL %v, finite differences %v", dKL2, (fp-fm)/(2*h))
	}
	// The objectives are the relaxed bounds: f ≥ the risk.
	if f < 0.1 || f2 < 0.1 {
		t.Error("objective below the risk")
	}
	for _, bad := range [][3]float64{{0, 0.05, 1}, {10, 0, 1}, {10, 1, 1}, {10, 0.05, 0}} {
		if _, err := newObjectiveTerms(F1, int(bad[0]), bad[1], bad[2]); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	if _, err := newObjectiveTerms(Objective(9), 10, 0.05, 1); err == nil {
		t.Error("unknown objective accepted")
	}
}

func TestBoundedCE(t *testing.T) {
	// Logits with a known softmax: p = (0.5, 0.25, 0.25).
	z := []float64{math.Log(2), 0, 0, math.Log(2), 0, 0}
	loss, errs, err := boundedCE(append([]float64(nil), z...), []int{0, 1}, 3, 1e-4)
	if err != nil {
		t.Fatal(err)
	}
	want := (math.Log(0.5) + math.Log(0.25)) / math.Log(1e-4) / 2
	if math.Abs(loss-want) > 1e-15 || errs != 1 {
		t.Errorf("loss %v errors %d, want %v and 1", loss, errs, want)
	}
	// A clipped example has loss 1 and no gradient.
	g := []float64{0, 50, 0}
	loss, _, _ = boundedCE(g, []int{0}, 3, 1e-4)
	if loss != 1 || g[0] != 0 || g[1] != 0 {
		t.Errorf("clipped: loss %v gradient %v", loss, g)
	}
	if _, _, err := boundedCE([]float64{math.NaN(), 0, 0}, []int{0}, 3, 1e-4); err == nil {
		t.Error("NaN logits accepted")
	}
}

// The ERM loss through dropout: gradient vs finite differences with the
// dropout mask held fixed (the same stream for every evaluation).
func TestERMGradientWithDropout(t *testing.T) {
	a := tinyArch
	c := tinyData(a, 5, 4)
	_, q := tinyPosterior(t, a, 3) // biases away from 0: no ReLU kink at 0
	n := newNet(a, newWorker(a, false).net.bl)
	loss := func(w []float64, grad []float64) float64 {
		logits := n.forward(w, c.X, c.M(), 0.3, rand.New(rand.NewPCG(9, 9)))
		l, _, err := crossEntropy(logits, c.Y, a.Classes)
		if err != nil {
			t.Fatal(err)
		}
		if grad != nil {
			n.backward(w, c.X, logits, grad)
		}
		return l
	}
	w := append([]float64(nil), q.Mu...)
	grad := make([]float64, len(w))
	loss(w, grad)
	const h = 1e-6
	for j := range w {
		w0 := w[j]
		w[j] = w0 + h
		lp := loss(w, nil)
		w[j] = w0 - h
		lm := loss(w, nil)
		w[j] = w0
		if fd := (lp - lm) / (2 * h); math.Abs(fd-grad[j]) > 1e-6+1e-4*math.Abs(fd) {
			t.Errorf("∂L/∂w[%d] = %v, finite differences %v", j, grad[j], fd)
		}
	}
}

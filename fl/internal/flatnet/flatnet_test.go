package flatnet

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pacpfl/pacpfl/lml"
)

func tiny(t *testing.T) (*Net, []float64, []float64, []float64) {
	t.Helper()
	n, err := New(lml.BNN{Arch: lml.ArchMLP, InC: 1, InH: 2, InW: 3, Hidden: 4, Classes: 3})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	theta := make([]float64, n.NumWeights())
	for i := range theta {
		theta[i] = r.NormFloat64()
	}
	x, y := make([]float64, 5*6), make([]float64, 5)
	for i := range x {
		x[i] = r.Float64()
	}
	for i := range y {
		y[i] = float64(i % 3)
	}
	return n, theta, x, y
}

// The gradient of the mean cross-entropy against central differences.
func TestLossGradFiniteDifferences(t *testing.T) {
	n, theta, x, y := tiny(t)
	if n.NumWeights() != 6*4+4+4*3+3 {
		t.Fatalf("%d weights", n.NumWeights())
	}
	g := make([]float64, n.NumWeights())
	loss, err := n.LossGrad(theta, x, y, g)
	if err != nil {
		t.Fatal(err)
	}
	probs := make([]float64, 5*3)
	if err := n.Probs(theta, x, 1, probs); err != nil {
		t.Fatal(err)
	}
	want := 0.0
	for i := range y {
		want -= math.Log(probs[i*3+int(y[i])]) / 5
	}
	if math.Abs(loss-want) > 1e-12 {
		t.Errorf("loss %v, −mean ln p from Probs %v", loss, want)
	}
	scratch := make([]float64, len(g))
	for j := range theta {
		v := theta[j]
		theta[j] = v + 1e-6
		fp, _ := n.LossGrad(theta, x, y, scratch)
		theta[j] = v - 1e-6
		fm, _ := n.LossGrad(theta, x, y, scratch)
		theta[j] = v
		if fd := (fp - fm) / 2e-6; math.Abs(fd-g[j]) > 1e-7*math.Max(1, math.Abs(fd)) {
			t.Errorf("∂/∂θ[%d] = %v, finite differences %v", j, g[j], fd)
		}
	}
	if n := testing.AllocsPerRun(10, func() { _, _ = n.LossGrad(theta, x, y, g) }); n != 0 {
		t.Errorf("LossGrad allocates %v times", n)
	}
	if _, err := n.LossGrad(theta, x, []float64{0, 1, 2, 3, 0}, g); err == nil {
		t.Error("label 3 of 3 classes accepted")
	}
	if _, err := n.LossGrad(theta[1:], x, y, g); err == nil {
		t.Error("short θ accepted")
	}
}

func TestInitUniform(t *testing.T) {
	m := lml.BNN{Arch: lml.ArchMLP}
	theta := make([]float64, m.NumWeights())
	if err := InitUniform(m, theta, rand.New(rand.NewPCG(1, 1))); err != nil {
		t.Fatal(err)
	}
	for i, v := range theta {
		lim := 1 / math.Sqrt(784)
		if i >= 784*100+100 {
			lim = 1 / math.Sqrt(100)
		}
		if math.Abs(v) > lim {
			t.Fatalf("θ[%d] = %v outside ±%v", i, v, lim)
		}
	}
}

// The BCNN (--arch bcnn) through the same flat vector: gradient entries of
// every block against central differences.
func TestBCNNLossGrad(t *testing.T) {
	m := lml.BNN{Arch: lml.ArchBCNN, InC: 1, InH: 12, InW: 12, Kernel: 3, Conv1: 2, Conv2: 3, Hidden: 4, Classes: 3}
	n, err := New(m)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	theta := make([]float64, n.NumWeights())
	if err := InitUniform(m, theta, r); err != nil {
		t.Fatal(err)
	}
	x, y := make([]float64, 4*144), []float64{0, 1, 2, 1}
	for i := range x {
		x[i] = r.Float64()
	}
	g, scratch := make([]float64, len(theta)), make([]float64, len(theta))
	if _, err := n.LossGrad(theta, x, y, g); err != nil {
		t.Fatal(err)
	}
	for _, b := range m.WeightLayout() {
		for _, j := range []int{b.Offset, b.Offset + b.Size()/2, b.Offset + b.Size() - 1} {
			v := theta[j]
			theta[j] = v + 1e-6
			fp, _ := n.LossGrad(theta, x, y, scratch)
			theta[j] = v - 1e-6
			fm, _ := n.LossGrad(theta, x, y, scratch)
			theta[j] = v
			if fd := (fp - fm) / 2e-6; math.Abs(fd-g[j]) > 1e-6*math.Max(1, math.Abs(fd)) {
				t.Errorf("%s: ∂/∂θ[%d] = %v, finite differences %v", b.Name, j, g[j], fd)
			}
		}
	}
}

package meanfield

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestLog1pPos(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	worst := 0.0
	for i := 0; i < 200000; i++ {
		x := math.Pow(10, -12+20*r.Float64())
		if i < 1000 {
			x = float64(i) * 1e-3
		}
		got, want := Log1pPos(x), math.Log1p(x)
		if rel := math.Abs(got-want) / math.Max(want, 1e-300); rel > worst {
			worst = rel
		}
	}
	if worst > 6e-16 { // 3 ulps
		t.Errorf("Log1pPos: worst relative error %g", worst)
	}
	if Log1pPos(0) != 0 {
		t.Error("Log1pPos(0) ≠ 0")
	}
}

// The ziggurat draws N(0, 1): moments, a Kolmogorov–Smirnov statistic and
// the frequency of the tail layer.
func TestNormals(t *testing.T) {
	n := NewNormals(rand.New(rand.NewPCG(2, 3)))
	const N = 400000
	xs := make([]float64, N)
	var m1, m2, m4 float64
	tail := 0
	for i := range xs {
		x := n.Norm()
		xs[i] = x
		m1 += x
		m2 += x * x
		m4 += x * x * x * x
		if math.Abs(x) > zigR {
			tail++
		}
	}
	m1, m2, m4 = m1/N, m2/N, m4/N
	if math.Abs(m1) > 5/math.Sqrt(N) || math.Abs(m2-1) > 5*math.Sqrt(2.0/N) || math.Abs(m4-3) > 5*math.Sqrt(96.0/N) {
		t.Errorf("moments %v %v %v, want 0, 1, 3", m1, m2, m4)
	}
	// P(|Z| > 3.4426) = 5.76e-4.
	if want := 5.76e-4 * N; math.Abs(float64(tail)-want) > 5*math.Sqrt(want) {
		t.Errorf("%d draws beyond ±r, want ≈ %.0f", tail, want)
	}
	slices.Sort(xs)
	d := 0.0
	for i, x := range xs {
		c := 0.5 * math.Erfc(-x/math.Sqrt2)
		d = math.Max(d, math.Max(math.Abs(c-float64(i)/N), math.Abs(c-float64(i+1)/N)))
	}
	// The 0.001 critical value of the KS statistic is 1.95/√N.
	if d > 1.95/math.Sqrt(N) {
		t.Errorf("Kolmogorov–Smirnov distance %v above %v", d, 1.95/math.Sqrt(N))
	}
}

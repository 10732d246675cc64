package cholesky

import (
	"math"
	"math/rand/v2"
	"testing"
)

// A panel width from SetPanel is used by new Factors and by Native, gives a
// factor equal to the default's within rounding, and bad widths are refused.
func TestSetPanel(t *testing.T) {
	defer SetPanel(0)
	const n = 300
	rng := rand.New(rand.NewPCG(3, 4))
	a := make([]float64, n*n)
	for i := range n {
		for j := 0; j <= i; j++ {
			v := rng.Float64() - 0.5
			a[i*n+j], a[j*n+i] = v, v
		}
		a[i*n+i] += n
	}
	factor := func() []float64 {
		var f Factor
		if err := f.Factorize(a, n, n); err != nil {
			t.Fatal(err)
		}
		l, ld := f.L()
		out := make([]float64, n*n)
		for i := range n {
			copy(out[i*n:i*n+i+1], l[i*ld:i*ld+i+1])
		}
		return out
	}
	want := factor()
	changed := false
	for _, nb := range []int{16, 48, 100} {
		if err := SetPanel(nb); err != nil {
			t.Fatal(err)
		}
		if Panel() != nb {
			t.Fatalf("Panel() = %d after SetPanel(%d)", Panel(), nb)
		}
		got := factor()
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-12*(1+math.Abs(want[i])) {
				t.Fatalf("panel %d: L[%d] = %v, default %v", nb, i, got[i], want[i])
			}
			changed = changed || got[i] != want[i]
		}
	}
	if !changed {
		t.Error("no panel width changed a bit of L: SetPanel is not used")
	}
	for _, bad := range []int{-1, maxPanel + 1} {
		if SetPanel(bad) == nil {
			t.Errorf("SetPanel(%d) accepted", bad)
		}
	}
	SetPanel(0)
	if Panel() != defaultParams.right {
		t.Errorf("SetPanel(0): panel %d", Panel())
	}
}

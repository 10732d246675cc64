package data

import (
	"math"
	"runtime"
	"slices"
	"testing"
)

func smallPoly(seed uint64) PolynomialConfig {
	c := DefaultPolynomial()
	c.Existing, c.New, c.Test, c.Extra = 8, 4, 50, 3
	c.Seed = seed
	return c
}

func TestPolynomialShapesAndStandardisation(t *testing.T) {
	ds, err := Polynomial(smallPoly(1))
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Existing) != 8 || len(ds.New) != 4 || ds.D != 1 {
		t.Fatalf("got %d existing, %d new, D=%d", len(ds.Existing), len(ds.New), ds.D)
	}
	var sx, sy, sxx, syy float64
	cnt := 0
	modes := [2]int{}
	for _, c := range ds.Existing {
		if len(c.X) != 10 || len(c.Y) != 10 || len(c.YExtra) != 3 || len(c.YTest) != 50 || len(c.XTest) != 50 {
			t.Fatalf("bad client sizes %d %d %d %d", len(c.X), len(c.Y), len(c.YExtra), len(c.YTest))
		}
		modes[c.Mode]++
		for j := range c.Y {
			sx += c.X[j]
			sy += c.Y[j]
			sxx += c.X[j] * c.X[j]
			syy += c.Y[j] * c.Y[j]
			cnt++
		}
	}
	if modes != [2]int{4, 4} {
		t.Fatalf("modes not balanced: %v", modes)
	}
	n := float64(cnt)
	if math.Abs(sx/n) > 1e-12 || math.Abs(sy/n) > 1e-12 || math.Abs(sxx/n-1) > 1e-12 || math.Abs(syy/n-1) > 1e-12 {
		t.Fatalf("pooled training data not standardised: mean %v %v, var %v %v", sx/n, sy/n, sxx/n, syy/n)
	}
	for _, c := range ds.New {
		if len(c.Y) != 10 || len(c.YExtra) != 0 {
			t.Fatalf("new client sizes %d %d", len(c.Y), len(c.YExtra))
		}
	}
	if ds.N2() != 8 || ds.MinM() != 10 {
		t.Fatalf("N2=%d MinM=%d", ds.N2(), ds.MinM())
	}
	// Raw x lies in [-1,1]: undo the standardisation.
	for _, c := range ds.Existing {
		for _, x := range c.XTest {
			raw := x*ds.XStd[0] + ds.XMean[0]
			if raw < -1 || raw > 1 {
				t.Fatalf("raw x %v outside [-1,1]", raw)
			}
		}
	}
}

func TestPolynomialDeterministic(t *testing.T) {
	prev := runtime.GOMAXPROCS(1)
	a, err := Polynomial(smallPoly(7))
	runtime.GOMAXPROCS(2)
	b, err2 := Polynomial(smallPoly(7))
	runtime.GOMAXPROCS(prev)
	if err != nil || err2 != nil {
		t.Fatal(err, err2)
	}
	c, _ := Polynomial(smallPoly(8))
	for i := range a.Existing {
		if !slices.Equal(a.Existing[i].Y, b.Existing[i].Y) || !slices.Equal(a.Existing[i].XTest, b.Existing[i].XTest) {
			t.Fatalf("client %d differs between identical seeds", i)
		}
	}
	if slices.Equal(a.Existing[0].Y, c.Existing[0].Y) {
		t.Fatal("different seeds gave identical data")
	}
}

// The noise level: with ℓ = 0.6 the function barely changes between two
// nearly equal inputs, so the difference of their targets is dominated by the
// noise (std 0.1·√2). Checked on raw (unstandardised) data.
func TestPolynomialNoiseAndSmoothness(t *testing.T) {
	cfg := smallPoly(3)
	cfg.Standardise = false
	cfg.Existing, cfg.Test = 2, 300
	ds, err := Polynomial(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := ds.Existing[1] // mode 1: ℓ = 0.6
	type pt struct{ x, y float64 }
	pts := make([]pt, len(c.XTest))
	for i := range pts {
		pts[i] = pt{c.XTest[i], c.YTest[i]}
	}
	slices.SortFunc(pts, func(a, b pt) int {
		if a.x < b.x {
			return -1
		}
		return 1
	})
	var s2 float64
	k := 0
	for i := 1; i < len(pts); i++ {
		if pts[i].x-pts[i-1].x < 2e-3 {
			d := pts[i].y - pts[i-1].y
			s2 += d * d
			k++
		}
	}
	est := math.Sqrt(s2 / float64(k) / 2)
	if k < 40 || est < 0.07 || est > 0.14 {
		t.Fatalf("noise std estimate %v from %d pairs, want ≈ 0.1", est, k)
	}
}

func TestPolynomialBadConfig(t *testing.T) {
	for _, mod := range []func(*PolynomialConfig){
		func(c *PolynomialConfig) { c.Existing = 0 },
		func(c *PolynomialConfig) { c.Train = 0 },
		func(c *PolynomialConfig) { c.Test = 0 },
		func(c *PolynomialConfig) { c.Noise = math.NaN() },
		func(c *PolynomialConfig) { c.LengthScales[1] = 0 },
		func(c *PolynomialConfig) { c.Extra = -1 },
	} {
		c := DefaultPolynomial()
		mod(&c)
		if _, err := Polynomial(c); err == nil {
			t.Errorf("config %+v accepted", c)
		}
	}
}

func TestMemoryBytesOfConfigs(t *testing.T) {
	c := DefaultPolynomial()
	c.Existing, c.New, c.Extra = 2, 1, 0
	want := 16 * float64(2*(c.Train+c.Test)+max(c.NewTrain, c.Train)+c.Test)
	if got := c.MemoryBytes(); got != want {
		t.Fatalf("polynomial: %v bytes, want %v", got, want)
	}
	if got := (PVConfig{Existing: 1, New: 1}).MemoryBytes(); got != 2*8*16*1500 {
		t.Fatalf("pv: %v bytes", got)
	}
}

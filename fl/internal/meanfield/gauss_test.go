package meanfield

import (
	"math"
	"math/rand/v2"
	"testing"
)

// KL against a quadrature of ∫ q ln(q/w) for one weight, and additivity
// over weights.
func TestKLQuadrature(t *testing.T) {
	cases := [][4]float64{{0.3, -1, -0.2, 0.5}, {0, -2.5, 0, -2.5}, {1.5, 0.2, -0.7, -1.3}, {-0.4, -3, 0.1, -2}}
	total := 0.0
	var mq, rq, mw, rw []float64
	for _, c := range cases {
		sq, _ := Softplus(c[1])
		sw, _ := Softplus(c[3])
		// Simpson on μ_q ± 12 σ_q.
		const n = 20000
		lo, hi := c[0]-12*sq, c[0]+12*sq
		h := (hi - lo) / n
		sum := 0.0
		for i := 0; i <= n; i++ {
			x := lo + float64(i)*h
			lq := -0.5*math.Pow((x-c[0])/sq, 2) - math.Log(sq*math.Sqrt(2*math.Pi))
			lw := -0.5*math.Pow((x-c[2])/sw, 2) - math.Log(sw*math.Sqrt(2*math.Pi))
			f := math.Exp(lq) * (lq - lw)
			wgt := 2.0
			if i == 0 || i == n {
				wgt = 1
			} else if i%2 == 1 {
				wgt = 4
			}
			sum += wgt * f
		}
		want := sum * h / 3
		got := KL([]float64{c[0]}, []float64{c[1]}, []float64{c[2]}, []float64{c[3]})
		if math.Abs(got-want) > 1e-9*math.Max(1, want) {
			t.Errorf("KL%v = %v, quadrature %v", c, got, want)
		}
		total += got
		mq, rq, mw, rw = append(mq, c[0]), append(rq, c[1]), append(mw, c[2]), append(rw, c[3])
	}
	if got := KL(mq, rq, mw, rw); math.Abs(got-total) > 1e-12*total {
		t.Errorf("KL over %d weights %v, sum of the single ones %v", len(mq), got, total)
	}
	if got := KL([]float64{0.2}, []float64{-1}, []float64{0.2}, []float64{-1}); got != 0 {
		t.Errorf("KL(q‖q) = %v", got)
	}
}

// The four gradients of KL(q‖w) against central finite differences.
func TestKLGradFiniteDifferences(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 5))
	const n = 7
	v := make([][]float64, 4) // μ_q, ρ_q, μ_w, ρ_w
	for i := range v {
		v[i] = make([]float64, n)
		for j := range v[i] {
			v[i][j] = r.NormFloat64()
			if i%2 == 1 {
				v[i][j] = -2.5 + r.NormFloat64()
			}
		}
	}
	g := make([][]float64, 4)
	for i := range g {
		g[i] = make([]float64, n)
		g[i][0] = 1 // KLGrad adds
	}
	const scale = 2.5
	KLGrad(v[0], v[1], v[2], v[3], scale, g[0], g[1], g[2], g[3])
	names := []string{"μ_q", "ρ_q", "μ_w", "ρ_w"}
	for i := range v {
		for j := range n {
			x := v[i][j]
			h := 1e-5 * math.Max(1, math.Abs(x))
			v[i][j] = x + h
			fp := KL(v[0], v[1], v[2], v[3])
			v[i][j] = x - h
			fm := KL(v[0], v[1], v[2], v[3])
			v[i][j] = x
			want := scale * (fp - fm) / (2 * h)
			if j == 0 {
				want++
			}
			if math.Abs(g[i][j]-want) > 1e-6*math.Max(1, math.Abs(want)) {
				t.Errorf("∂KL/∂%s[%d] = %v, finite differences %v", names[i], j, g[i][j], want)
			}
		}
	}
	// A nil destination is skipped.
	KLGrad(v[0], v[1], v[2], v[3], 1, nil, g[1], nil, nil)
}

func TestSoftplusVec(t *testing.T) {
	rho := []float64{-800, -40, -2.5, -1e-9, 0, 1e-9, 0.3, 5, 29.9, 30, 30.1, 35.9, 36, 36.1, 700}
	for i := range 1100 {
		rho = append(rho, -8+16*float64(i)/1100)
	}
	sigma, dsig := make([]float64, len(rho)), make([]float64, len(rho))
	SoftplusVec(sigma, dsig, rho, make([]float64, SoftplusBlock))
	for j, u := range rho {
		s, d := Softplus(u)
		if math.Abs(sigma[j]-s) > 1e-15*s || math.Abs(dsig[j]-d) > 1e-15*d {
			t.Errorf("ρ = %v: softplus %v sigmoid %v, want %v %v", u, sigma[j], dsig[j], s, d)
		}
		if r := InvSoftplus(s); u > -30 && u < 600 && math.Abs(r-u) > 1e-9*math.Max(1, math.Abs(u)) {
			t.Errorf("InvSoftplus(softplus(%v)) = %v", u, r)
		}
	}
	buf := make([]float64, SoftplusBlock)
	if n := testing.AllocsPerRun(10, func() { SoftplusVec(sigma, dsig, rho, buf) }); n != 0 {
		t.Errorf("SoftplusVec allocates %v times", n)
	}
}

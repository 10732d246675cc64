package svgd

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/stat/distuv"
)

func randMatrix(rng *rand.Rand, k, d int, scale float64) []float64 {
	x := make([]float64, k*d)
	for i := range x {
		x[i] = scale * rng.NormFloat64()
	}
	return x
}

func TestMedianMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= 60; n++ {
		for trial := 0; trial < 20; trial++ {
			x := make([]float64, n)
			for i := range x {
				switch trial % 3 {
				case 0:
					x[i] = rng.NormFloat64()
				case 1:
					x[i] = float64(rng.IntN(4)) // many duplicates
				default:
					x[i] = float64(n - i) // descending
				}
			}
			s := slices.Clone(x)
			slices.Sort(s)
			want := s[n/2]
			if n%2 == 0 {
				want = 0.5 * (s[n/2-1] + s[n/2])
			}
			got := median(slices.Clone(x))
			require.Equal(t, want, got, "n=%d trial=%d x=%v", n, trial, x)
			for j := 0; j < n; j++ {
				y := slices.Clone(x)
				if got := selectKth(y, j); got != s[j] {
					t.Fatalf("select %d of %v = %v, want %v", j, x, got, s[j])
				}
				for i := range y {
					if (i < j && y[i] > y[j]) || (i > j && y[i] < y[j]) {
						t.Fatalf("select %d of %v: not partitioned: %v", j, x, y)
					}
				}
			}
		}
	}
}

func TestBandwidth(t *testing.T) {
	// Three particles on a line at 0, 1, 3: squared distances 1, 9, 4 (twice
	// each) and three zeros: sorted 0 0 0 1 1 4 4 9 9, median 1.
	s, err := New(3, 1)
	require.NoError(t, err)
	phi := []float64{0, 1, 3}
	squaredDistances(s.sqdist, phi, 3, 1)
	assert.Equal(t, []float64{0, 1, 9, 1, 0, 4, 9, 4, 0}, s.sqdist)
	assert.InDelta(t, 1/math.Log(4), Bandwidth(s.sqdist, 3, s.scratch), 1e-15)

	// Two particles: entries 0 0 d d, median (0+d)/2, h = d/2/ln 3.
	d2 := []float64{0, 8, 8, 0}
	assert.InDelta(t, 4/math.Log(3), Bandwidth(d2, 2, make([]float64, 4)), 1e-14)

	// Coinciding particles and k = 1 fall back to h = 1.
	assert.Equal(t, 1.0, Bandwidth([]float64{0, 0, 0, 0}, 2, make([]float64, 4)))
	assert.Equal(t, 1.0, Bandwidth([]float64{0}, 1, make([]float64, 1)))
	assert.Equal(t, 1.0, Bandwidth([]float64{0, 1e-13, 1e-13, 0}, 2, make([]float64, 4)))
}

// naiveDirection is eq. (39) written term by term.
func naiveDirection(phi, scores []float64, k, d int, h float64) []float64 {
	out := make([]float64, k*d)
	for kap := 0; kap < k; kap++ {
		for l := 0; l < k; l++ {
			var sq float64
			for i := 0; i < d; i++ {
				t := phi[l*d+i] - phi[kap*d+i]
				sq += t * t
			}
			kv := math.Exp(-sq / h)
			for i := 0; i < d; i++ {
				grad := -2 / h * (phi[l*d+i] - phi[kap*d+i]) * kv // ∇_{φ_l} k(φ_l, φ_κ)
				out[kap*d+i] += (kv*scores[l*d+i] + grad) / float64(k)
			}
		}
	}
	return out
}

func naiveBandwidth(phi []float64, k, d int) float64 {
	var all []float64
	for a := 0; a < k; a++ {
		for b := 0; b < k; b++ {
			var sq float64
			for i := 0; i < d; i++ {
				t := phi[a*d+i] - phi[b*d+i]
				sq += t * t
			}
			all = append(all, sq)
		}
	}
	slices.Sort(all)
	n := len(all)
	med := all[n/2]
	if n%2 == 0 {
		med = 0.5 * (all[n/2-1] + all[n/2])
	}
	if med < 1e-12 {
		return 1
	}
	return med / math.Log(float64(k)+1)
}

func TestDirectionMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, kd := range [][2]int{{1, 1}, {1, 7}, {2, 1}, {2, 3}, {3, 5}, {4, 17}, {7, 2}, {10, 33}, {50, 2}} {
		k, d := kd[0], kd[1]
		s, err := New(k, d)
		require.NoError(t, err)
		phi := randMatrix(rng, k, d, 1.5)
		sc := randMatrix(rng, k, d, 2)
		dst := make([]float64, k*d)
		require.NoError(t, s.Direction(dst, phi, sc))
		h := naiveBandwidth(phi, k, d)
		assert.InEpsilon(t, h, s.Bandwidth(), 1e-13, "k=%d d=%d", k, d)
		want := naiveDirection(phi, sc, k, d, h)
		for i := range want {
			require.InDelta(t, want[i], dst[i], 1e-12*(1+math.Abs(want[i])), "k=%d d=%d i=%d", k, d, i)
		}
		// Kernel is symmetric with unit diagonal.
		K := s.Kernel()
		for a := 0; a < k; a++ {
			assert.Equal(t, 1.0, K[a*k+a])
			for b := 0; b < k; b++ {
				assert.Equal(t, K[a*k+b], K[b*k+a])
			}
		}
	}
}

func TestFixedBandwidth(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	k, d := 5, 4
	s, _ := New(k, d)
	s.FixedBandwidth = 0.7
	phi := randMatrix(rng, k, d, 1)
	sc := randMatrix(rng, k, d, 1)
	dst := make([]float64, k*d)
	require.NoError(t, s.Direction(dst, phi, sc))
	assert.Equal(t, 0.7, s.Bandwidth())
	want := naiveDirection(phi, sc, k, d, 0.7)
	for i := range want {
		require.InDelta(t, want[i], dst[i], 1e-12*(1+math.Abs(want[i])))
	}
}

func TestSingleParticleIsGradientAscent(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	d := 13
	s, _ := New(1, d)
	phi := randMatrix(rng, 1, d, 1)
	sc := randMatrix(rng, 1, d, 1)
	want := slices.Clone(phi)
	eta := 0.037
	for i := range want {
		want[i] += eta * sc[i]
	}
	dir := make([]float64, d)
	require.NoError(t, s.Direction(dir, phi, sc))
	assert.Equal(t, sc, dir, "k=1 direction must equal the score exactly")
	require.NoError(t, s.Step(phi, sc, &Ascent{LR: eta}))
	assert.Equal(t, want, phi, "k=1 SVGD step must equal one gradient-ascent step exactly")
}

func TestDirectionErrors(t *testing.T) {
	s, _ := New(2, 3)
	good := make([]float64, 6)
	assert.ErrorContains(t, s.Direction(good, make([]float64, 5), good), "want k×d")
	bad := slices.Clone(good)
	bad[4] = math.NaN()
	assert.ErrorContains(t, s.Direction(make([]float64, 6), bad, good), "particles[1,1]")
	assert.ErrorContains(t, s.Direction(make([]float64, 6), good, bad), "scores[1,1]")
	assert.ErrorContains(t, s.Direction(make([]float64, 5), good, good), "direction buffer")
	assert.ErrorContains(t, s.Step(good, good, nil), "optimiser")
	_, err := New(0, 3)
	assert.Error(t, err)
}

func TestGaussianPrior(t *testing.T) {
	mean := []float64{0.5, -1, 0, 2}
	std := []float64{0.5, 1, 2, 0.1}
	g, err := NewGaussian(mean, std)
	require.NoError(t, err)
	phi := []float64{0.1, 0.2, -3, 2.05}
	var want float64
	for i := range phi {
		want += distuv.Normal{Mu: mean[i], Sigma: std[i]}.LogProb(phi[i])
	}
	assert.InDelta(t, want, g.LogDensity(phi), 1e-12)

	// Gradient against central differences.
	grad := make([]float64, 4)
	g.AddGrad(grad, phi)
	for i := range phi {
		const e = 1e-6
		p, m := slices.Clone(phi), slices.Clone(phi)
		p[i] += e
		m[i] -= e
		fd := (g.LogDensity(p) - g.LogDensity(m)) / (2 * e)
		assert.InDelta(t, fd, grad[i], 1e-6*(1+math.Abs(fd)))
	}

	// Rows version adds, per row.
	rows := append(slices.Clone(phi), mean...)
	dst := []float64{1, 1, 1, 1, 0, 0, 0, 0}
	require.NoError(t, g.AddGradRows(dst, rows))
	for i := range grad {
		assert.InDelta(t, 1+grad[i], dst[i], 1e-15)
		assert.Equal(t, 0.0, dst[4+i]) // at the mean the gradient is zero
	}
	assert.Error(t, g.AddGradRows(dst[:7], rows[:7]))

	// Sampling: moments match.
	rng := rand.New(rand.NewPCG(9, 10))
	const n = 20000
	buf := make([]float64, n*4)
	require.NoError(t, g.SampleRows(buf, rng))
	for i := range mean {
		var s, s2 float64
		for r := 0; r < n; r++ {
			v := buf[r*4+i]
			s += v
			s2 += v * v
		}
		mu := s / n
		sd := math.Sqrt(s2/n - mu*mu)
		assert.InDelta(t, mean[i], mu, 4*std[i]/math.Sqrt(n), "mean %d", i)
		assert.InDelta(t, std[i], sd, 0.03*std[i], "std %d", i)
	}
	// Same seed, same draws.
	a, b := make([]float64, 8), make([]float64, 8)
	require.NoError(t, g.SampleRows(a, rand.New(rand.NewPCG(1, 1))))
	require.NoError(t, g.SampleRows(b, rand.New(rand.NewPCG(1, 1))))
	assert.Equal(t, a, b)

	iso, err := Isotropic([]float64{1, 2}, 0.5)
	require.NoError(t, err)
	assert.Equal(t, []float64{0.5, 0.5}, iso.Std)

	_, err = NewGaussian([]float64{0}, []float64{0})
	assert.ErrorContains(t, err, "std[0]")
	_, err = NewGaussian([]float64{math.NaN()}, []float64{1})
	assert.ErrorContains(t, err, "mean[0]")
	_, err = NewGaussian([]float64{0, 1}, []float64{1})
	assert.Error(t, err)
}

func TestAdamMatchesReference(t *testing.T) {
	x := []float64{1, -2, 0.5}
	a := NewAdam(0)
	assert.Equal(t, DefaultAdamLR, a.LR)
	// Reference: the textbook recursion on the loss gradient g = −dir,
	// descending.
	ref := slices.Clone(x)
	m := make([]float64, 3)
	v := make([]float64, 3)
	dirs := [][]float64{{1, 2, -3}, {0.5, -1, 0}, {4, 4, 4}, {-1e-3, 1e3, 7}}
	for step, dir := range dirs {
		require.NoError(t, a.Ascend(x, dir))
		tt := float64(step + 1)
		for i := range ref {
			g := -dir[i]
			m[i] = 0.9*m[i] + 0.1*g
			v[i] = 0.999*v[i] + 0.001*g*g
			mh := m[i] / (1 - math.Pow(0.9, tt))
			vh := v[i] / (1 - math.Pow(0.999, tt))
			ref[i] -= 1e-3 * mh / (math.Sqrt(vh) + 1e-8)
		}
		for i := range ref {
			assert.InDelta(t, ref[i], x[i], 1e-14)
		}
	}
	assert.Equal(t, 4, a.Steps())
	assert.Error(t, a.Ascend(x[:2], dirs[0][:2]))
	assert.Error(t, a.Ascend(x, dirs[0][:2]))
	a.Reset()
	assert.Equal(t, 0, a.Steps())
	// First Adam step moves every coordinate by ≈ LR in the direction's sign.
	before := slices.Clone(x)
	require.NoError(t, a.Ascend(x, []float64{3, -0.01, 100}))
	assert.InDelta(t, 1e-3, x[0]-before[0], 1e-9)
	assert.InDelta(t, -1e-3, x[1]-before[1], 1e-9)
	assert.Error(t, (&Ascent{LR: 1}).Ascend(x, x[:1]))
}

// gaussianScore writes ∇ ln N(μ, Σ) at each row, with P = Σ⁻¹ given.
func gaussianScore(dst, phi []float64, mu [2]float64, P [2][2]float64) {
	for r := 0; r < len(phi); r += 2 {
		a, b := phi[r]-mu[0], phi[r+1]-mu[1]
		dst[r] = -(P[0][0]*a + P[0][1]*b)
		dst[r+1] = -(P[1][0]*a + P[1][1]*b)
	}
}

func TestConvergesOnGaussian(t *testing.T) {
	const k = 50
	mu := [2]float64{1, -2}
	// Σ = [[1, 0.5], [0.5, 2]], P = Σ⁻¹.
	S := [2][2]float64{{1, 0.5}, {0.5, 2}}
	det := S[0][0]*S[1][1] - S[0][1]*S[1][0]
	P := [2][2]float64{{S[1][1] / det, -S[0][1] / det}, {-S[1][0] / det, S[0][0] / det}}
	rng := rand.New(rand.NewPCG(11, 12))
	phi := randMatrix(rng, k, 2, 0.3) // start tightly clustered away from μ
	s, _ := New(k, 2)
	sc := make([]float64, k*2)
	opt := &Ascent{LR: 0.1}
	for it := 0; it < 3000; it++ {
		gaussianScore(sc, phi, mu, P)
		require.NoError(t, s.Step(phi, sc, opt))
	}
	var m0, m1 float64
	for r := 0; r < k; r++ {
		m0 += phi[2*r]
		m1 += phi[2*r+1]
	}
	m0 /= k
	m1 /= k
	var c00, c01, c11 float64
	for r := 0; r < k; r++ {
		a, b := phi[2*r]-m0, phi[2*r+1]-m1
		c00 += a * a
		c01 += a * b
		c11 += b * b
	}
	c00 /= k - 1
	c01 /= k - 1
	c11 /= k - 1
	t.Logf("mean (%.3f, %.3f) cov [[%.3f %.3f] [%.3f %.3f]]", m0, m1, c00, c01, c01, c11)
	assert.InDelta(t, mu[0], m0, 0.05)
	assert.InDelta(t, mu[1], m1, 0.05)
	assert.InDelta(t, S[0][0], c00, 0.2*S[0][0])
	assert.InDelta(t, S[1][1], c11, 0.2*S[1][1])
	assert.InDelta(t, S[0][1], c01, 0.15)
}

func TestBimodalTargetCoversBothModes(t *testing.T) {
	const k = 50
	// Equal mixture of N((±3, 0), 0.5² I).
	score := func(dst, phi []float64) {
		const v = 0.25
		for r := 0; r < len(phi); r += 2 {
			x, y := phi[r], phi[r+1]
			la := -((x-3)*(x-3) + y*y) / (2 * v)
			lb := -((x+3)*(x+3) + y*y) / (2 * v)
			mx := math.Max(la, lb)
			wa := math.Exp(la - mx)
			wb := math.Exp(lb - mx)
			wa, wb = wa/(wa+wb), wb/(wa+wb)
			dst[r] = -(wa*(x-3) + wb*(x+3)) / v
			dst[r+1] = -y / v
		}
	}
	rng := rand.New(rand.NewPCG(13, 14))
	phi := randMatrix(rng, k, 2, 2)
	s, _ := New(k, 2)
	sc := make([]float64, k*2)
	opt := NewAdam(0.05)
	for it := 0; it < 1500; it++ {
		score(sc, phi)
		require.NoError(t, s.Step(phi, sc, opt))
	}
	var left, right int
	for r := 0; r < k; r++ {
		x, y := phi[2*r], phi[2*r+1]
		if math.Abs(y) < 2 && math.Abs(x-3) < 2 {
			right++
		}
		if math.Abs(y) < 2 && math.Abs(x+3) < 2 {
			left++
		}
	}
	t.Logf("left %d right %d", left, right)
	assert.GreaterOrEqual(t, left, 10)
	assert.GreaterOrEqual(t, right, 10)
	assert.Equal(t, k, left+right, "every particle should sit at a mode")
}

func TestStepDoesNotAllocate(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	k, d := 8, 300
	s, _ := New(k, d)
	phi := randMatrix(rng, k, d, 1)
	sc := randMatrix(rng, k, d, 1)
	dir := make([]float64, k*d)
	g, _ := Isotropic(make([]float64, d), 0.5)
	adam := NewAdam(0)
	require.NoError(t, s.Step(phi, sc, adam)) // sizes Adam's buffers
	allocs := testing.AllocsPerRun(20, func() {
		_ = g.AddGradRows(sc, phi)
		_ = s.Direction(dir, phi, sc)
		_ = s.Step(phi, sc, adam)
	})
	assert.Equal(t, 0.0, allocs)
}

func BenchmarkStep(b *testing.B) {
	rng := rand.New(rand.NewPCG(17, 18))
	for _, kd := range [][2]int{{4, 1700}, {50, 1700}} {
		k, d := kd[0], kd[1]
		s, _ := New(k, d)
		phi := randMatrix(rng, k, d, 0.5)
		sc := randMatrix(rng, k, d, 1)
		adam := NewAdam(0)
		b.Run("k="+itoa(k)+"/d="+itoa(d), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				_ = s.Step(phi, sc, adam)
			}
		})
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

package fl

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/pacpfl/pacpfl/svgd"
)

// linClient returns G[κ,j] = w[j] + 0.5·φ[κ,j] and records its calls.
type linClient struct {
	w     []float64
	mu    sync.Mutex
	calls int
}

func (c *linClient) Update(p []float64, k, d, batch int, rng *rand.Rand, g []float64) (float64, error) {
	c.mu.Lock()
	c.calls++
	c.mu.Unlock()
	for r := 0; r < k; r++ {
		for j := 0; j < d; j++ {
			g[r*d+j] = c.w[j] + 0.5*p[r*d+j]
		}
	}
	return c.w[0], nil
}

// quadClient: ln Z(φ) = −½‖φ − μ‖² (+ optional noise in the gradient from rng).
type quadClient struct {
	mu    []float64
	noise float64
}

func (c *quadClient) Update(p []float64, k, d, batch int, rng *rand.Rand, g []float64) (float64, error) {
	lml := 0.0
	for r := 0; r < k; r++ {
		for j := 0; j < d; j++ {
			diff := p[r*d+j] - c.mu[j]
			lml -= 0.5 * diff * diff
			g[r*d+j] = -diff + c.noise*rng.NormFloat64()
		}
	}
	return lml / float64(k), nil
}

func isoPrior(t testing.TB, d int, std float64) *svgd.Gaussian {
	g, err := svgd.Isotropic(make([]float64, d), std)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// One round by hand: score (40) and SVGD step (39) with plain ascent, k = 2.
func TestServerOneRoundByHand(t *testing.T) {
	ws := [][]float64{{1, -2}, {0.5, 3}, {-1, 0.25}}
	for _, agg := range []Aggregation{AggregateSum, AggregateMean} {
		clients := make([]Client, len(ws))
		for i, w := range ws {
			clients[i] = &linClient{w: w}
		}
		sigma, tau, eta := 2.0, 0.3, 0.05
		cfg := Config{K: 2, Rounds: 1, ClientsPerRound: 3, LR: eta, Optimizer: "sgd", Tau: tau, Aggregation: agg,
			Seed: 11}
		s, err := NewServer(cfg, isoPrior(t, 2, sigma), clients)
		if err != nil {
			t.Fatal(err)
		}
		phi := slices.Clone(s.Particles())
		if _, err := s.Run(); err != nil {
			t.Fatal(err)
		}
		// Scores.
		f := tau * 3 / 3 // τ·(n/c)
		if agg == AggregateMean {
			f = tau / 3
		}
		var sc [2][2]float64
		for r := 0; r < 2; r++ {
			for j := 0; j < 2; j++ {
				sum := 0.0
				for _, w := range ws {
					sum += w[j] + 0.5*phi[r*2+j]
				}
				sc[r][j] = -phi[r*2+j]/(sigma*sigma) + f*sum
			}
		}
		// Kernel: D = [[0,d],[d,0]], median of {0,0,d,d} = d/2, h = (d/2)/ln 3.
		dx, dy := phi[0]-phi[2], phi[1]-phi[3]
		d2 := dx*dx + dy*dy
		h := d2 / 2 / math.Log(3)
		kx := math.Exp(-d2 / h)
		for r := 0; r < 2; r++ {
			l := 1 - r
			for j := 0; j < 2; j++ {
				delta := 0.5 * (sc[r][j] + kx*sc[l][j] + 2/h*kx*(phi[r*2+j]-phi[l*2+j]))
				want := phi[r*2+j] + eta*delta
				if got := s.Particles()[r*2+j]; math.Abs(got-want) > 1e-12 {
					t.Fatalf("agg %d: particle %d coord %d = %v, want %v", agg, r, j, got, want)
				}
			}
		}
	}
}

func TestServerSelectsCDistinctClients(t *testing.T) {
	n, c, T := 7, 3, 20
	lc := make([]*linClient, n)
	clients := make([]Client, n)
	for i := range clients {
		lc[i] = &linClient{w: []float64{0, 0}}
		clients[i] = lc[i]
	}
	s, err := NewServer(Config{K: 1, Rounds: T, ClientsPerRound: c, LR: 1e-3, Tau: 1, Seed: 1}, isoPrior(t, 2, 1),
		clients)
	if err != nil {
		t.Fatal(err)
	}
	prev := make([]int, n)
	cfgRound := 0
	s.cfg.Progress = func(e RoundEvent) {
		called := 0
		for i, cl := range lc {
			if d := cl.calls - prev[i]; d > 1 {
				t.Errorf("round %d: client %d called %d times", e.Round, i, d)
			} else {
				called += d
			}
			prev[i] = cl.calls
		}
		if called != c {
			t.Errorf("round %d: %d clients called, want %d", e.Round, called, c)
		}
		cfgRound = e.Round
	}
	if _, err := s.Run(); err != nil {
		t.Fatal(err)
	}
	if cfgRound != T {
		t.Fatalf("progress saw %d rounds", cfgRound)
	}
	for i, cl := range lc {
		if cl.calls == 0 {
			t.Errorf("client %d never selected in %d rounds", i, T)
		}
	}
}

func runQuad(t *testing.T, procs int, seed uint64, dp *DPConfig) *Result {
	prev := runtime.GOMAXPROCS(procs)
	defer runtime.GOMAXPROCS(prev)
	clients := make([]Client, 9)
	for i := range clients {
		clients[i] = &quadClient{mu: []float64{float64(i%3) - 1, 0.5, float64(i) / 9}, noise: 0.3}
	}
	s, err := NewServer(Config{K: 3, Rounds: 40, ClientsPerRound: 4, LR: 0.05, Tau: 0.5, Seed: seed, DP: dp},
		isoPrior(t, 3, 1), clients)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Run()
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestServerDeterministicAcrossGOMAXPROCS(t *testing.T) {
	// DP runs draw their noise from a seeded source here (the default is
	// a secret one, which is never reproducible).
	for _, dp := range []func() *DPConfig{func() *DPConfig { return nil },
		func() *DPConfig { return &DPConfig{Epsilon: 5, Clip: 1, Noise: rand.NewPCG(7, 7)} }} {
		a := runQuad(t, 1, 42, dp())
		b := runQuad(t, 2, 42, dp())
		if !slices.Equal(a.Particles, b.Particles) || !slices.Equal(a.MeanLML, b.MeanLML) {
			t.Fatalf("dp=%v: results differ between GOMAXPROCS 1 and 2", dp())
		}
		c := runQuad(t, 2, 43, dp())
		if slices.Equal(a.Particles, c.Particles) {
			t.Fatal("different seeds gave identical particles")
		}
	}
}

func TestServerImprovesLML(t *testing.T) {
	res := runQuad(t, 2, 1, nil)
	first := Mean(res.MeanLML[:5])
	last := Mean(res.MeanLML[len(res.MeanLML)-5:])
	if !(last > first+0.5) {
		t.Fatalf("mean LML %v → %v: no improvement", first, last)
	}
	if !math.IsInf(res.Privacy.Epsilon, 1) {
		t.Fatalf("non-DP run reports ε = %v", res.Privacy.Epsilon)
	}
}

func TestClipRows(t *testing.T) {
	g := []float64{3, 4, 0.3, 0.4, 0, 0}
	clipRows(g, 3, 2, 1)
	want := []float64{0.6, 0.8, 0.3, 0.4, 0, 0}
	for i := range g {
		if math.Abs(g[i]-want[i]) > 1e-15 {
			t.Fatalf("clipped %v, want %v", g, want)
		}
	}
	rng := rand.New(rand.NewPCG(1, 1))
	big := make([]float64, 5*7)
	for i := range big {
		big[i] = 100 * rng.NormFloat64()
	}
	clipRows(big, 5, 7, 2.5)
	for r := 0; r < 5; r++ {
		ss := 0.0
		for _, v := range big[r*7 : r*7+7] {
			ss += v * v
		}
		if math.Sqrt(ss) > 2.5*(1+1e-12) {
			t.Fatalf("row %d norm %v > γ", r, math.Sqrt(ss))
		}
	}
}

func TestLaplace(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	s := 0.7
	n := 200000
	var sumAbs, sum float64
	for i := 0; i < n; i++ {
		x := laplace(rng, s)
		sumAbs += math.Abs(x)
		sum += x
	}
	// E|X| = s, sd(|X|) = s: tolerance 5 s/√n.
	if m := sumAbs / float64(n); math.Abs(m-s) > 5*s/math.Sqrt(float64(n)) {
		t.Fatalf("mean |noise| = %v, want %v", m, s)
	}
	if m := sum / float64(n); math.Abs(m) > 5*s*math.Sqrt2/math.Sqrt(float64(n)) {
		t.Fatalf("mean noise = %v, want 0", m)
	}
}

// zeroClient returns zero gradients: under DP every particle move is noise.
type zeroClient struct{}

func (zeroClient) Update(p []float64, k, d, batch int, rng *rand.Rand, g []float64) (float64, error) {
	clear(g)
	return 0, nil
}

// With zero client gradients, a prior so wide its gradient vanishes, k = 1,
// plain ascent and the literal mean, φ_{t+1} − φ_t = η τ ν: the measured
// spread of ν must be the mechanism's noise scale (mean |ν| = b for Laplace
// noise of scale b, √(2/π)·σ for Gaussian noise of std σ).
func TestServerDPNoiseScale(t *testing.T) {
	clients := []Client{zeroClient{}, zeroClient{}, zeroClient{}, zeroClient{}}
	T, c, gamma, eps := 400, 2, 0.5, 8.0
	dim := 50
	eta, tau := 0.1, 0.5
	for _, dp := range []*DPConfig{
		{Epsilon: eps, Clip: gamma, Noise: rand.NewPCG(1, 5)},
		{Mechanism: DPGaussian, Epsilon: eps, Delta: 1e-5, Clip: gamma, Noise: rand.NewPCG(1, 6)},
		{Mechanism: DPPaper, Epsilon: eps, Clip: gamma, Noise: rand.NewPCG(1, 7)},
	} {
		s, err := NewServer(Config{K: 1, Rounds: T, ClientsPerRound: c, LR: eta, Optimizer: "sgd", Tau: tau,
			Aggregation: AggregateMean, Seed: 5, DP: dp}, isoPrior(t, dim, 1e12), clients)
		if err != nil {
			t.Fatal(err)
		}
		var sumAbs float64
		for r := 0; r < 40; r++ {
			before := slices.Clone(s.Particles())
			if err := s.updateRound(r, newStream()); err != nil {
				t.Fatal(err)
			}
			if _, err := s.finishRound(); err != nil {
				t.Fatal(err)
			}
			for i, v := range s.Particles() {
				sumAbs += math.Abs(v-before[i]) / (eta * tau)
			}
		}
		want := dp.NoiseScale(T, c)
		if dp.Mechanism == DPGaussian {
			want *= math.Sqrt(2 / math.Pi)
		}
		got := sumAbs / float64(40*dim)
		if math.Abs(got-want) > 0.1*want {
			t.Fatalf("%s: mean |noise| = %v, want %v", dp.mechanism(), got, want)
		}
	}
}

func TestServerBadConfig(t *testing.T) {
	clients := []Client{zeroClient{}, zeroClient{}}
	good := Config{K: 1, Rounds: 1, ClientsPerRound: 2, LR: 0.1, Tau: 1}
	for name, mod := range map[string]func(*Config){
		"k=0":       func(c *Config) { c.K = 0 },
		"c>n":       func(c *Config) { c.ClientsPerRound = 3 },
		"lr<0":      func(c *Config) { c.LR = -1 },
		"lr NaN":    func(c *Config) { c.LR = math.NaN() },
		"tau=0":     func(c *Config) { c.Tau = 0 },
		"optimiser": func(c *Config) { c.Optimizer = "lbfgs" },
		"batch<0":   func(c *Config) { c.Batch = -1 },
		"rounds<0":  func(c *Config) { c.Rounds = -1 },
		"dp eps":    func(c *Config) { c.DP = &DPConfig{Epsilon: 0, Clip: 1} },
		"dp clip":   func(c *Config) { c.DP = &DPConfig{Epsilon: 1, Clip: -1} },
	} {
		cfg := good
		mod(&cfg)
		if _, err := NewServer(cfg, isoPrior(t, 2, 1), clients); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := NewServer(good, isoPrior(t, 2, 1), clients); err != nil {
		t.Fatal(err)
	}
}

type nanClient struct{}

func (nanClient) Update(p []float64, k, d, batch int, rng *rand.Rand, g []float64) (float64, error) {
	for i := range g {
		g[i] = math.NaN()
	}
	return 0, nil
}

func TestServerRejectsNaNGradient(t *testing.T) {
	s, err := NewServer(Config{K: 1, Rounds: 2, ClientsPerRound: 1, LR: 0.1, Tau: 1}, isoPrior(t, 2, 1),
		[]Client{nanClient{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(); err == nil {
		t.Fatal("NaN gradient accepted")
	}
}

// A round does not allocate in steady state: the allocations of a run
// (set-up included) do not grow with the number of rounds.
func TestServerRoundDoesNotAllocate(t *testing.T) {
	if testing.Short() {
		t.Skip()
	}
	run := func(T int) func() {
		return func() {
			clients := make([]Client, 6)
			for i := range clients {
				clients[i] = &quadClient{mu: []float64{1, 2}, noise: 0.1}
			}
			s, err := NewServer(Config{K: 2, Rounds: T, ClientsPerRound: 3, LR: 0.01, Tau: 1}, isoPrior(t, 2, 1),
				clients)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Run(); err != nil {
				t.Fatal(err)
			}
		}
	}
	// One allocation per round would add 500; allow a few from the
	// scheduler (parking and waking the workers).
	a10 := testing.AllocsPerRun(3, run(10))
	a510 := testing.AllocsPerRun(3, run(510))
	if a510-a10 > 50 {
		t.Fatalf("allocations grow with rounds: %v (T=10) vs %v (T=510)", a10, a510)
	}
}

// RunContext ends between rounds once its context is done, the server's
// state that of the last completed round.
func TestServerRunContextCancels(t *testing.T) {
	clients := make([]Client, 4)
	for i := range clients {
		clients[i] = &quadClient{mu: []float64{1, 2}, noise: 0.1}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cfg := Config{K: 2, Rounds: 10, ClientsPerRound: 2, LR: 0.01, Tau: 1,
		Progress: func(e RoundEvent) {
			if e.Round == 3 {
				cancel()
			}
		}}
	s, err := NewServer(cfg, isoPrior(t, 2, 1), clients)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.RunContext(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	st, err := s.State()
	if err != nil {
		t.Fatal(err)
	}
	if st.Round != 3 {
		t.Fatalf("state at round %d, want 3", st.Round)
	}
}

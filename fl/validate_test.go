package fl

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pacpfl/pacpfl/svgd"
)

// badClient answers like quadClient but, from call from on, returns the
// mean ln Z^C lml (if set) or multiplies its gradient by scale (if set) or
// overwrites entry 1 by entry (if set).
type badClient struct {
	quadClient
	from  int64
	calls atomic.Int64
	lml   *float64
	scale float64
	entry *float64
}

func (c *badClient) Update(p []float64, k, d, b int, rng *rand.Rand, g []float64) (float64, error) {
	lml, err := c.quadClient.Update(p, k, d, b, rng, g)
	if c.calls.Add(1) <= c.from {
		return lml, err
	}
	if c.lml != nil {
		lml = *c.lml
	}
	if c.scale != 0 {
		for i := range g {
			g[i] *= c.scale
		}
	}
	if c.entry != nil {
		g[1] = *c.entry
	}
	return lml, err
}

func fp(v float64) *float64 { return &v }

func honest() []Client {
	return []Client{&quadClient{mu: []float64{1, 0.5, -0.5}}, &quadClient{mu: []float64{0.8, 0.7, -0.2}}}
}

// Issue 33 (4) and (6): without a quorum, an update with a non-finite mean
// ln Z^C, a gradient whose squared norm overflows (entries 1e300: Adam's v
// would be +Inf everywhere) or an update above MaxUpdateNorm (enforced with
// a single client per round) ends the run with an error naming the round,
// the client and the value; the server's state is that of the last round
// completed.
func TestUpdateValidationWithoutQuorum(t *testing.T) {
	for name, c := range map[string]struct {
		bad  *badClient
		cfg  func(*Config)
		want []string
	}{
		"LML NaN":  {&badClient{lml: fp(math.NaN())}, nil, []string{"non-finite mean ln Z^C (NaN)"}},
		"LML +Inf": {&badClient{lml: fp(math.Inf(1))}, nil, []string{"non-finite mean ln Z^C (+Inf)"}},
		"entries 1e300": {&badClient{entry: fp(1e300)}, nil,
			[]string{"squared L2 norm overflows", "largest entry 1e+300 at particle 0, coordinate 1"}},
		"norm ×1e150": {&badClient{scale: 1e150}, func(c *Config) { c.MaxUpdateNorm = 1e3 },
			[]string{"above the bound 1000 (MaxUpdateNorm)", "gradient norm "}},
		"gradient -Inf": {&badClient{entry: fp(math.Inf(-1))}, nil,
			[]string{"non-finite gradient (-Inf at particle 0, coordinate 1)"}},
		"bound, 1/round": {&badClient{scale: 1e150}, func(c *Config) { c.MaxUpdateNorm = 1e3; c.ClientsPerRound = 1 },
			[]string{"(MaxUpdateNorm)"}},
	} {
		// Rounds 1 and 2 are good; with 3 clients per round all are selected.
		c.bad.mu, c.bad.from = []float64{1, 1, 1}, 2
		cfg := Config{K: 2, Rounds: 5, ClientsPerRound: 3, LR: 0.05, Tau: 0.5, Seed: 3}
		if c.cfg != nil {
			c.cfg(&cfg)
		}
		clients := append(honest(), c.bad)
		if cfg.ClientsPerRound == 1 {
			clients = []Client{c.bad}
		}
		var before *State
		cfg.AfterRound = func(s *Server, round int) (err error) {
			before, err = s.State()
			return err
		}
		s, err := NewServer(cfg, isoPrior(t, 3, 1), clients)
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Run()
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		for _, w := range append(c.want,
			"round 3: client "+map[bool]string{true: "0", false: "2"}[cfg.ClientsPerRound == 1]) {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", name, err, w)
			}
		}
		after, _ := s.State()
		bitsEqual(t, name+" particles", after.Particles, before.Particles)
		bitsEqual(t, name+" Adam v", after.Adam.V, before.Adam.V)
		bitsEqual(t, name+" Adam m", after.Adam.M, before.Adam.M)
	}
}

// With a quorum the same updates are dropped (OnDrop, every round) and the
// run equals, to the bit, one without that client; the particles keep
// moving and Adam's moments stay finite.
func TestUpdateValidationWithQuorum(t *testing.T) {
	base := Config{K: 2, Rounds: 6, LR: 0.05, Tau: 0.5, Seed: 3, Aggregation: AggregateMean}
	ref := base
	ref.ClientsPerRound = 2
	want, err := runServer(t, ref, honest())
	if err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string]*badClient{
		"LML -Inf":      {lml: fp(math.Inf(-1))},
		"entries 1e300": {entry: fp(-1e300)},
		"norm ×1e150":   {scale: 1e150},
	} {
		bad.mu = []float64{1, 1, 1}
		cfg := base
		cfg.ClientsPerRound, cfg.Quorum, cfg.MaxUpdateNorm = 3, 2, 1e6
		drops := 0
		cfg.OnDrop = func(round, client int, err error) {
			drops++
			if client != 2 || round != drops {
				t.Errorf("%s: dropped client %d in round %d (drop %d)", name, client, round, drops)
			}
		}
		s, err := NewServer(cfg, isoPrior(t, 3, 1), append(honest(), bad))
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Run()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if drops != base.Rounds {
			t.Errorf("%s: %d drops in %d rounds", name, drops, base.Rounds)
		}
		bitsEqual(t, name+" particles", got.Particles, want.Particles)
		bitsEqual(t, name+" LML", got.MeanLML, want.MeanLML)
		st, _ := s.State()
		for _, v := range append(st.Adam.M, st.Adam.V...) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("%s: Adam moment %v", name, v)
			}
		}
	}
}

// Issue 33 (5): the relative filter compares an update with the median of
// the OTHER accepted updates. Two colluding ×1e150 updates among four: the
// median of all four norms lies between the honest and the attackers'
// norms, so F = 2 could never reject them; against the others' median each
// is rejected, and the run equals the honest-only one.
func TestNormFilterUsesTheOthersMedian(t *testing.T) {
	base := Config{K: 2, Rounds: 5, LR: 0.05, Tau: 0.5, Seed: 8, Aggregation: AggregateMean}
	ref := base
	ref.ClientsPerRound = 2
	want, err := runServer(t, ref, honest())
	if err != nil {
		t.Fatal(err)
	}
	cfg := base
	cfg.ClientsPerRound, cfg.Quorum, cfg.MaxNormFactor = 4, 2, 2
	drops := map[int]int{}
	var reason string
	cfg.OnDrop = func(round, client int, err error) { drops[client]++; reason = err.Error() }
	clients := append(honest(), &badClient{quadClient: quadClient{mu: []float64{1, 1, 1}}, scale: 1e150},
		&badClient{quadClient: quadClient{mu: []float64{1, 1, 1}}, scale: 1e150})
	got, err := runServer(t, cfg, clients)
	if err != nil {
		t.Fatal(err)
	}
	if drops[2] != base.Rounds || drops[3] != base.Rounds || len(drops) != 2 {
		t.Fatalf("drops %v in %d rounds", drops, base.Rounds)
	}
	if !strings.Contains(reason, "× the median") || !strings.Contains(reason, "of the round's 3 other updates") {
		t.Errorf("reason %q", reason)
	}
	bitsEqual(t, "particles", got.Particles, want.Particles)
}

// Two clients per round, one of them returning ×1e150 gradients: the
// relative filter has a single other update and does not judge (documented),
// so the absolute bound is what rejects the attacker, every round; the run
// equals the honest client's alone. Without the bound the attacker gets in.
func TestNormBoundWithTwoClientsPerRound(t *testing.T) {
	h := &quadClient{mu: []float64{1, 0.5, -0.5}}
	base := Config{K: 2, Rounds: 6, LR: 0.05, Tau: 0.5, Seed: 5, Aggregation: AggregateMean}
	ref := base
	ref.ClientsPerRound = 1
	want, err := runServer(t, ref, []Client{h})
	if err != nil {
		t.Fatal(err)
	}
	att := &badClient{quadClient: quadClient{mu: []float64{1, 1, 1}}, scale: 1e150}
	for _, bound := range []float64{0, 100} {
		cfg := base
		cfg.ClientsPerRound, cfg.Quorum, cfg.MaxNormFactor, cfg.MaxUpdateNorm = 2, 1, 2, bound
		drops := 0
		cfg.OnDrop = func(round, client int, err error) {
			if client != 1 || !strings.Contains(err.Error(), "MaxUpdateNorm") {
				t.Errorf("round %d: client %d dropped: %v", round, client, err)
			}
			drops++
		}
		got, err := runServer(t, cfg, []Client{h, att})
		if err != nil {
			t.Fatal(err)
		}
		if bound == 0 {
			if drops != 0 {
				t.Errorf("the relative filter judged with one other update: %d drops", drops)
			}
			continue
		}
		if drops != base.Rounds {
			t.Errorf("attacker dropped in %d of %d rounds", drops, base.Rounds)
		}
		bitsEqual(t, "particles", got.Particles, want.Particles)
	}
}

// medianWithout against a plain reference: sort the others.
func TestMedianWithout(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	for n := 2; n <= 9; n++ {
		for range 50 {
			x := make([]float64, n)
			for i := range x {
				x[i] = float64(rng.IntN(4)) // ties
			}
			sorted := slices.Sorted(slices.Values(x))
			for i := range x {
				others := append(slices.Clone(x[:i]), x[i+1:]...)
				slices.Sort(others)
				h := len(others) / 2
				want := others[h]
				if len(others)%2 == 0 {
					want = 0.5 * (others[h-1] + others[h])
				}
				if got := medianWithout(sorted, x[i]); got != want {
					t.Fatalf("%v without [%d]: %v, want %v", x, i, got, want)
				}
			}
		}
	}
}

// infPrior is a hyper-prior whose gradient turns +Inf from call from on.
type infPrior struct {
	HyperPrior
	from, calls int
}

func (p *infPrior) AddGrad(dst, phi []float64) {
	p.HyperPrior.AddGrad(dst, phi)
	if p.calls++; p.calls > p.from {
		dst[0] = math.Inf(1)
	}
}

// Issue 33 (3): a score that is not finite or whose square overflows fails
// the round before the SVGD step: particles and Adam's state are those of
// the last completed round. A validated update cannot make the score
// overflow at a sane τ, so τ = 1e10 with a ×1e150 update (square
// overflows) and a hyper-prior whose gradient turns +Inf (not finite).
func TestScoreCheckKeepsOptimiserState(t *testing.T) {
	for _, c := range []struct {
		tau, scale float64
		prior      HyperPrior
		want       string
	}{
		{1e10, 1e150, isoPrior(t, 3, 1), "e+159 has a square that overflows"},
		{0.5, 1, &infPrior{HyperPrior: isoPrior(t, 3, 1), from: 4}, "= +Inf is not finite"},
	} {
		bad := &badClient{quadClient: quadClient{mu: []float64{1, 2, 3}}, scale: c.scale, from: 2}
		cfg := Config{K: 2, Rounds: 5, ClientsPerRound: 1, LR: 0.05, Tau: c.tau, Seed: 1, Aggregation: AggregateMean}
		var before *State
		cfg.AfterRound = func(s *Server, round int) (err error) {
			before, err = s.State()
			return err
		}
		s, err := NewServer(cfg, c.prior, []Client{bad})
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Run()
		if err == nil || !strings.Contains(err.Error(), c.want) ||
			!strings.Contains(err.Error(), "round 3: score of particle 0, coordinate 0") {
			t.Fatalf("%s: err = %v", c.want, err)
		}
		after, _ := s.State()
		bitsEqual(t, "particles", after.Particles, before.Particles)
		bitsEqual(t, "Adam m", after.Adam.M, before.Adam.M)
		bitsEqual(t, "Adam v", after.Adam.V, before.Adam.V)
		if after.Adam.T != 2 || after.Round != 2 {
			t.Fatalf("state after the failed round: step %d, round %d", after.Adam.T, after.Round)
		}
		if err := svgd.CheckAdamState(*after.Adam); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMaxUpdateNormValidation(t *testing.T) {
	for _, v := range []float64{-1, math.NaN(), math.Inf(1)} {
		cfg := Config{K: 1, Rounds: 1, LR: 1, Tau: 1, MaxUpdateNorm: v}
		if _, err := NewServer(cfg, isoPrior(t, 3, 1), []Client{zeroClient{}}); err == nil ||
			!strings.Contains(err.Error(), "update norm bound") {
			t.Errorf("MaxUpdateNorm %v: err = %v", v, err)
		}
	}
}

package fl

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
)

// Reference implementations, written plainly and independently of
// robust.go: sort.Float64s per coordinate, Krum scores by enumerating every
// neighbour set.

func refMedian(ups [][]float64) []float64 {
	out := make([]float64, len(ups[0]))
	for j := range out {
		var col []float64
		for _, g := range ups {
			col = append(col, g[j])
		}
		sort.Float64s(col)
		n := len(col)
		if n%2 == 1 {
			out[j] = col[n/2]
		} else {
			out[j] = (col[n/2-1] + col[n/2]) / 2
		}
	}
	return out
}

func refTrimmed(ups [][]float64, t int) []float64 {
	out := make([]float64, len(ups[0]))
	for j := range out {
		var col []float64
		for _, g := range ups {
			col = append(col, g[j])
		}
		sort.Float64s(col)
		sum := 0.0
		for _, v := range col[t : len(col)-t] {
			sum += v
		}
		out[j] = sum / float64(len(col)-2*t)
	}
	return out
}

// refKrumScores: score(i) = min over all sets N of u−f−2 others of
// Σ_{j∈N} ‖G_i − G_j‖², by enumerating the subsets.
func refKrumScores(ups [][]float64, f int) []float64 {
	u := len(ups)
	d2 := func(a, b []float64) float64 {
		s := 0.0
		for x := range a {
			s += (a[x] - b[x]) * (a[x] - b[x])
		}
		return s
	}
	scores := make([]float64, u)
	for i := range ups {
		best := math.Inf(1)
		for mask := 0; mask < 1<<u; mask++ {
			if mask&(1<<i) != 0 || popcount(mask) != u-f-2 {
				continue
			}
			s := 0.0
			for j := range ups {
				if mask&(1<<j) != 0 {
					s += d2(ups[i], ups[j])
				}
			}
			best = math.Min(best, s)
		}
		scores[i] = best
	}
	return scores
}

func popcount(x int) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

// refKrumPick: the m lowest scores, ties to the lower index, ascending.
func refKrumPick(scores []float64, m int) []int {
	idx := make([]int, len(scores))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return scores[idx[a]] < scores[idx[b]] })
	pick := slices.Clone(idx[:m])
	sort.Ints(pick)
	return pick
}

// randomUpdates draws u updates of length n: Gaussian, small integers
// (many ties, ±0 among them) or a wide spread of magnitudes up to 1e150.
func randomUpdates(rng *rand.Rand, u, n, kind int) [][]float64 {
	ups := make([][]float64, u)
	for i := range ups {
		ups[i] = make([]float64, n)
		for j := range ups[i] {
			switch kind {
			case 0:
				ups[i][j] = rng.NormFloat64()
			case 1:
				v := float64(rng.IntN(5) - 2)
				if v == 0 && rng.IntN(2) == 0 {
					v = math.Copysign(0, -1)
				}
				ups[i][j] = v
			default:
				ups[i][j] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(150)))
			}
		}
	}
	return ups
}

func TestRobustRulesMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 1))
	for _, kd := range [][2]int{{1, 1}, {1, 3}, {3, 5}, {2, 7}, {5, 3}} {
		n := kd[0] * kd[1]
		for u := 1; u <= 9; u++ {
			for kind := 0; kind < 3; kind++ {
				for trial := 0; trial < 4; trial++ {
					ups := randomUpdates(rng, u, n, kind)
					orig := make([][]float64, u)
					for i := range ups {
						orig[i] = slices.Clone(ups[i])
					}
					what := fmt.Sprintf("%d×%d, u = %d, kind %d", kd[0], kd[1], u, kind)
					col := make([]float64, u)
					got := make([]float64, n)
					coordMedian(got, ups, col)
					if want := refMedian(orig); !slices.Equal(got, want) {
						t.Fatalf("median %s: %v, want %v", what, got, want)
					}
					for tr := 0; 2*tr < u; tr++ {
						coordTrimmedMean(got, ups, tr, col)
						if want := refTrimmed(orig, tr); !slices.Equal(got, want) {
							t.Fatalf("trimmed t = %d %s: %v, want %v", tr, what, got, want)
						}
					}
					for f := 1; 2*f+3 <= u; f++ {
						ref := refKrumScores(orig, f)
						for m := 1; m <= u-f; m++ {
							dist, score, order := make([]float64, u*u), make([]float64, u), make([]int, u)
							pick := krumSelect(nil, ups, f, m, dist, score, order, col)
							want := refKrumPick(ref, m)
							if kind == 1 {
								// Integer data: the sums are exact, ties included.
								if !slices.Equal(score, ref) || !slices.Equal(pick, want) {
									t.Fatalf("krum f = %d m = %d %s: scores %v picks %v, want %v %v", f, m, what, score,
										pick, ref, want)
								}
								continue
							}
							for i := range ref {
								if math.Abs(score[i]-ref[i]) > 1e-12*ref[i] {
									t.Fatalf("krum f = %d %s: score[%d] = %v, want %v", f, what, i, score[i], ref[i])
								}
							}
							if !slices.Equal(pick, want) {
								t.Fatalf("krum f = %d m = %d %s: picks %v, want %v (scores %v)", f, m, what, pick, want,
									ref)
							}
						}
					}
					for i := range ups {
						if !slices.Equal(ups[i], orig[i]) {
							t.Fatalf("%s: update %d modified", what, i)
						}
					}
				}
			}
		}
	}
}

// The round's aggregate through robustWork.aggregate: Krum is the picked
// update itself, multi-Krum the mean of the picks in slot order; the ln Z^C
// follows the same rule.
func TestRobustAggregateAndLML(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 2))
	u, n := 7, 6
	ups := randomUpdates(rng, u, n, 0)
	lmls := []float64{-3, -1, 1e300, -2, -2.5, -1.5, -4}
	for _, r := range []Robust{
		{Rule: RobustMedian}, {Rule: RobustTrimmedMean, Trim: 0.3},
		{Rule: RobustKrum, Byzantine: 2}, {Rule: RobustMultiKrum, Byzantine: 1},
		{Rule: RobustMultiKrum, Byzantine: 1, Select: 3},
	} {
		w := newRobustWork(u, true)
		w.ups = append(w.ups[:0], ups...)
		w.lmls = append(w.lmls[:0], lmls...)
		dst := make([]float64, n)
		lml, err := w.aggregate(dst, r)
		if err != nil {
			t.Fatal(err)
		}
		var want []float64
		var wantLML float64
		switch r.Rule {
		case RobustMedian:
			want, wantLML = refMedian(ups), -2
		case RobustTrimmedMean:
			want, wantLML = refTrimmed(ups, 2), -2 // t = ⌊0.3·7⌋ = 2: mean of -2.5, -2, -1.5
		default:
			m := r.Select
			if r.Rule == RobustKrum {
				m = 1
			} else if m == 0 {
				m = u - r.Byzantine
			}
			pick := refKrumPick(refKrumScores(ups, r.Byzantine), m)
			want = make([]float64, n)
			for _, i := range pick {
				for j := range want {
					want[j] += ups[i][j]
				}
				wantLML += lmls[i]
			}
			for j := range want {
				want[j] *= 1 / float64(m)
			}
			wantLML /= float64(m)
		}
		if !slices.Equal(dst, want) {
			t.Errorf("%+v: %v, want %v", r, dst, want)
		}
		if math.Abs(lml-wantLML) > 1e-12*math.Abs(wantLML) {
			t.Errorf("%+v: ln Z^C %v, want %v", r, lml, wantLML)
		}
	}
	// meanOf does not overflow on finite values.
	if m := meanOf([]float64{1e308, 1e308, 1e308}); m != 1e308 {
		t.Errorf("meanOf = %v", m)
	}
	// Too few updates for Krum at run time (Validate prevents it): an error.
	w := newRobustWork(4, true)
	w.ups, w.lmls = append(w.ups, ups[:4]...), append(w.lmls, lmls[:4]...)
	if _, err := w.aggregate(make([]float64, n), Robust{Rule: RobustKrum, Byzantine: 1}); err == nil ||
		!strings.Contains(err.Error(), "needs at least 5 updates, 4 accepted") {
		t.Errorf("krum with 4 updates: %v", err)
	}
}

func TestRobustValidation(t *testing.T) {
	clients := make([]Client, 10)
	for i := range clients {
		clients[i] = zeroClient{}
	}
	base := Config{K: 1, Rounds: 1, ClientsPerRound: 7, LR: 0.1, Tau: 1}
	for name, c := range map[string]struct {
		mod  func(*Config)
		want string
	}{
		"unknown": {func(c *Config) { c.Robust.Rule = "geomedian" }, "unknown robust aggregation"},
		"trim on median": {func(c *Config) { c.Robust = Robust{Rule: RobustMedian, Trim: 0.2} },
			"only trimmed-mean trims"},
		"f on trimmed": {func(c *Config) { c.Robust = Robust{Rule: RobustTrimmedMean, Trim: 0.2, Byzantine: 1} },
			"only krum"},
		"select on krum": {func(c *Config) { c.Robust = Robust{Rule: RobustKrum, Byzantine: 1, Select: 2} },
			"only multi-krum"},
		"β = 0": {func(c *Config) { c.Robust = Robust{Rule: RobustTrimmedMean} },
			"β = 0 must be in (0, 1/2)"},
		"β = 1/2": {func(c *Config) { c.Robust = Robust{Rule: RobustTrimmedMean, Trim: 0.5} }, "(0, 1/2)"},
		"β NaN": {func(c *Config) { c.Robust = Robust{Rule: RobustTrimmedMean, Trim: math.NaN()} },
			"(0, 1/2)"},
		"β trims nothing": {func(c *Config) { c.Robust = Robust{Rule: RobustTrimmedMean, Trim: 0.1} },
			"trims nothing from 7 updates"},
		"β, quorum": {func(c *Config) { c.Robust = Robust{Rule: RobustTrimmedMean, Trim: 0.2}; c.Quorum = 4 },
			"trims nothing from 4 updates (quorum 4"},
		"median c = 2": {func(c *Config) { c.Robust = Robust{Rule: RobustMedian}; c.ClientsPerRound = 2 },
			"at least 3 updates per round, but 2 clients per round"},
		"median quorum 2": {func(c *Config) { c.Robust = Robust{Rule: RobustMedian}; c.Quorum = 2 }, "but quorum 2"},
		"krum f = 0":      {func(c *Config) { c.Robust = Robust{Rule: RobustKrum} }, "f ≥ 1"},
		"krum c = 4": {
			func(c *Config) { c.Robust = Robust{Rule: RobustKrum, Byzantine: 1}; c.ClientsPerRound = 4 },
			"2f + 3 = 5 updates per round, but 4 clients per round"},
		"krum f = 3": {func(c *Config) { c.Robust = Robust{Rule: RobustKrum, Byzantine: 3} }, "2f + 3 = 9"},
		"krum quorum 4": {func(c *Config) { c.Robust = Robust{Rule: RobustMultiKrum, Byzantine: 1}; c.Quorum = 4 },
			"but quorum 4"},
		"multi-krum m": {func(c *Config) { c.Robust = Robust{Rule: RobustMultiKrum, Byzantine: 2, Select: 6} },
			"need 0 ≤ m ≤ 5"},
		"multi-krum m < 0": {func(c *Config) { c.Robust = Robust{Rule: RobustMultiKrum, Byzantine: 2, Select: -1} },
			"need 0 ≤ m"},
		"DP + median": {func(c *Config) {
			c.Robust = Robust{Rule: RobustMedian}
			c.DP = &DPConfig{Epsilon: 1, Clip: 1}
		}, "with DP"},
		"krum default c": {func(c *Config) {
			c.Robust = Robust{Rule: RobustKrum, Byzantine: 4}
			c.ClientsPerRound = 0
		}, "but 10 clients per round"},
	} {
		cfg := base
		c.mod(&cfg)
		_, err := NewServer(cfg, isoPrior(t, 2, 1), clients)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", name, err, c.want)
		}
	}
	for _, r := range []Robust{{}, {Rule: RobustMean}, {Rule: RobustMedian}, {Rule: RobustTrimmedMean, Trim: 0.15},
		{Rule: RobustKrum, Byzantine: 2}, {Rule: RobustMultiKrum, Byzantine: 1, Select: 6},
		{Rule: RobustMultiKrum, Byzantine: 2}} {
		cfg := base
		cfg.Robust = r
		if _, err := NewServer(cfg, isoPrior(t, 2, 1), clients); err != nil {
			t.Errorf("%+v refused: %v", r, err)
		}
	}
	// DP with the mean stays allowed.
	cfg := base
	cfg.Robust.Rule, cfg.DP = RobustMean, &DPConfig{Epsilon: 1, Clip: 1}
	if _, err := NewServer(cfg, isoPrior(t, 2, 1), clients); err != nil {
		t.Error(err)
	}
}

// attacker returns its honest gradient ×1e150 (finite squares: validation
// lets it through, Adam's v would not recover).
func attackClients(nHonest int, withAttacker bool) []Client {
	var cl []Client
	for i := 0; i < nHonest; i++ {
		o := 0.1 * float64(i-(nHonest-1)/2)
		cl = append(cl, &quadClient{mu: []float64{1 + o, 0.5 - o, -0.5 + o}, noise: 0.05})
	}
	if withAttacker {
		cl = append(cl, &badClient{quadClient: quadClient{mu: []float64{1, 0.5, -0.5}}, scale: 1e150})
	}
	return cl
}

// Issue 33 integration: six honest clients and one attacker returning
// ×1e150 gradients every round. With every robust rule the particles end
// within tolerance of the honest-only run (mean); with the plain mean the
// run is wrecked; with the mean, a quorum and the norm filters the attacker
// is dropped every round and the run equals the honest-only one.
func TestRobustRulesWithstandAttacker(t *testing.T) {
	base := Config{K: 3, Rounds: 150, LR: 0.05, Tau: 0.5, Seed: 21, Aggregation: AggregateMean}
	ref := base
	ref.ClientsPerRound = 6
	want, err := runServer(t, ref, attackClients(6, false))
	if err != nil {
		t.Fatal(err)
	}
	dev := func(res *Result) float64 {
		m := 0.0
		for i := range res.Particles {
			m = math.Max(m, math.Abs(res.Particles[i]-want.Particles[i]))
		}
		return m
	}
	for _, r := range []Robust{{Rule: RobustMedian}, {Rule: RobustTrimmedMean, Trim: 0.2},
		{Rule: RobustKrum, Byzantine: 1}, {Rule: RobustMultiKrum, Byzantine: 1},
		{Rule: RobustMultiKrum, Byzantine: 2, Select: 2}} {
		cfg := base
		cfg.ClientsPerRound, cfg.Robust = 7, r
		got, err := runServer(t, cfg, attackClients(6, true))
		if err != nil {
			t.Fatalf("%+v: %v", r, err)
		}
		t.Logf("%+v: %.3g", r, dev(got))
		if d := dev(got); d > 0.15 {
			t.Errorf("%+v: particles %.3g from the honest-only run", r, d)
		}
		for _, v := range got.MeanLML {
			if math.Abs(v) > 1e6 {
				t.Fatalf("%+v: ln Z^C %v in the history", r, v)
			}
		}
	}
	// The mean without a filter: the attacker wrecks the run.
	cfg := base
	cfg.ClientsPerRound = 7
	frozen, err := runServer(t, cfg, attackClients(6, true))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("mean: %.3g", dev(frozen))
	if dev(frozen) < 0.5 {
		t.Errorf("the attack had no effect on the mean (%.3g)", dev(frozen))
	}
	// The mean with a quorum and the filters: dropped every round, same run.
	cfg.Quorum, cfg.MaxNormFactor, cfg.MaxUpdateNorm = 4, 3, 1e3
	drops := 0
	cfg.OnDrop = func(round, client int, err error) {
		if client != 6 {
			t.Errorf("round %d: client %d dropped: %v", round, client, err)
		}
		drops++
	}
	got, err := runServer(t, cfg, attackClients(6, true))
	if err != nil {
		t.Fatal(err)
	}
	if drops != base.Rounds {
		t.Errorf("attacker dropped in %d of %d rounds", drops, base.Rounds)
	}
	// The same sum in another slot order (7 of 7 clients drawn, not 6 of 6).
	if d := dev(got); d > 1e-12 {
		t.Errorf("mean + filters: particles %.3g from the honest-only run", d)
	}
}

// A NaN update never reaches a robust rule: with a quorum it is dropped,
// and the run equals one without that client (the literal mean, so that τ
// does not see n change; the rules do not depend on the slot order here).
func TestRobustRulesNeverSeeNaN(t *testing.T) {
	for _, r := range []Robust{{Rule: RobustMedian}, {Rule: RobustTrimmedMean, Trim: 0.2},
		{Rule: RobustKrum, Byzantine: 1}} {
		base := Config{K: 2, Rounds: 6, LR: 0.05, Tau: 0.5, Seed: 4, Robust: r, Aggregation: AggregateMean}
		ref := base
		ref.ClientsPerRound = 6
		want, err := runServer(t, ref, attackClients(6, false))
		if err != nil {
			t.Fatal(err)
		}
		cfg := base
		cfg.ClientsPerRound, cfg.Quorum = 7, 5
		drops := 0
		cfg.OnDrop = func(round, client int, err error) { drops++ }
		got, err := runServer(t, cfg, append(attackClients(6, false), nanGradClient{}))
		if err != nil {
			t.Fatal(err)
		}
		if drops != base.Rounds {
			t.Errorf("%s: %d drops", r.Rule, drops)
		}
		bitsEqual(t, string(r.Rule), got.Particles, want.Particles)
	}
}

// Robust runs are bit-identical whatever GOMAXPROCS and Workers.
func TestRobustDeterministic(t *testing.T) {
	for _, r := range []Robust{{Rule: RobustMedian}, {Rule: RobustTrimmedMean, Trim: 0.2},
		{Rule: RobustKrum, Byzantine: 1}, {Rule: RobustMultiKrum, Byzantine: 1}} {
		var first *Result
		for _, procs := range []int{1, 4} {
			for _, workers := range []int{0, 1, 3} {
				prev := runtime.GOMAXPROCS(procs)
				cfg := Config{K: 3, Rounds: 15, ClientsPerRound: 6, LR: 0.05, Tau: 0.5, Seed: 4, Robust: r,
					Workers: workers}
				res, err := runServer(t, cfg, attackClients(9, false))
				runtime.GOMAXPROCS(prev)
				if err != nil {
					t.Fatal(err)
				}
				if first == nil {
					first = res
					continue
				}
				bitsEqual(t, string(r.Rule)+" particles", res.Particles, first.Particles)
				bitsEqual(t, string(r.Rule)+" LML", res.MeanLML, first.MeanLML)
			}
		}
	}
}

// A round with a robust rule (and validation, bound and filter on) does not
// allocate.
func TestRobustRoundDoesNotAllocate(t *testing.T) {
	for _, r := range []Robust{{}, {Rule: RobustMedian}, {Rule: RobustTrimmedMean, Trim: 0.2},
		{Rule: RobustKrum, Byzantine: 1}, {Rule: RobustMultiKrum, Byzantine: 1}} {
		cfg := Config{K: 3, Rounds: 1000, ClientsPerRound: 6, LR: 0.01, Tau: 0.5, Seed: 2, Robust: r,
			Quorum: 5, MaxNormFactor: 10, MaxUpdateNorm: 1e6}
		s, err := NewServer(cfg, isoPrior(t, 3, 1), attackClients(8, false))
		if err != nil {
			t.Fatal(err)
		}
		round := 0
		st := newStream()
		step := func() {
			_ = s.updateRound(round, st) // rejected updates are the test's
			if _, err := s.finishRound(); err != nil {
				t.Fatal(err)
			}
			round++
		}
		step() // Adam's buffers
		if a := testing.AllocsPerRun(20, step); a != 0 {
			t.Errorf("%+v: %v allocations per round", r, a)
		}
	}
}

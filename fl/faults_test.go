package fl

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// errClient fails every update; nanGradClient returns a NaN.
type errClient struct{}

func (errClient) Update(p []float64, k, d, b int, rng *rand.Rand, g []float64) (float64, error) {
	return 0, errors.New("boom")
}

type nanGradClient struct{}

func (nanGradClient) Update(p []float64, k, d, b int, rng *rand.Rand, g []float64) (float64, error) {
	clear(g)
	g[1] = math.NaN()
	return 0, nil
}

func runServer(t *testing.T, cfg Config, clients []Client) (*Result, error) {
	t.Helper()
	s, err := NewServer(cfg, isoPrior(t, 3, 1), clients)
	if err != nil {
		t.Fatal(err)
	}
	return s.Run()
}

func bitsEqual(t *testing.T, what string, a, b []float64) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: lengths %d, %d", what, len(a), len(b))
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			t.Fatalf("%s[%d]: %v vs %v", what, i, a[i], b[i])
		}
	}
}

// With a quorum, a failed, non-finite or outsized update is dropped, logged
// and the round averages over the others: the same particles as a run
// without that client (mean aggregation, every client selected).
func TestQuorumDropsBadUpdates(t *testing.T) {
	a := &linClient{w: []float64{1, -2, 0.5}}
	b := &linClient{w: []float64{0.3, 0.1, -1}}
	base := Config{K: 2, Rounds: 5, LR: 0.05, Tau: 0.7, Seed: 9, Aggregation: AggregateMean, Optimizer: "sgd"}
	ref := base
	ref.ClientsPerRound = 2
	want, err := runServer(t, ref, []Client{a, b})
	if err != nil {
		t.Fatal(err)
	}
	huge := &linClient{w: []float64{1e6, 1e6, 1e6}}
	for name, bad := range map[string]Client{"error": errClient{}, "NaN": nanGradClient{}, "norm": huge} {
		cfg := base
		cfg.ClientsPerRound, cfg.Quorum = 3, 2
		if name == "norm" {
			cfg.MaxNormFactor = 10
		}
		var drops []string
		cfg.OnDrop = func(round, client int, err error) {
			if client != 2 {
				t.Errorf("%s: dropped client %d", name, client)
			}
			drops = append(drops, err.Error())
		}
		got, err := runServer(t, cfg, []Client{a, b, bad})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(drops) != base.Rounds {
			t.Errorf("%s: %d drops in %d rounds: %q", name, len(drops), base.Rounds, drops)
		}
		if name == "norm" && !strings.Contains(drops[0], "median") {
			t.Errorf("norm: drop reason %q", drops[0])
		}
		bitsEqual(t, name+" particles", got.Particles, want.Particles)
	}
	// Below the quorum: a clear error.
	cfg := base
	cfg.ClientsPerRound, cfg.Quorum = 3, 3
	if _, err := runServer(t, cfg, []Client{a, b, errClient{}}); err == nil ||
		!strings.Contains(err.Error(), "only 2 of the 3") {
		t.Errorf("below quorum: err = %v", err)
	}
	// Without a quorum a failure ends the run, as before.
	cfg.Quorum = 0
	if _, err := runServer(t, cfg, []Client{a, b, errClient{}}); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("no quorum: err = %v", err)
	}
	// With a quorum and everyone answering: bit-identical to no quorum.
	cfg.Quorum, cfg.MaxNormFactor = 2, 100
	c := &linClient{w: []float64{0.2, 0.2, 0.2}}
	q, err := runServer(t, cfg, []Client{a, b, c})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Quorum, cfg.MaxNormFactor = 0, 0
	nq, err := runServer(t, cfg, []Client{a, b, c})
	if err != nil {
		t.Fatal(err)
	}
	bitsEqual(t, "all answered", q.Particles, nq.Particles)
}

func TestQuorumValidation(t *testing.T) {
	for _, cfg := range []Config{
		{K: 1, Rounds: 1, LR: 1, Tau: 1, Quorum: -1},
		{K: 1, Rounds: 1, LR: 1, Tau: 1, MaxNormFactor: 3},
		{K: 1, Rounds: 1, LR: 1, Tau: 1, Quorum: 1, MaxNormFactor: math.NaN()},
		{K: 1, Rounds: 1, LR: 1, Tau: 1, ClientsPerRound: 1, Quorum: 2},
	} {
		if _, err := NewServer(cfg, isoPrior(t, 3, 1), []Client{errClient{}, errClient{}}); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
}

// A run stopped after round r and resumed from the state saved then ends
// bit-identical to an uninterrupted run: Adam's moments, the client streams
// (mini-batch noise) and the DP noise generator continue exactly.
func TestResumeBitIdentical(t *testing.T) {
	for _, opt := range []string{"adam", "sgd"} {
		for _, dp := range []bool{false, true} {
			clients := []Client{&quadClient{mu: []float64{1, 2, 3}, noise: 0.3},
				&quadClient{mu: []float64{-1, 0, 1}, noise: 0.3},
				&quadClient{mu: []float64{0, 0, 0}, noise: 0.3}, &quadClient{mu: []float64{2, 2, 2}, noise: 0.3}}
			mk := func() Config {
				c := Config{K: 3, Rounds: 8, ClientsPerRound: 2, LR: 0.05, Tau: 0.5, Seed: 4, Optimizer: opt}
				if dp {
					c.DP = &DPConfig{Epsilon: 50, Clip: 5, Noise: rand.NewPCG(7, 8)}
				}
				return c
			}
			want, err := runServer(t, mk(), clients)
			if err != nil {
				t.Fatal(err)
			}
			cfg := mk()
			var saved *State
			stop := errors.New("killed")
			cfg.AfterRound = func(s *Server, round int) error {
				if round == 3 {
					if saved, err = s.State(); err != nil {
						t.Fatal(err)
					}
				}
				if round == 5 { // dies after the checkpoint: rounds 4, 5 are lost
					return stop
				}
				return nil
			}
			if _, err := runServer(t, cfg, clients); !errors.Is(err, stop) {
				t.Fatalf("err = %v", err)
			}
			cfg = mk()
			cfg.Resume = saved
			got, err := runServer(t, cfg, clients)
			if err != nil {
				t.Fatal(err)
			}
			bitsEqual(t, opt+" particles", got.Particles, want.Particles)
			bitsEqual(t, opt+" LML history", got.MeanLML, want.MeanLML)
			// A state of another shape or optimiser is refused.
			bad := mk()
			bad.Resume = saved
			bad.K = 2
			if _, err := NewServer(bad, isoPrior(t, 3, 1), clients); err == nil {
				t.Error("state of k = 3 accepted for k = 2")
			}
			bad = mk()
			bad.Resume = saved
			bad.Optimizer = map[string]string{"adam": "sgd", "sgd": "adam"}[opt]
			if _, err := NewServer(bad, isoPrior(t, 3, 1), clients); err == nil {
				t.Error("state of another optimiser accepted")
			}
		}
	}
}

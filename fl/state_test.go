package fl

import (
	"math"
	"strings"
	"testing"
)

// Issue 33: a checkpoint whose optimiser state or LML history is poisoned
// is refused at resume, with the value and where it is.
func TestResumeRefusesPoisonedState(t *testing.T) {
	clients := []Client{&quadClient{mu: []float64{1, 2, 3}}, &quadClient{mu: []float64{-1, 0, 1}}}
	cfg := Config{K: 2, Rounds: 4, ClientsPerRound: 2, LR: 0.05, Tau: 0.5, Seed: 3}
	var saved *State
	cfg.AfterRound = func(s *Server, round int) error {
		if round == 2 {
			var err error
			saved, err = s.State()
			return err
		}
		return nil
	}
	if _, err := runServer(t, cfg, clients); err != nil {
		t.Fatal(err)
	}
	clone := func() *State {
		st := *saved
		st.Particles = append([]float64(nil), saved.Particles...)
		st.MeanLML = append([]float64(nil), saved.MeanLML...)
		a := *saved.Adam
		a.M, a.V = append([]float64(nil), a.M...), append([]float64(nil), a.V...)
		st.Adam = &a
		return &st
	}
	resume := func(st *State) error {
		c := cfg
		c.AfterRound, c.Resume = nil, st
		_, err := NewServer(c, isoPrior(t, 3, 1), clients)
		return err
	}
	if err := resume(clone()); err != nil {
		t.Fatalf("good state refused: %v", err)
	}
	for name, c := range map[string]struct {
		mod  func(*State)
		want string
	}{
		"v +Inf":     {func(s *State) { s.Adam.V[4] = math.Inf(1) }, "v[4] = +Inf"},
		"v NaN":      {func(s *State) { s.Adam.V[0] = math.NaN() }, "v[0] = NaN"},
		"v negative": {func(s *State) { s.Adam.V[5] = -1 }, "v[5] = -1"},
		"m +Inf":     {func(s *State) { s.Adam.M[1] = math.Inf(1) }, "m[1] = +Inf"},
		"m NaN":      {func(s *State) { s.Adam.M[2] = math.NaN() }, "m[2] = NaN"},
		"β2ᵗ = 1":    {func(s *State) { s.Adam.B2t = 1 }, "β2ᵗ = 1"},
		"LML NaN":    {func(s *State) { s.MeanLML[1] = math.NaN() }, "mean ln Z^C NaN in round 2"},
		"LML -Inf":   {func(s *State) { s.MeanLML[0] = math.Inf(-1) }, "mean ln Z^C -Inf in round 1"},
		"particle":   {func(s *State) { s.Particles[3] = math.Inf(1) }, "non-finite particles"},
	} {
		st := clone()
		c.mod(st)
		err := resume(st)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", name, err, c.want)
		}
	}
}

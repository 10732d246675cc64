package fl

import (
	"math/rand/v2"

	"github.com/pacpfl/pacpfl/data"
)

// smallPoly is a small Polynomial data set (8 existing clients with 3
// personalisation samples, 4 new, 50 test points) for fast tests.
func smallPoly(seed uint64) data.PolynomialConfig {
	c := data.DefaultPolynomial()
	c.Existing, c.New, c.Test, c.Extra = 8, 4, 50, 3
	c.Seed = seed
	return c
}

// updateRound runs round t's client updates on this goroutine in slot
// order, as the server's fedrun.Loop would on its workers (each on rng,
// reseeded to the client's stream), and leaves the server step
// (finishRound) to the test; it returns the first update's error.
func (s *Server) updateRound(t int, st *stream) error {
	chosen, err := s.loop.Select(t)
	if err != nil {
		return err
	}
	if len(s.errs) != len(chosen) {
		s.errs = make([]error, len(chosen))
	}
	s.round, s.chosen = t, chosen
	for slot, ci := range chosen {
		st.pcg.Seed(s.cfg.Seed, s.loop.Stream(t, ci))
		s.errs[slot] = s.runClient(slot, ci, t, st.rng)
	}
	for _, err := range s.errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// stream is a random stream reseeded for every client update of a test.
type stream struct {
	pcg *rand.PCG
	rng *rand.Rand
}

func newStream() *stream {
	pcg := rand.NewPCG(0, 0)
	return &stream{pcg: pcg, rng: rand.New(pcg)}
}

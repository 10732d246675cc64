package fl

import (
	"encoding"
	"errors"
	"fmt"
	"math"

	"github.com/pacpfl/pacpfl/svgd"
)

// State is the whole state of a Server between rounds: continuing from it
// (Config.Resume) gives the same particles, to the bit, as a run that was
// never interrupted.
type State struct {
	Round     int       // rounds completed
	K, Dim    int       // shape of Particles
	Particles []float64 // k×dφ
	MeanLML   []float64 // one per completed round
	Optimizer string    // "adam" or "sgd"
	Adam      *svgd.AdamState
	// Noise is the DP noise generator's state (MarshalBinary), if any. It
	// is as secret as the noise: whoever reads it can undo the noise of
	// the rounds that follow.
	Noise []byte
}

// State returns a copy of the server's state after the last completed
// round (call it from Config.AfterRound or after Run).
func (s *Server) State() (*State, error) {
	st := &State{Round: len(s.history), K: s.k, Dim: s.dim, Particles: append([]float64(nil), s.particles...),
		MeanLML: append([]float64(nil), s.history...), Optimizer: "sgd"}
	if a, ok := s.opt.(*svgd.Adam); ok {
		as := a.State()
		st.Optimizer, st.Adam = "adam", &as
	}
	if s.noiseSrc != nil {
		m, ok := s.noiseSrc.(encoding.BinaryMarshaler)
		if !ok {
			return nil, errors.New("server: the DP noise source cannot be saved")
		}
		b, err := m.MarshalBinary()
		if err != nil {
			return nil, fmt.Errorf("server: saving the DP noise source: %w", err)
		}
		st.Noise = b
	}
	return st, nil
}

// restore installs st (Config.Resume) after NewServer's initialisation. It
// refuses a state of another shape, optimiser or DP setting, non-finite
// particles or MeanLML entries, and Adam moments that are non-finite (m, v)
// or negative (v).
func (s *Server) restore(st *State) error {
	opt := "adam"
	if s.cfg.Optimizer == "sgd" {
		opt = "sgd"
	}
	switch {
	case st.K != s.k || st.Dim != s.dim || len(st.Particles) != s.k*s.dim:
		return fmt.Errorf("server: resume state has %d×%d particles, this run %d×%d", st.K, st.Dim, s.k, s.dim)
	case st.Round < 0 || st.Round > s.cfg.Rounds || len(st.MeanLML) != st.Round:
		return fmt.Errorf("server: resume state at round %d (with %d LMLs) for a run of %d rounds", st.Round,
			len(st.MeanLML), s.cfg.Rounds)
	case st.Optimizer != opt || (opt == "adam") != (st.Adam != nil):
		return fmt.Errorf("server: resume state of optimiser %q, this run uses %q", st.Optimizer, opt)
	case (s.noiseSrc != nil) != (st.Noise != nil):
		return errors.New("server: resume state and run disagree on DP noise")
	}
	for _, v := range st.Particles {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return errors.New("server: resume state has non-finite particles")
		}
	}
	for t, v := range st.MeanLML {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("server: resume state has a non-finite mean ln Z^C %v in round %d", v, t+1)
		}
	}
	if st.Adam != nil {
		if len(st.Adam.M) != 0 && len(st.Adam.M) != s.k*s.dim {
			return fmt.Errorf("server: resume state has %d Adam moments for %d parameters", len(st.Adam.M), s.k*s.dim)
		}
		// A non-finite or negative moment would stop (or wreck) every
		// coordinate it touches for the rest of the run (issue 33).
		if err := svgd.CheckAdamState(*st.Adam); err != nil {
			return fmt.Errorf("server: resume state refused: %w", err)
		}
		if err := s.opt.(*svgd.Adam).SetState(*st.Adam); err != nil {
			return err
		}
	}
	copy(s.particles, st.Particles)
	s.history = append(s.history[:0], st.MeanLML...)
	if st.Noise != nil {
		u, ok := s.noiseSrc.(encoding.BinaryUnmarshaler)
		if !ok {
			return errors.New("server: the DP noise source cannot be restored")
		}
		if err := u.UnmarshalBinary(st.Noise); err != nil {
			return fmt.Errorf("server: restoring the DP noise source: %w", err)
		}
	}
	return nil
}

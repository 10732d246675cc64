package fedvi

import (
	"fmt"
	"math"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/internal/fedround"
	"github.com/pacpfl/pacpfl/fl/internal/fedrun"
)

// server is one run's server loop, shared by Train and TrainFedAvg: the
// global vector and the momentum v it keeps between rounds, the rounds'
// evaluation window and the checkpoint.
type server struct {
	o           *Options
	clients     []fl.RoundClient // the participating ones
	weights     []float64        // n_k
	global, vel []float64
	tag         uint64
	step        func(round int, global, mean []float64)
	res         *Result
	eval        func(round int) (evaluation, error)
	first       int // the first round to run (a resumed run's rounds done)
}

// resume checks o.Checkpoint.Resume against the run and, if set, loads its
// θ, v and history.
func (s *server) resume() error {
	o := s.o
	if err := o.Checkpoint.Check(o.Rounds, len(s.global), len(s.vel)); err != nil {
		return fmt.Errorf("fedvi: %w", err)
	}
	r := o.Checkpoint.Resume
	if r == nil {
		return nil
	}
	if err := checkHistory(r, o.Rounds, o.EvalLast); err != nil {
		return fmt.Errorf("fedvi: %w", err)
	}
	copy(s.global, r.Global)
	copy(s.vel, r.Server)
	s.res.History, s.first = append([]fl.RoundEval(nil), r.History...), r.Round
	return nil
}

// checkHistory refuses a resumed history that is not the evaluations of
// the evaluated rounds (the last evalLast of rounds) up to r.Round, in
// order: one missing, repeated or from another run would end up in the
// Result.
func checkHistory(r *fl.RoundState, rounds, evalLast int) error {
	from := rounds - evalLast + 1 // the first evaluated round
	if evalLast == 0 {
		from = rounds + 1
	}
	want := max(0, r.Round-max(from, 1)+1)
	if len(r.History) != want {
		return fmt.Errorf("the checkpoint after round %d holds %d evaluations; a run of %d rounds evaluating "+
			"the last %d has %d", r.Round, len(r.History), rounds, evalLast, want)
	}
	for i, e := range r.History {
		if e.Round != r.Round-want+1+i {
			return fmt.Errorf("the checkpoint's evaluation %d is of round %d, want %d", i, e.Round,
				r.Round-want+1+i)
		}
	}
	return nil
}

// run runs the rounds after s.first, evaluating the last o.EvalLast of
// them, with o.Drops and o.Checkpoint.AfterRound (a run resumed after its
// last round evaluates that round again: EvalWindow.Finish).
func (s *server) run() error {
	o := s.o
	win := fedrun.EvalWindow{Rounds: o.Rounds, Last: o.EvalLast, Stop: o.Stop, Start: s.first,
		Eval: func(round int, _ bool) error { return s.res.add(s.eval(round)) }}
	if o.Progress != nil {
		win.Progress = func(t, rounds int) { o.Progress(fl.RoundEvent{Round: t, Rounds: rounds, Value: math.NaN()}) }
	}
	if f := o.Checkpoint.AfterRound; f != nil {
		win.After = func(round int) error {
			return f(&fl.RoundState{Round: round, Global: s.global, Server: s.vel, History: s.res.History})
		}
	}
	hooks := fedrun.Hooks{Server: s.step, AfterRound: win.AfterRound, Start: s.first,
		Quorum: o.Quorum, MaxNormFactor: o.MaxNormFactor, OnDrop: o.OnDrop}
	local := fedround.Local(s.clients, o.Seed, s.tag, nil)
	if err := fedrun.RunHooks(len(s.clients), o.ClientsPerRound, o.Rounds, s.weights, s.global, o.Seed, s.tag,
		local, hooks); err != nil {
		return err
	}
	if win.Last == 0 {
		return nil
	}
	return win.Finish()
}

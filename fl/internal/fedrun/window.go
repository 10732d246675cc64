package fedrun

import "time"

// EvalWindow scores a run after each of its last Last rounds, as the
// papers report "the best over rounds 700–800" and the final round, and
// keeps the time spent scoring apart from the training's.
type EvalWindow struct {
	Rounds, Last int
	// Eval scores the models after round (1-based; 0 for a run of no
	// rounds); final marks the run's last evaluation.
	Eval func(round int, final bool) error
	// Progress, if set, hears after every round.
	Progress func(round, rounds int)
	// Stop, if set, is asked after every round (after Progress); an error
	// it returns ends the run with that error (a caller's cancellation:
	// ctx.Err).
	Stop func() error
	// After, if set, is called after every round (1-based) once it is
	// scored and Stop has not ended the run: a checkpoint.
	After func(round int) error
	// Start is a resumed run's rounds done. A run resumed after its last
	// round scores that round again in Finish: the final-only figures
	// are not in a checkpoint (the method replaces its history's copy).
	Start   int
	Seconds float64 // time spent in Eval so far
}

// AfterRound is the Hooks.AfterRound of the window: it scores round t+1 if
// it lies in the window and reports progress.
func (w *EvalWindow) AfterRound(t int) error {
	if t+1 > w.Rounds-w.Last {
		if err := w.eval(t+1, t+1 == w.Rounds); err != nil {
			return err
		}
	}
	if w.Progress != nil {
		w.Progress(t+1, w.Rounds)
	}
	if w.Stop != nil {
		if err := w.Stop(); err != nil {
			return err
		}
	}
	if w.After != nil {
		return w.After(t + 1)
	}
	return nil
}

// Finish scores the initial models of a run of no rounds, and the last
// round of a run resumed after it (a run of some rounds was scored by
// AfterRound).
func (w *EvalWindow) Finish() error {
	switch {
	case w.Rounds == 0:
		return w.eval(0, true)
	case w.Last > 0 && w.Start == w.Rounds:
		return w.eval(w.Rounds, true)
	}
	return nil
}

func (w *EvalWindow) eval(round int, final bool) error {
	t0 := time.Now()
	err := w.Eval(round, final)
	w.Seconds += time.Since(t0).Seconds()
	return err
}

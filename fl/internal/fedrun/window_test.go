package fedrun

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

func TestEvalWindow(t *testing.T) {
	for _, c := range []struct {
		rounds, last int
		want         []string
	}{
		{5, 2, []string{"4", "5 final"}},
		{3, 10, []string{"1", "2", "3 final"}},
		{4, 1, []string{"4 final"}},
		{0, 3, []string{"0 final"}},
	} {
		var got []string
		var progress []int
		w := EvalWindow{Rounds: c.rounds, Last: c.last,
			Eval: func(round int, final bool) error {
				s := fmt.Sprint(round)
				if final {
					s += " final"
				}
				got = append(got, s)
				return nil
			},
			Progress: func(round, rounds int) {
				if rounds != c.rounds {
					t.Errorf("progress of %d rounds, want %d", rounds, c.rounds)
				}
				progress = append(progress, round)
			}}
		for r := range c.rounds {
			if err := w.AfterRound(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Finish(); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, c.want) || len(progress) != c.rounds ||
			(c.rounds > 0 && progress[c.rounds-1] != c.rounds) {
			t.Errorf("rounds %d, last %d: evaluated %q (want %q), progress %v", c.rounds, c.last, got, c.want, progress)
		}
		if w.Seconds < 0 {
			t.Errorf("negative evaluation time %v", w.Seconds)
		}
	}
	boom := errors.New("boom")
	w := EvalWindow{Rounds: 2, Last: 1, Eval: func(int, bool) error { return boom }}
	if err := w.AfterRound(0); err != nil {
		t.Fatalf("round 1 is outside the window, got %v", err)
	}
	if err := w.AfterRound(1); !errors.Is(err, boom) {
		t.Fatalf("the evaluation's error was lost: %v", err)
	}
}

// A run resumed after its last round scores that round again in Finish,
// as final; one resumed earlier, or without a window, does not.
func TestEvalWindowResumedAfterLastRound(t *testing.T) {
	for _, c := range []struct {
		start, last int
		want        []int
	}{{5, 2, []int{5}}, {3, 2, nil}, {5, 0, nil}} {
		var got []int
		w := EvalWindow{Rounds: 5, Last: c.last, Start: c.start, Eval: func(round int, final bool) error {
			if !final {
				t.Errorf("start %d: round %d scored as not final", c.start, round)
			}
			got = append(got, round)
			return nil
		}}
		if err := w.Finish(); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(c.want) || (len(got) == 1 && got[0] != c.want[0]) {
			t.Errorf("start %d, last %d: Finish scored %v, want %v", c.start, c.last, got, c.want)
		}
	}
}

// After hears every round once it is scored, unless Stop ended the run.
func TestEvalWindowAfter(t *testing.T) {
	var log []string
	stop := false
	w := EvalWindow{Rounds: 3, Last: 1,
		Eval:  func(round int, _ bool) error { log = append(log, fmt.Sprint("eval ", round)); return nil },
		After: func(round int) error { log = append(log, fmt.Sprint("after ", round)); return nil },
		Stop: func() error {
			if stop {
				return errors.New("stopped")
			}
			return nil
		}}
	for t0 := range 3 {
		stop = t0 == 2
		_ = w.AfterRound(t0)
	}
	if got := fmt.Sprint(log); got != "[after 1 after 2 eval 3]" {
		t.Errorf("calls %s", got)
	}
}

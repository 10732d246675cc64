package methods

import (
	"context"
	"errors"
	"testing"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/harness"
)

// A sweep runs each level on the same seeds and reports the levels in
// order, named by their keys.
func TestSweepRunsEveryLevel(t *testing.T) {
	var levels []PACPFL
	for _, k := range []int{1, 2} {
		m := smallPACPFL(t)
		m.Options.Server.K, m.Options.Server.Rounds = k, 3
		m.Key = []string{"k=1", "k=2"}[k-1]
		levels = append(levels, m)
	}
	sw := Sweep{Data: smallPoly, Seeds: []uint64{3, 4}, Levels: levels}
	rep, err := sw.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Methods) != 2 || rep.Methods[0].Name != "k=1" || rep.Methods[1].Name != "k=2" {
		t.Fatalf("levels: %+v", rep.Methods)
	}
	for _, mr := range rep.Methods {
		if len(mr.Results) != 2 {
			t.Errorf("%s: %d results for 2 seeds", mr.Name, len(mr.Results))
		}
	}
}

func TestSweepNeedsKeys(t *testing.T) {
	sw := Sweep{Data: smallPoly, Seeds: []uint64{1}, Levels: []PACPFL{smallPACPFL(t)}}
	if _, err := sw.Run(context.Background(), nil); !errors.Is(err, harness.ErrBadExperiment) {
		t.Errorf("a level without a key: %v", err)
	}
	a, b := smallPACPFL(t), smallPACPFL(t)
	a.Key, b.Key = "x", "x"
	sw.Levels = []PACPFL{a, b}
	if _, err := sw.Run(context.Background(), nil); !errors.Is(err, harness.ErrBadExperiment) {
		t.Errorf("two levels of one key: %v", err)
	}
}

// The levels under DP are the private ones; an unknown key is not.
func TestSweepPrivate(t *testing.T) {
	plain, private := smallPACPFL(t), smallPACPFL(t)
	plain.Key, private.Key = "no DP", "ε=1"
	private.Options.Server.DP = &fl.DPConfig{Mechanism: fl.DPLaplace, Epsilon: 1, Clip: 10}
	sw := Sweep{Levels: []PACPFL{plain, private}}
	for key, want := range map[string]bool{"no DP": false, "ε=1": true, "k=2": false} {
		if got := sw.Private(key); got != want {
			t.Errorf("Private(%q) = %v, want %v", key, got, want)
		}
	}
}

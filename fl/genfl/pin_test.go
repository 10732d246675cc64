package genfl

import (
	"testing"

	"github.com/pacpfl/pacpfl/asm/asmtest"
	"github.com/pacpfl/pacpfl/fl"
)

// TestLearnPriorPinned pins the exact bits of a small seeded LearnPrior:
// the learnt means and the objective reported after every round.
func TestLearnPriorPinned(t *testing.T) {
	asmtest.PinGeneric(t)
	cs := synthUsers(5, 30, 7)
	p0, err := RandomPrior(synthArch, 0.1, stream(1, tagPrior))
	if err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 2} {
		fed := synthFed(4, workers)
		fed.Rounds, fed.LR, fed.Momentum = 6, 0.01, 0.9
		var vals []float64
		fed.Progress = func(e fl.RoundEvent) { vals = append(vals, e.Value) }
		p, err := LearnPrior(cs, p0, 0.1, synthArch, 0.2, fed)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := asmtest.Digest(p.Mu, p.Sigma, vals), "aa96d1fac5b5209b"; got != want {
			t.Errorf("%d workers: digest %s, pinned %s", workers, got, want)
		}
	}
}

// TestTrainPinned pins the exact bits of a small seeded GenFL run (Alg. 1):
// the posterior's means and scales and the objective after every round.
func TestTrainPinned(t *testing.T) {
	asmtest.PinGeneric(t)
	cs := synthUsers(5, 30, 8)
	p, err := RandomPrior(synthArch, 0.1, stream(1, tagPrior))
	if err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 2} {
		fed := synthFed(5, workers)
		fed.Rounds = 4
		var vals []float64
		fed.Progress = func(e fl.RoundEvent) { vals = append(vals, e.Value) }
		o := ObjectiveConfig{Objective: F1, KLPenalty: 1, Delta: 0.05, PMin: 1e-4}
		q, err := Train(cs, p, TotalM(cs), synthArch, o, fed)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := asmtest.Digest(q.Mu, q.Rho, vals), "1e9c6914d65626d6"; got != want {
			t.Errorf("%d workers: digest %s, pinned %s", workers, got, want)
		}
	}
}

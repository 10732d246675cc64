package genfl

import (
	"math/rand/v2"
	"testing"

	"github.com/pacpfl/pacpfl/fl/internal/meanfield"
)

// The training step and the pair evaluator do not allocate once sized.
func TestHotPathsDoNotAllocate(t *testing.T) {
	a := Arch{In: 20, Hidden: []int{16, 12}, Classes: 4}
	c := tinyData(a, 25, 1)
	p, q := tinyPosterior(t, a, 2)
	terms, _ := newObjectiveTerms(F2, 1000, 0.05, 0.1)
	w := newWorker(a, true)
	copy(w.mu, q.Mu)
	copy(w.rho, q.Rho)
	w.nrm = meanfield.NewNormals(rand.New(rand.NewPCG(1, 1)))
	fed := &Federation{LR: 1e-3, Momentum: 0.9}
	step := func() {
		if _, err := w.posteriorStep(c.X, c.Y, p, terms, 1e-4, fed); err != nil {
			t.Fatal(err)
		}
	}
	step()
	if n := testing.AllocsPerRun(20, step); n != 0 {
		t.Errorf("posteriorStep allocates %v times per step", n)
	}
	e := newPairEval(a)
	m := newMoments(q)
	rng := rand.New(rand.NewPCG(2, 2))
	norm := rng.NormFloat64
	e.errors(m, c.X, c.Y, norm)
	if n := testing.AllocsPerRun(20, func() { e.errors(m, c.X, c.Y, norm) }); n != 0 {
		t.Errorf("the pair evaluator allocates %v times per block", n)
	}
}

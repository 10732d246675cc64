package genfl

import "testing"

func TestDefaultOptionsFollowThePriorAndTheEstimator(t *testing.T) {
	l := DefaultOptions(LearntPriorKind, Pairs, 3)
	r := DefaultOptions(RandomPriorKind, Full, 3)
	if l.PosteriorFed.Rounds != 10 || l.PosteriorFed.LocalEpochs != 5 || l.Objective.KLPenalty != 1 ||
		l.MC.N != 150000 {
		t.Errorf("learnt prior, pairs: %+v %+v %+v", l.PosteriorFed, l.Objective, l.MC)
	}
	if r.PosteriorFed.Rounds != 200 || r.PosteriorFed.LocalEpochs != 1 || r.Objective.KLPenalty != 0.1 ||
		r.MC.N != 100 || r.MC.Estimator != Full {
		t.Errorf("random prior, full: %+v %+v %+v", r.PosteriorFed, r.Objective, r.MC)
	}
	if l.Arch.In != 784 || len(l.Arch.Hidden) != 2 || l.Arch.Classes != 10 {
		t.Errorf("architecture %+v", l.Arch)
	}
	// The three random streams differ from each other and with the seed.
	o := DefaultOptions(LearntPriorKind, Pairs, 4)
	seeds := map[uint64]bool{l.PriorFed.Seed: true, l.PosteriorFed.Seed: true, l.MC.Seed: true,
		o.PriorFed.Seed: true, o.PosteriorFed.Seed: true, o.MC.Seed: true}
	if len(seeds) != 6 || l.Seed != 3 || o.Seed != 4 {
		t.Errorf("streams %v", seeds)
	}
	// The hidden widths are the caller's to change.
	l.Arch.Hidden[0] = 1
	if DefaultOptions(LearntPriorKind, Pairs, 3).Arch.Hidden[0] != 600 {
		t.Error("DefaultOptions shares its hidden widths between calls")
	}
}

package fl

import "math"

// RoundEval is a federated method's evaluation after one round of its run:
// mean accuracies (%) over a group's clients, NaN for a figure the method
// has no model or group for. FedAvg and FedProx report GM; pFedBayes PM and
// GM; FedVI and FedAvg on its network the weighted accuracies.
type RoundEval struct {
	Round int // from 1; 0: the initial models of a run of no rounds
	// PM and GM are the mean accuracies over the existing clients' test
	// sets of the personalised models and of the global model.
	PM, GM float64
	// ExistingWeighted and NewWeighted are the accuracies over the pooled
	// test images of the existing and of the new clients (FedVI's
	// weighting by local test-set size).
	ExistingWeighted, NewWeighted float64
}

// BestRound returns the earliest evaluation of h with the highest figure
// f (the paper's "best over rounds 700–800"); the zero RoundEval if h is
// empty.
func BestRound(h []RoundEval, f func(RoundEval) float64) RoundEval {
	if len(h) == 0 {
		return RoundEval{}
	}
	best := h[0]
	for _, e := range h[1:] {
		if f(e) > f(best) {
			best = e
		}
	}
	return best
}

// NewRoundEval is round's evaluation with every figure NaN, for a method
// to fill in those it has.
func NewRoundEval(round int) RoundEval {
	nan := math.NaN()
	return RoundEval{Round: round, PM: nan, GM: nan, ExistingWeighted: nan, NewWeighted: nan}
}

// RoundEvent is what a round-based method reports after each round of a
// run (or each unit of a phase it counts like rounds: clients
// personalised, Monte Carlo draws): every method's Progress hook has the
// one shape func(RoundEvent).
type RoundEvent struct {
	Round, Rounds int // rounds done (from 1) and of the run
	// Value is the round's training figure: PAC-PFL's mean ln Z^C over
	// the round's clients, GenFL's mean objective or loss; NaN where the
	// method reports none.
	Value float64
}

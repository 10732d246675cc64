package genfl

import "github.com/pacpfl/pacpfl/data"

// The paper's settings that depend on nothing else (the rest are the
// Default… constants of genfl.go and DefaultOptions).
const (
	// DefaultPriorRounds and DefaultPriorEpochs: the learnt prior's
	// federated ERM, 100 rounds of 5 local epochs, with momentum
	// DefaultPriorMomentum.
	DefaultPriorRounds   = 100
	DefaultPriorEpochs   = 5
	DefaultPriorMomentum = 0.99
	// DefaultPersonalEpochs: epochs of each user's personalisation (PFL).
	DefaultPersonalEpochs = 5
	// DefaultClientMCSamples: n of each user's own bound (PFL).
	DefaultClientMCSamples = 10000
	// DefaultStack: weight samples evaluated together by the Full
	// estimator.
	DefaultStack = 4
	// DefaultTestDraws: weight draws per test example of the Gibbs test
	// error.
	DefaultTestDraws = 10
)

// DefaultHidden is the paper's MLP 784-600-600-10.
func DefaultHidden() []int { return []int{600, 600} }

// DefaultOptions returns the paper's settings (GenFL and FEDBOUND)
// for a prior and a FEDBOUND estimator, with the random streams of seed:
// an MLP 784-600-600-10, σ_P = 0.025, objective f1 with its KL term weighted
// 1 (learnt prior) or 0.1 (random prior), δ = 0.05, δ′ = 0.01, p_min = 10⁻⁴;
// the learnt prior's ERM 100 rounds of 5 local epochs (momentum 0.99,
// dropout 0.2); GenFL 10 rounds of 5 local epochs from a learnt prior, 200
// rounds of 1 from a random one (momentum 0.95); C = 0.1, batch 25, SGD step
// 5·10⁻³; FEDBOUND's n = 150,000 (weight draw, example) pairs, or 100
// weight draws per user with the Full estimator; each user's own bound
// (PFL) 10,000; 5 personalisation epochs; 10 test draws. Workers 0 (all
// cores); Phase and UserProgress unset.
func DefaultOptions(prior PriorKind, est Estimator, seed uint64) Options {
	learnt := prior != RandomPriorKind // a given prior is trained from as a learnt one
	pick := func(ifLearnt, ifRandom int) int {
		if learnt {
			return ifLearnt
		}
		return ifRandom
	}
	penalty := 0.1
	if learnt {
		penalty = 1
	}
	n := 150000
	if est == Full {
		n = 100
	}
	o := Options{
		Arch:       Arch{In: 784, Hidden: DefaultHidden(), Classes: 10},
		Prior:      prior,
		SigmaPrior: DefaultSigmaPrior,
		Dropout:    DefaultDropout,
		PriorFed: Federation{Rounds: DefaultPriorRounds, Fraction: DefaultFraction, LocalEpochs: DefaultPriorEpochs,
			Batch: DefaultBatch,
			LR:    DefaultLR, Momentum: DefaultPriorMomentum},
		PosteriorFed: Federation{Rounds: pick(10, 200), Fraction: DefaultFraction, LocalEpochs: pick(5, 1),
			Batch: DefaultBatch,
			LR:    DefaultLR, Momentum: DefaultMomentum},
		PersonalEpochs: DefaultPersonalEpochs,
		Objective:      ObjectiveConfig{Objective: F1, KLPenalty: penalty, Delta: DefaultDelta, PMin: DefaultPMin},
		DeltaPrime:     DefaultDeltaPrime,
		MC:             MCConfig{Estimator: est, N: n, Stack: DefaultStack},
		ClientMC:       MCConfig{Estimator: est, N: DefaultClientMCSamples, Stack: DefaultStack},
		TestDraws:      DefaultTestDraws,
	}
	o.Reseed(seed)
	return o
}

// Reseed gives o the random streams of seed: its own, the two
// federations' and FEDBOUND's sampling step's (each a stream of its own).
func (o *Options) Reseed(seed uint64) {
	o.Seed = seed
	o.PriorFed.Seed = data.StreamID(0x6572, seed)
	o.PosteriorFed.Seed = data.StreamID(0x706f7374, seed)
	o.MC.Seed = data.StreamID(0x6d63, seed)
}

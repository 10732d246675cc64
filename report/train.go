package report

import (
	"math"

	"github.com/pacpfl/pacpfl/fl"
)

// Train is the --json report of a PAC-PFL training run with GP clients
// (pacpfl train and pacpfl server on Polynomial or a CSV regression task),
// and what pacpfl plot training reads: it draws LMLHistory.
type Train struct {
	Dataset string `json:"dataset"` // polynomial, or the CSV file
	Seed    uint64 `json:"seed"`
	// Config holds the settings of the run by flag-like name (k, rounds,
	// tau, …).
	Config       map[string]any `json:"config"`
	TrainSeconds float64        `json:"train_seconds"` // the training rounds
	TotalSeconds float64        `json:"total_seconds"` // with the data, personalisation and bounds
	// FinalLML is the mean client ln Z^C over the last rounds (FinalLML),
	// null for a run without rounds or a differentially private one.
	FinalLML Float `json:"final_mean_lml"`
	// Epsilon is the guaranteed ε of the released particles; nil (null)
	// where there is no DP guarantee.
	Epsilon  *float64 `json:"epsilon"`
	Privacy  Privacy  `json:"privacy"`
	Existing Metrics  `json:"existing"`
	New      Metrics  `json:"new"`
	// Bounds are Theorem 4.2 and Lemma 4.6 at the exact Gibbs
	// hyper-posterior 𝒬*, Learned Theorem 4.2 at the trained one; the *NA
	// fields say why one is missing.
	Bounds    *fl.Bounds       `json:"bounds,omitempty"`
	Learned   *fl.LearnedBound `json:"bound_trained,omitempty"`
	LearnedNA string           `json:"bound_trained_unavailable,omitempty"`
	BoundsNA  string           `json:"bounds_unavailable,omitempty"`
	// Certification holds the certificates of docs/math.md §2.18 with
	// every term (nil when they were not asked for).
	Certification *Certification `json:"certification,omitempty"`
	// LMLHistory is the mean client ln Z^C of each round (null for a round
	// without one); nil (null) for a differentially private run, whose
	// client LMLs the guarantee does not cover.
	LMLHistory []Float `json:"lml_history"`
	// PerClient holds per-client values by metric key (existing_rsmse,
	// new_ce, …; a CSV run adds the client ids), in client order.
	PerClient map[string]any `json:"per_client"`
}

// Metrics are one group's mean test metrics over its clients: the root
// standardised MSE and the calibration error (42), null for a group
// without clients.
type Metrics struct {
	RSMSE Float `json:"rsmse"`
	CE    Float `json:"ce"`
}

// BNNTrain is the --json report of a PAC-PFL training run with BNN clients
// (pacpfl train --model bnn, pacpfl server, a CSV classification task).
// The fields it shares with Train mean the same.
type BNNTrain struct {
	Dataset      string         `json:"dataset"`         // fmnist, or the CSV file
	Partition    string         `json:"partition"`       // the federated split of Fashion-MNIST
	Split        string         `json:"split,omitempty"` // labels5: small, medium or large
	Seed         uint64         `json:"seed"`
	Config       map[string]any `json:"config"`
	Notes        []string       `json:"notes,omitempty"` // what the data set had to change (fewer images, …)
	TrainSeconds float64        `json:"train_seconds"`
	TotalSeconds float64        `json:"total_seconds"`
	FinalLML     Float          `json:"final_mean_lml"` // of the LML estimate (38)
	Epsilon      *float64       `json:"epsilon"`
	Privacy      Privacy        `json:"privacy"`
	Existing     ClassMetrics   `json:"existing"`
	New          ClassMetrics   `json:"new"`
	Bounds       *fl.Bounds     `json:"bounds,omitempty"`
	// Certification holds the test-set certificates of the personalised
	// BNNs on the 0–1 error (docs/math.md §2.18.4).
	Certification *Certification `json:"certification,omitempty"`
	LMLHistory    []Float        `json:"lml_history"`
	PerClient     map[string]any `json:"per_client"` // existing_accuracy, new_ce, …
}

// ClassMetrics are one group's mean classification metrics: accuracy in
// percent and the calibration error (42), null for a group without
// clients.
type ClassMetrics struct {
	Accuracy Float `json:"accuracy"`
	CE       Float `json:"ce"`
}

// NewClassMetrics is g's means; a nil g (a group the method does not
// evaluate) is null.
func NewClassMetrics(g *fl.ClassGroupMetrics) ClassMetrics {
	if g == nil {
		return ClassMetrics{Float(math.NaN()), Float(math.NaN())}
	}
	return ClassMetrics{Float(g.MeanAccuracy), Float(g.MeanCE)}
}

// Privacy is the DP guarantee of the released particles (fl.Privacy), with
// a null ε where there is none (fl.Privacy's +Inf).
type Privacy struct {
	Mechanism      string  `json:"mechanism,omitempty"`
	Epsilon        Float   `json:"epsilon"`
	Delta          float64 `json:"delta"`
	NominalEpsilon Float   `json:"nominal_epsilon"` // asked for; differs from Epsilon for the paper's mechanism only
	SecretNoise    bool    `json:"secret_noise"`    // false: the noise came from --dp-noise-seed
	Statement      string  `json:"statement"`
}

// NewPrivacy is p as written.
func NewPrivacy(p fl.Privacy) Privacy {
	return Privacy{Mechanism: string(p.Mechanism), Epsilon: Float(p.Epsilon), Delta: p.Delta,
		NominalEpsilon: Float(p.NominalEpsilon), SecretNoise: p.SecretNoise, Statement: p.Statement}
}

// FinalLML is the mean of the last 50 of the per-round mean client LMLs
// (NaN for none): one round's mean is noisy with client sampling.
func FinalLML(history []float64) float64 {
	return fl.Mean(history[max(0, len(history)-50):])
}

// rounds are the figures of the training rounds both train reports hold.
type rounds struct {
	seconds float64
	final   Float
	epsilon *float64
	privacy Privacy
	history []Float
}

// newRounds are tr's figures; private (a differentially private run)
// leaves out the client LMLs, which its guarantee does not cover.
func newRounds(tr *fl.Result, private bool) rounds {
	r := rounds{seconds: tr.Elapsed.Seconds(), final: Float(FinalLML(tr.MeanLML)), privacy: NewPrivacy(tr.Privacy),
		history: Floats(tr.MeanLML)}
	if eps := tr.Privacy.Epsilon; !math.IsInf(eps, 1) {
		r.epsilon = &eps
	}
	if private {
		r.final, r.history = Float(math.NaN()), nil
	}
	return r
}

// SetTraining fills the figures of the training rounds tr (TrainSeconds,
// FinalLML, Epsilon, Privacy, LMLHistory); private leaves out the client
// LMLs of a differentially private run.
func (t *Train) SetTraining(tr *fl.Result, private bool) {
	r := newRounds(tr, private)
	t.TrainSeconds, t.FinalLML, t.Epsilon, t.Privacy, t.LMLHistory = r.seconds, r.final, r.epsilon, r.privacy, r.history
}

// SetTraining is Train.SetTraining.
func (t *BNNTrain) SetTraining(tr *fl.Result, private bool) {
	r := newRounds(tr, private)
	t.TrainSeconds, t.FinalLML, t.Epsilon, t.Privacy, t.LMLHistory = r.seconds, r.final, r.epsilon, r.privacy, r.history
}

// NewTrain is the report of res, a PAC-PFL run with GP clients, without
// what the caller knows (Dataset, Seed, Config, TotalSeconds); private as
// for SetTraining.
func NewTrain(res *fl.MethodResult, private bool) Train {
	t := Train{
		Existing: Metrics{Float(res.Existing.MeanRSMSE), Float(res.Existing.MeanCE)},
		New:      Metrics{Float(res.New.MeanRSMSE), Float(res.New.MeanCE)},
		Bounds:   res.Bounds, Learned: res.Learned, LearnedNA: res.LearnedUnavailable, BoundsNA: res.BoundsUnavailable,
		PerClient: map[string]any{
			"existing_rsmse": res.Existing.RSMSE, "existing_ce": res.Existing.CE,
			"new_rsmse": res.New.RSMSE, "new_ce": res.New.CE,
		},
	}
	t.SetTraining(res.Train, private)
	return t
}

// NewBNNTrain is NewTrain for BNN clients (the caller adds Partition,
// Split and Notes too).
func NewBNNTrain(res *fl.MethodResult, private bool) BNNTrain {
	t := BNNTrain{Existing: NewClassMetrics(res.ExistingClass), New: NewClassMetrics(res.NewClass), Bounds: res.Bounds,
		PerClient: map[string]any{}}
	if g := res.ExistingClass; g != nil {
		t.PerClient["existing_accuracy"], t.PerClient["existing_ce"] = Floats(g.Accuracy), Floats(g.CE)
	}
	if g := res.NewClass; g != nil {
		t.PerClient["new_accuracy"], t.PerClient["new_ce"] = Floats(g.Accuracy), Floats(g.CE)
	}
	t.SetTraining(res.Train, private)
	return t
}

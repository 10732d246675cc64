package fl

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// RoundTask is what the server of a round-based peer method (FedAvg,
// FedProx, pFedBayes, FedVI, GenFL) sends a client beside the round's
// global vector: the round and the client's random stream. A client that
// draws from t.Rand() only computes the same update in process and across
// the network.
type RoundTask struct {
	Round int // 0-based
	// Seed and Stream name the client's random stream of the update
	// (ClientStream(Seed, Stream)).
	Seed, Stream uint64
	// RNG, if set, is that stream already made (in process, reseeded by
	// the round loop without allocating); nil: Rand makes it.
	RNG *rand.Rand
}

// Rand returns the task's random stream.
func (t RoundTask) Rand() *rand.Rand {
	if t.RNG != nil {
		return t.RNG
	}
	return ClientStream(t.Seed, t.Stream)
}

// EvalTask asks a client to score one of its models on its own test data.
type EvalTask struct {
	// Round is the number of rounds done (0: before training).
	Round int
	// Model is which model, in the method's own numbering (pFedBayes: the
	// personalised or the global one; FedAvg+FT: the fine-tuned one).
	Model int
}

// ClientEval is one client's score of one model on its test data, the
// terms a method's group metrics are built from: the server sees numbers,
// never test data.
type ClientEval struct {
	Accuracy float64 // percent
	CE       float64 // calibration error (ClassificationMetrics)
	// Tests is the number of test points (a test-size-weighted mean).
	Tests int
	// Extra are the method's further per-client numbers, in its own order
	// (GenFL's bound terms); nil for most.
	Extra []float64
}

// RoundClient is one client of a round-based peer method, the shape of
// Flower's client: Fit trains on the client's data from the server's
// global vector and returns what the server aggregates, Evaluate scores
// the client's models on its test data. The method's round loop calls the
// same RoundClients in process and, through package rpc, across machines.
type RoundClient interface {
	// Fit is the client's local update of t.Round from global: the vector
	// the server aggregates is written into out (len(global)), random
	// draws come from t.Rand() only. It returns the mean training loss of
	// its steps (NaN where the method reports none).
	Fit(t RoundTask, global, out []float64) (loss float64, err error)
	// Evaluate scores model t.Model after t.Round rounds on the client's
	// test data; global is the server's current vector.
	Evaluate(t EvalTask, global []float64) (ClientEval, error)
}

// StatefulClient is a RoundClient that keeps state between rounds on the
// client (pFedBayes's personalised distribution and optimiser moments). A
// client process saves AppendState after every Fit and restores it with
// SetState after a restart, so the server never holds it.
type StatefulClient interface {
	RoundClient
	// AppendState appends the client's state to dst.
	AppendState(dst []float64) []float64
	// SetState replaces the client's state by s (as AppendState wrote it),
	// refusing a state of the wrong size or with non-finite entries.
	SetState(s []float64) error
}

// CheckUpdate refuses a client's update that cannot be aggregated: the
// wrong length or a non-finite entry (a poisoned or diverged update).
func CheckUpdate(out []float64, dim int) error {
	if len(out) != dim {
		return fmt.Errorf("update of %d values, the model has %d", len(out), dim)
	}
	for j, v := range out {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("update entry %d is %v", j, v)
		}
	}
	return nil
}

// GroupClassMetrics builds a group's metrics from its clients' scores, in
// client order, as EvaluateClassification does from their predictions.
func GroupClassMetrics(evals []ClientEval) ClassGroupMetrics {
	g := ClassGroupMetrics{Accuracy: make([]float64, len(evals)), CE: make([]float64, len(evals))}
	for i, e := range evals {
		g.Accuracy[i], g.CE[i] = e.Accuracy, e.CE
	}
	g.MeanAccuracy, g.MeanCE = Mean(g.Accuracy), Mean(g.CE)
	return g
}

// ScoreClient is a client's ClientEval of class probabilities probs on its
// test labels y (ClassificationMetrics).
func ScoreClient(probs, y []float64, classes int) (ClientEval, error) {
	acc, ce, err := ClassificationMetrics(probs, y, classes)
	return ClientEval{Accuracy: acc, CE: ce, Tests: len(y)}, err
}

// RoundState is a round-based peer method's server state between rounds:
// what its checkpoint holds and a resumed run starts from.
type RoundState struct {
	// Round is the number of rounds done.
	Round int
	// Global is the server's global vector after them; Server its
	// optimiser's state (FedVI's momentum; nil for a method without one).
	Global, Server []float64
	// History is the method's evaluations so far.
	History []RoundEval
	// Clients, if set, is per client the round (0-based) of its last
	// update the server accepted (−1: none): where a stateful remote
	// client's state must be (package rpc fills it).
	Clients []int
}

// RoundCheckpoint resumes and saves a round-based peer method's server.
type RoundCheckpoint struct {
	// Resume, if set, continues a run after Resume.Round rounds: the same
	// settings and seed give the rounds an uninterrupted run would have.
	Resume *RoundState
	// AfterRound, if set, is given the state after every round (its
	// vectors are the run's own: copy what is kept); an error ends the
	// run with that error.
	AfterRound func(st *RoundState) error
}

// Check refuses a resumed state that does not fit a run of rounds rounds
// whose global vector has dim entries and whose server state has server.
func (c *RoundCheckpoint) Check(rounds, dim, server int) error {
	r := c.Resume
	switch {
	case r == nil:
		return nil
	case r.Round < 0 || r.Round > rounds:
		return fmt.Errorf("the checkpoint is after round %d of a run of %d", r.Round, rounds)
	case len(r.Global) != dim || len(r.Server) != server:
		return fmt.Errorf("the checkpoint holds a global vector of %d and a server state of %d values; the run has "+
			"%d and %d", len(r.Global), len(r.Server), dim, server)
	}
	for _, xs := range [][]float64{r.Global, r.Server} {
		if err := CheckUpdate(xs, len(xs)); err != nil {
			return fmt.Errorf("the checkpoint's %w", err)
		}
	}
	return nil
}

// AppendRoundEval appends e to a history, replacing its last evaluation if
// that is of e's round: a run resumed after its last round scores that
// round again (fedrun's EvalWindow.Finish).
func AppendRoundEval(h []RoundEval, e RoundEval) []RoundEval {
	if n := len(h); n > 0 && h[n-1].Round == e.Round {
		h[n-1] = e
		return h
	}
	return append(h, e)
}

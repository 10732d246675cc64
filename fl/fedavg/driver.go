package fedavg

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/internal/fedround"
	"github.com/pacpfl/pacpfl/fl/internal/fedrun"
)

// Model is one goroutine's copy of an architecture FedAvg trains: a
// network whose weights are one flat vector, and the buffers of its local
// training (and of its prediction, if it is a Predictor). The driver never
// looks inside the vector, so any network runs the same rounds. C is the
// type of a client's training data.
type Model[C any] interface {
	// NumParams is the length of the flat weight vector.
	NumParams() int
	// Train is ClientUpdate: from the weights start, s.Steps units of the
	// model's local optimiser on c's training data, the result written
	// into out (as long as start), random draws from rng only. With s.Mu
	// > 0 every step adds FedProx's proximal gradient μ (w − start); a
	// model without the term rejects s.Mu ≠ 0. It returns the mean
	// training loss of its steps.
	Train(c *C, start, out []float64, s Schedule, rng *rand.Rand) (float64, error)
}

// Predictor is a Model that classifies, as Score and ScoreFineTuned need.
type Predictor interface {
	// Predict returns the class probabilities (rows × classes, row-major)
	// of the weights w on the rows x, in evaluation mode (no dropout).
	Predict(w, x []float64) ([]float64, error)
}

// Schedule is one local training's settings.
type Schedule struct {
	// Steps is the amount of training in the model's unit (this
	// package's MLP: SGD steps on sampled minibatches).
	Steps int
	Batch int     // minibatch size
	LR    float64 // step size η
	Mu    float64 // FedProx's proximal weight μ (0: FedAvg)
}

// Driver runs FedAvg's rounds, evaluations and fine-tuning over a Model,
// lending one model to every concurrent client update or evaluation.
type Driver[C any] struct {
	pool *fedrun.Pool[Model[C]]
}

// NewDriver returns a driver that makes its models with newModel and
// keeps up to keep of them between uses.
func NewDriver[C any](newModel func() (Model[C], error), keep int) *Driver[C] {
	return &Driver[C]{pool: fedrun.NewPool(keep, newModel)}
}

// Plan is one FedAvg run's protocol.
type Plan struct {
	Rounds int // T
	// ClientsPerRound is the number S of clients drawn uniformly each
	// round (≤ 0 or ≥ N: all), unless Select names them.
	ClientsPerRound int
	// Select, if set, names round t's clients (distinct) in the order the
	// server sums their weights: a paper that draws them its own way.
	Select func(round int) []int
	// Local is ClientUpdate's schedule.
	Local Schedule
	// Client i's stream in round t is (Seed, Tag, t, i); the draw of the
	// round's clients (Seed, Tag, "sel", t).
	Seed, Tag uint64
	// Workers bounds the concurrent client updates (0: GOMAXPROCS); the
	// result does not depend on it.
	Workers int
	// Server, if set, updates the global weights in place from mean, the
	// data-size-weighted mean of the clients' weights: a server optimiser
	// (FedVI's momentum). Nil: global ← mean.
	Server func(round int, global, mean []float64)
	// Check, if set, is asked after every round's server step: an error
	// (diverged weights) ends the run.
	Check func(global []float64) error
	// Eval, if set, scores the global weights after each of the last
	// EvalLast rounds (round from 1; final marks the last), or once
	// (round 0) in a run of no rounds.
	Eval     func(round int, final bool) error
	EvalLast int
	// Progress, if set, hears after every round (after Eval), Value the
	// mean over the round's clients of their training loss.
	Progress func(fl.RoundEvent)
	// Stop, if set, is asked after every round (after Progress); an error
	// it returns ends the run with that error (a caller's cancellation).
	Stop func() error
	// Drops lets a round go on without clients that fail (remote ones).
	Drops
	// Start is the first round to run (a resumed run's rounds done).
	Start int
	// AfterRound, if set, is called after every round (1-based) once its
	// server step and evaluation are done: a checkpoint.
	AfterRound func(round int) error
}

// Drops let a round complete without some of its clients (fedrun's Hooks
// of the same names): with Quorum > 0, a client whose update failed or was
// rejected (MaxNormFactor: its norm ‖w_i − wᵗ‖ above that factor times
// the median of the others') is told to OnDrop and left out, and the
// server's mean is over the rest, their weights renormalised (FedAvg: the
// size-weighted mean), if at least Quorum remain.
type Drops struct {
	Quorum        int
	MaxNormFactor float64
	OnDrop        func(round, client int, err error)
}

// Train runs p.Rounds rounds of FedAvg on clients, weighted by weights
// (their data sizes), from global, which it updates in place:
//
//	for t = 0..T−1:
//	    Sᵗ ← p.Select(t), or S clients drawn uniformly
//	    for i ∈ Sᵗ in parallel: w_i ← Model.Train(clients[i], wᵗ)
//	    wᵗ⁺¹ ← Σ_{i∈Sᵗ} n_i w_i / Σ_{i∈Sᵗ} n_i      (or p.Server's step)
//
// summed in Sᵗ's order, so that the result depends on p.Seed only. It
// returns the seconds spent in p.Eval.
func (d *Driver[C]) Train(clients []C, weights, global []float64, p Plan) (evalSeconds float64, err error) {
	rc := make([]fl.RoundClient, len(clients))
	for i := range clients {
		rc[i] = d.RoundClient(&clients[i], ClientSettings[C]{Local: p.Local})
	}
	return TrainClients(rc, weights, global, p)
}

// TrainClients is Train's rounds with the clients as fl.RoundClients
// (a Driver's RoundClient in process, or remote ones): client i's Fit is
// its ClientUpdate, and p.Local is the clients' business.
func TrainClients(clients []fl.RoundClient, weights, global []float64, p Plan) (evalSeconds float64, err error) {
	if len(clients) != len(weights) {
		return 0, fmt.Errorf("fedavg: %d clients, %d weights", len(clients), len(weights))
	}
	loss := make([]float64, len(clients)) // a round's clients are distinct
	var round []int
	win := fedrun.EvalWindow{Rounds: p.Rounds, Stop: p.Stop, Eval: p.Eval, Start: p.Start, After: p.AfterRound}
	if p.Eval != nil {
		win.Last = p.EvalLast
	}
	if p.Progress != nil {
		win.Progress = func(t, rounds int) {
			sum := 0.0
			for _, i := range round {
				sum += loss[i]
			}
			p.Progress(fl.RoundEvent{Round: t, Rounds: rounds, Value: sum / float64(len(round))})
		}
	}
	hooks := fedrun.Hooks{
		Server:  p.Server,
		Select:  p.Select,
		Workers: p.Workers,
		Chosen:  func(_ int, chosen []int) { round = chosen },
		Quorum:  p.Quorum, MaxNormFactor: p.MaxNormFactor, OnDrop: p.OnDrop, Start: p.Start,
		AfterRound: func(t int) error {
			if p.Check != nil {
				if err := p.Check(global); err != nil {
					return err
				}
			}
			return win.AfterRound(t)
		},
	}
	n := len(clients)
	if err := fedrun.RunHooks(n, p.ClientsPerRound, p.Rounds, weights, global, p.Seed, p.Tag,
		fedround.Local(clients, p.Seed, p.Tag, loss), hooks); err != nil {
		return win.Seconds, err
	}
	if win.Last > 0 {
		err = win.Finish()
	}
	return win.Seconds, err
}

var errNoPredict = errors.New("fedavg: the model does not predict (not a Predictor)")

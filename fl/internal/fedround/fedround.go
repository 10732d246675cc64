// Package fedround runs a round-based peer method's fl.RoundClients on the
// round engine (fedrun): their Fit is the engine's local update, their
// Evaluate a group's scores. A method whose round loop calls its clients
// only through these runs the same in process and with the remote clients
// of package rpc.
package fedround

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/internal/fedrun"
)

// Task is client i's fl.RoundTask in round t of a run whose client streams
// are (seed, tag, t, i), the streams fedrun's rounds seed rng with.
func Task(seed, tag uint64, round, client int, rng *rand.Rand) fl.RoundTask {
	return fl.RoundTask{Round: round, Seed: seed, Stream: data.StreamID(tag, uint64(round), uint64(client)), RNG: rng}
}

// Local is fedrun's local update of clients (fedrun.Run's seed and tag):
// client i's Fit, its loss stored in loss[i] if loss is set.
func Local(clients []fl.RoundClient, seed, tag uint64, loss []float64) fedrun.Local {
	return func(i, round int, global, out []float64, rng *rand.Rand) error {
		l, err := clients[i].Fit(Task(seed, tag, round, i, rng), global, out)
		if err != nil {
			l = math.NaN() // a dropped client has no loss
		}
		if loss != nil {
			loss[i] = l
		}
		return err
	}
}

// Evaluate scores every client's model t.Model (concurrently) and returns
// their scores in client order; the first failure (lowest client) is its
// error.
func Evaluate(clients []fl.RoundClient, t fl.EvalTask, global []float64) ([]fl.ClientEval, error) {
	evals := make([]fl.ClientEval, len(clients))
	err := fedrun.ForEach(len(clients), func(i int) error {
		e, err := clients[i].Evaluate(t, global)
		if err != nil {
			return fmt.Errorf("client %d: %w", i, err)
		}
		evals[i] = e
		return nil
	})
	return evals, err
}

// Score is Evaluate's group metrics (fl.GroupClassMetrics).
func Score(clients []fl.RoundClient, t fl.EvalTask, global []float64) (fl.ClassGroupMetrics, error) {
	evals, err := Evaluate(clients, t, global)
	if err != nil {
		return fl.ClassGroupMetrics{}, err
	}
	return fl.GroupClassMetrics(evals), nil
}

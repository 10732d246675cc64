package fedavg

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/pacpfl/pacpfl/fl"
)

// The models a Driver's client scores (fl.EvalTask.Model).
const (
	// EvalGlobal is the server's global weights on the client's test set.
	EvalGlobal = iota
	// EvalFineTuned is FedAvg+FT's personalised model: the client trains
	// its own copy of the global weights by ClientSettings.FineTune on its
	// training data, then scores it. The copy stays on the client.
	EvalFineTuned
)

// ClientSettings make one client of a Driver an fl.RoundClient.
type ClientSettings[C any] struct {
	// Local is Fit's schedule (ClientUpdate).
	Local Schedule
	// FineTune is EvalFineTuned's schedule (Steps 0: the client refuses
	// EvalFineTuned), drawn from the stream (FineTuneSeed, FineTuneStream).
	FineTune                     Schedule
	FineTuneSeed, FineTuneStream uint64
	// Test, if set, returns the client's test rows, their labels and the
	// number of classes; nil: the client does not evaluate.
	Test func(c *C) (x, y []float64, classes int)
}

// RoundClient is the client with data c of d as an fl.RoundClient: Fit is
// Model.Train by s.Local, Evaluate scores EvalGlobal or EvalFineTuned, each
// with a model lent by d's pool. The client keeps no state between rounds.
func (d *Driver[C]) RoundClient(c *C, s ClientSettings[C]) fl.RoundClient {
	return &driverClient[C]{d: d, c: c, s: s}
}

type driverClient[C any] struct {
	d *Driver[C]
	c *C
	s ClientSettings[C]
}

func (k *driverClient[C]) Fit(t fl.RoundTask, global, out []float64) (float64, error) {
	m, err := k.d.pool.Get()
	if err != nil {
		return 0, err
	}
	defer k.d.pool.Put(m)
	if n := m.NumParams(); len(global) != n || len(out) != n {
		return 0, fmt.Errorf("fedavg: global weights of %d and an update of %d values for a model of %d", len(global),
			len(out), n)
	}
	return m.Train(k.c, global, out, k.s.Local, t.Rand())
}

func (k *driverClient[C]) Evaluate(t fl.EvalTask, global []float64) (fl.ClientEval, error) {
	if k.s.Test == nil {
		return fl.ClientEval{}, errors.New("fedavg: the client has no test data")
	}
	m, err := k.d.pool.Get()
	if err != nil {
		return fl.ClientEval{}, err
	}
	defer k.d.pool.Put(m)
	pr, ok := m.(Predictor)
	if !ok {
		return fl.ClientEval{}, errNoPredict
	}
	if len(global) != m.NumParams() {
		return fl.ClientEval{}, fmt.Errorf("fedavg: global weights of %d values for a model of %d", len(global),
			m.NumParams())
	}
	w := global
	switch t.Model {
	case EvalGlobal:
	case EvalFineTuned:
		if k.s.FineTune.Steps < 1 {
			return fl.ClientEval{}, errors.New("fedavg: the client was given no fine-tuning")
		}
		w = make([]float64, len(global))
		rng := rand.New(rand.NewPCG(k.s.FineTuneSeed, k.s.FineTuneStream))
		if _, err := m.Train(k.c, global, w, k.s.FineTune, rng); err != nil {
			return fl.ClientEval{}, fmt.Errorf("fine-tuning: %w", err)
		}
	default:
		return fl.ClientEval{}, fmt.Errorf("fedavg: no model %d to evaluate (%d: global, %d: fine-tuned)", t.Model,
			EvalGlobal, EvalFineTuned)
	}
	x, y, classes := k.s.Test(k.c)
	p, err := pr.Predict(w, x)
	if err != nil {
		return fl.ClientEval{}, err
	}
	return fl.ScoreClient(p, y, classes)
}

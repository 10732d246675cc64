// Package maml is the MAML baseline of PAC-PFL's Table 6: Per-FedAvg
// (Fallah, Mokhtari & Ozdaglar 2020), federated model-agnostic
// meta-learning of a shared initialisation w that each client personalises
// with one gradient step, w_i = w − α∇L_i(w). Its first-order version
// (Per-FedAvg FO), with a neural network:
//
//	for each round: the server sends w to the sampled clients;
//	    client i repeats LocalSteps times: draw batches D and D′ of its
//	        training data; w̃ = w − α∇L_i(w; D); w ← w − β∇L_i(w̃; D′);
//	    and returns w; the server sets w to their data-size-weighted mean.
//	personalisation: w_i = w − α∇L_i(w) on the client's own data (one step,
//	    as the method defines it; PersonalSteps > 1 repeats it).
//
// L_i is the mean squared error. It predicts a point: CE is not applicable.
package maml

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/internal/fedrun"
	"github.com/pacpfl/pacpfl/fl/internal/regnet"
)

// Options are MAML's hyper-parameters.
type Options struct {
	Hidden          []int
	Alpha           float64 // inner (personalisation) step size α
	Beta            float64 // outer (meta) step size β
	Batch           int     // size of D and D′ (0: all of the client's data)
	Rounds          int
	ClientsPerRound int // 0: all
	LocalSteps      int
	PersonalSteps   int // gradient steps of size α at personalisation (1: the method as defined)
	Seed            uint64
}

// Default returns the defaults: α and β chosen by 5-fold cross-validation
// on the training clients of PV-EW(150) data seed 1000 over α ∈ {0.01, 0.03,
// 0.1} × β ∈ {0.003, 0.01, 0.03} (`pacpfl tune pv --method maml`: best
// α = 0.03, β = 0.03, validation RSMSE 0.315, against 0.335 at β = 0.01).
func Default() Options {
	return Options{Hidden: []int{32}, Alpha: 0.03, Beta: 0.03, Batch: 32, Rounds: 300, LocalSteps: 5, PersonalSteps: 1}
}

// Validate reports the first option that cannot work, by name.
func (o Options) Validate() error {
	switch {
	case !(o.Alpha >= 0) || !(o.Beta > 0) || math.IsInf(o.Alpha, 0) || math.IsInf(o.Beta, 0):
		return fmt.Errorf("maml: step sizes α = %v, β = %v must be finite, α ≥ 0, β > 0", o.Alpha, o.Beta)
	case o.Batch < 0 || o.Rounds < 0 || o.LocalSteps < 0 || o.PersonalSteps < 0 || o.ClientsPerRound < 0:
		return fmt.Errorf("maml: negative batch, rounds or steps")
	}
	return nil
}

// Model is the trained meta-initialisation.
type Model struct {
	net *regnet.Net
	W   []float64
	o   Options
}

// Train runs Per-FedAvg (FO) on the existing clients of ds.
func Train(ds *data.Dataset, o Options) (*Model, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	net, w, weights, err := regnet.Federation("maml", ds, o.Hidden, o.Seed, 0x6d616d6c696e6974)
	if err != nil {
		return nil, err
	}
	n, p := len(ds.Existing), len(w)
	type state struct {
		net           *regnet.Net
		wt, g         []float64
		batch1, batch data.RowSampler
	}
	st := make([]*state, n)
	for i := range st {
		st[i] = &state{net: net.Clone(), wt: make([]float64, p), g: make([]float64, p)}
	}
	local := func(i, _ int, global, out []float64, rng *rand.Rand) error {
		s, c := st[i], &ds.Existing[i]
		copy(out, global)
		b := o.Batch
		if b <= 0 {
			b = c.M()
		}
		for step := 0; step < o.LocalSteps; step++ {
			x1, y1, err := s.batch1.Sample(c.X, c.Y, ds.D, b, rng)
			if err != nil {
				return err
			}
			s.net.LossGrad(out, x1, y1, s.g)
			for j := range s.wt {
				s.wt[j] = out[j] - o.Alpha*s.g[j]
			}
			x2, y2, err := s.batch.Sample(c.X, c.Y, ds.D, b, rng)
			if err != nil {
				return err
			}
			s.net.LossGrad(s.wt, x2, y2, s.g)
			for j := range out {
				out[j] -= o.Beta * s.g[j]
			}
		}
		return nil
	}
	if err := fedrun.Run(n, o.ClientsPerRound, o.Rounds, weights, w, o.Seed, 0x6d616d6c, local); err != nil {
		return nil, fmt.Errorf("maml: %w", err)
	}
	if err := finite(w); err != nil {
		return nil, err
	}
	return &Model{net: net, W: w, o: o}, nil
}

// Fit personalises w on (x, y) by gradient steps of size α and returns the
// predictor (fl.PointFit).
func (m *Model) Fit(x, y []float64) (func(xTest, out []float64), error) {
	net := m.net.Clone()
	w := append([]float64(nil), m.W...)
	g := make([]float64, len(w))
	for step := 0; step < m.o.PersonalSteps && len(y) > 0; step++ {
		net.LossGrad(w, x, y, g)
		for j := range w {
			w[j] -= m.o.Alpha * g[j]
		}
	}
	if err := finite(w); err != nil {
		return nil, err
	}
	return func(xTest, out []float64) { net.Predict(w, xTest, out) }, nil
}

// finite reports diverged weights: a step size too large for the data.
func finite(w []float64) error {
	for _, v := range w {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("maml: the weights diverged (%v): the step sizes α or β are too large for these data", v)
		}
	}
	return nil
}

// Run trains MAML on ds and evaluates it on the existing and new clients.
func Run(ds *data.Dataset, o Options) (*fl.MethodResult, error) {
	start := time.Now()
	m, err := Train(ds, o)
	if err != nil {
		return nil, err
	}
	return fl.EvaluatePoint("maml", ds, m.Fit, start)
}

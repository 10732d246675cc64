// Package mtl is the multi-task-learning baseline of PAC-PFL's Table 6
// (Evgeniou & Pontil 2004, regularised multi-task learning, with a neural
// network as the paper's experiments use): client i's weights are
// w_i = w₀ + v_i, and the federation minimises
//
//	Σ_i [ L_i(w₀ + v_i) + λ_v‖v_i‖² ] + λ₀‖w₀‖²,
//
// L_i the mean squared error on client i's training data. Training is
// federated (the shared w₀ is averaged by the server, each v_i stays on its
// client):
//
//	for each round: the server sends w₀ to the clients;
//	    client i takes LocalSteps Adam steps on (w₀, v_i) for
//	        L_i(w₀ + v_i) + λ_v‖v_i‖² + (λ₀/n)‖w₀‖²,
//	    and returns its w₀; the server sets w₀ to their data-size-weighted mean.
//	personalisation: with w₀ fixed, every client (new ones from v = 0) fits
//	    v on its own data by PersonalSteps Adam steps.
//
// It predicts a point (no predictive distribution): the calibration error is
// reported as not applicable (NaN).
package mtl

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/internal/fedrun"
	"github.com/pacpfl/pacpfl/fl/internal/regnet"
	"github.com/pacpfl/pacpfl/svgd"
)

// Options are MTL's hyper-parameters.
type Options struct {
	Hidden          []int   // hidden widths of the tanh network
	LambdaV         float64 // λ_v, the penalty on the personal offsets
	Lambda0         float64 // λ₀, the penalty on the shared weights
	LR              float64 // Adam step size
	Rounds          int
	ClientsPerRound int // 0: all
	LocalSteps      int
	PersonalSteps   int
	Seed            uint64
}

// Default returns the defaults: λ_v and the learning rate chosen by 5-fold
// cross-validation on the training clients of PV-EW(150) data seed 1000 over
// λ_v ∈ {0.001, 0.01, 0.03, 0.1, 0.3, 1} × lr ∈ {0.003, 0.01, 0.03}
// (`pacpfl tune pv --method mtl`: best λ_v = 1, lr = 0.01, validation RSMSE
// 0.3115, against 0.3171 at λ_v = 0.3).
func Default() Options {
	return Options{Hidden: []int{32}, LambdaV: 1, Lambda0: 1e-4, LR: 1e-2, Rounds: 100, LocalSteps: 5,
		PersonalSteps: 100}
}

// Validate reports the first option that cannot work, by name.
func (o Options) Validate() error {
	switch {
	case !(o.LambdaV >= 0) || !(o.Lambda0 >= 0) || math.IsInf(o.LambdaV, 0) || math.IsInf(o.Lambda0, 0):
		return fmt.Errorf("mtl: penalties λ_v = %v, λ₀ = %v must be finite and ≥ 0", o.LambdaV, o.Lambda0)
	case !(o.LR > 0) || math.IsInf(o.LR, 0):
		return fmt.Errorf("mtl: learning rate %v must be positive and finite", o.LR)
	case o.Rounds < 0 || o.LocalSteps < 0 || o.PersonalSteps < 0 || o.ClientsPerRound < 0:
		return fmt.Errorf("mtl: negative rounds or steps")
	}
	return nil
}

// Model is a trained MTL federation: the shared weights and the network.
type Model struct {
	net *regnet.Net
	W0  []float64
	o   Options
}

// Train runs the federated training on the existing clients of ds.
func Train(ds *data.Dataset, o Options) (*Model, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	net, w0, weights, err := regnet.Federation("mtl", ds, o.Hidden, o.Seed, 0x6d746c696e6974)
	if err != nil {
		return nil, err
	}
	n, p := len(ds.Existing), len(w0)
	type state struct {
		net       *regnet.Net
		v, w, g   []float64
		joint, gj []float64 // (w₀, v) and its gradient
	}
	st := make([]*state, n)
	for i := range st {
		st[i] = &state{net: net.Clone(), v: make([]float64, p), w: make([]float64, p), g: make([]float64, p),
			joint: make([]float64, 2*p), gj: make([]float64, 2*p)}
	}
	lam0 := o.Lambda0 / float64(n)
	local := func(i, _ int, global, out []float64, _ *rand.Rand) error {
		s, c := st[i], &ds.Existing[i]
		copy(s.joint[:p], global)
		copy(s.joint[p:], s.v)
		adam := svgd.NewAdam(o.LR)
		for step := 0; step < o.LocalSteps; step++ {
			for j := 0; j < p; j++ {
				s.w[j] = s.joint[j] + s.joint[p+j]
			}
			s.net.LossGrad(s.w, c.X, c.Y, s.g)
			for j := 0; j < p; j++ {
				// Descent on the objective = ascent along −∇.
				s.gj[j] = -(s.g[j] + 2*lam0*s.joint[j])
				s.gj[p+j] = -(s.g[j] + 2*o.LambdaV*s.joint[p+j])
			}
			if err := adam.Ascend(s.joint, s.gj); err != nil {
				return err
			}
		}
		copy(out, s.joint[:p])
		copy(s.v, s.joint[p:])
		return nil
	}
	if err := fedrun.Run(n, o.ClientsPerRound, o.Rounds, weights, w0, o.Seed, 0x6d746c, local); err != nil {
		return nil, fmt.Errorf("mtl: %w", err)
	}
	for _, v := range w0 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil,
				fmt.Errorf("mtl: the shared weights diverged (%v): the learning rate is too large for these data", v)
		}
	}
	return &Model{net: net, W0: w0, o: o}, nil
}

// Personalise fits client c's offset v on (x, y) with w₀ fixed and returns
// its weights w₀ + v.
func (m *Model) Personalise(x, y []float64) ([]float64, error) {
	p := len(m.W0)
	net := m.net.Clone()
	v, w, g := make([]float64, p), make([]float64, p), make([]float64, p)
	adam := svgd.NewAdam(m.o.LR)
	for step := 0; step < m.o.PersonalSteps && len(y) > 0; step++ {
		for j := range w {
			w[j] = m.W0[j] + v[j]
		}
		net.LossGrad(w, x, y, g)
		for j := range g {
			g[j] = -(g[j] + 2*m.o.LambdaV*v[j])
		}
		if err := adam.Ascend(v, g); err != nil {
			return nil, err
		}
	}
	for j := range w {
		w[j] = m.W0[j] + v[j]
	}
	return w, nil
}

// Fit personalises on (x, y) and returns the predictor (fl.PointFit).
func (m *Model) Fit(x, y []float64) (func(xTest, out []float64), error) {
	w, err := m.Personalise(x, y)
	if err != nil {
		return nil, err
	}
	net := m.net.Clone()
	return func(xTest, out []float64) { net.Predict(w, xTest, out) }, nil
}

// Run trains MTL on ds and evaluates it on the existing and new clients.
func Run(ds *data.Dataset, o Options) (*fl.MethodResult, error) {
	start := time.Now()
	m, err := Train(ds, o)
	if err != nil {
		return nil, err
	}
	return fl.EvaluatePoint("mtl", ds, m.Fit, start)
}

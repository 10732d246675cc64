package fedavg

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
)

// shift is a toy Model: client c's update adds c's first feature to every
// weight and reports it as the loss.
type shift struct{}

func (shift) NumParams() int { return 2 }

func (shift) Train(c *data.ClientData, start, out []float64, _ Schedule, _ *rand.Rand) (float64, error) {
	for j := range out {
		out[j] = start[j] + c.X[0]
	}
	return c.X[0], nil
}

// The driver replaces the global weights by the size-weighted mean of the
// clients' (all of them when S ≥ N), reports the mean loss over the
// round's clients, evaluates the last EvalLast rounds, and refuses to
// score a model that does not predict.
func TestDriverAveragesAndReports(t *testing.T) {
	clients := []data.ClientData{{X: []float64{1}}, {X: []float64{4}}}
	weights := []float64{1, 2}
	drv := NewDriver(func() (Model[data.ClientData], error) { return shift{}, nil }, 2)
	global := []float64{0, 10}
	var losses []float64
	var evals []int
	p := Plan{Rounds: 3, ClientsPerRound: 5, EvalLast: 2,
		Eval:     func(round int, final bool) error { evals = append(evals, round); return nil },
		Progress: func(e fl.RoundEvent) { losses = append(losses, e.Value) }}
	if _, err := drv.Train(clients, weights, global, p); err != nil {
		t.Fatal(err)
	}
	// Each round adds (1·1 + 2·4)/3 = 3 (within rounding: arm64 fuses the
	// weighted sum's multiply-adds).
	if math.Abs(global[0]-9) > 1e-12 || math.Abs(global[1]-19) > 1e-12 {
		t.Errorf("global %v, want [9 19]", global)
	}
	if len(losses) != 3 || losses[0] != 2.5 || len(evals) != 2 || evals[0] != 2 || evals[1] != 3 {
		t.Errorf("losses %v, evaluated rounds %v", losses, evals)
	}
	if _, err := drv.Train(clients, weights[:1], global, p); err == nil {
		t.Error("2 clients with 1 weight accepted")
	}
	k := drv.RoundClient(&clients[0], ClientSettings[data.ClientData]{
		Test: func(c *data.ClientData) (x, y []float64, classes int) { return c.X, []float64{0}, 2 }})
	_, err := k.Evaluate(fl.EvalTask{}, global)
	if err == nil || !strings.Contains(err.Error(), "does not predict") {
		t.Errorf("scoring a model without Predict: %v", err)
	}
}

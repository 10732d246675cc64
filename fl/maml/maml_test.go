package maml

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl/internal/regnet"
)

func linearClients(rng *rand.Rand, n, m, d int) *data.Dataset {
	ds := &data.Dataset{D: d}
	for i := 0; i < n; i++ {
		var c data.ClientData
		w := make([]float64, d)
		for j := range w {
			w[j] = 1 + 0.3*rng.NormFloat64()
		}
		for r := 0; r < m; r++ {
			var y float64
			for j := 0; j < d; j++ {
				v := rng.NormFloat64()
				c.X = append(c.X, v)
				y += v * w[j]
			}
			c.Y = append(c.Y, y+0.1*rng.NormFloat64())
		}
		c.XTest, c.YTest = c.X, c.Y
		ds.Existing = append(ds.Existing, c)
	}
	return ds
}

// TestOneRoundIsThePerFedAvgStep checks Train against the algorithm box
// computed by hand: one round, one local step, full batches:
// w_i = w − β∇L_i(w − α∇L_i(w)), then the size-weighted mean.
func TestOneRoundIsThePerFedAvgStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ds := linearClients(rng, 3, 6, 2)
	ds.Existing[2].X, ds.Existing[2].Y = ds.Existing[2].X[:8], ds.Existing[2].Y[:4] // sizes 6, 6, 4
	o := Options{Hidden: []int{3}, Alpha: 0.1, Beta: 0.05, Rounds: 1, LocalSteps: 1, PersonalSteps: 1, Seed: 9}
	m, err := Train(ds, o)
	if err != nil {
		t.Fatal(err)
	}
	net, _ := regnet.New(2, []int{3})
	w := make([]float64, net.NumParams())
	net.Init(w, rand.New(rand.NewPCG(9, data.StreamID(0x6d616d6c696e6974))))
	want := make([]float64, len(w))
	g := make([]float64, len(w))
	var total float64
	for _, c := range ds.Existing {
		net.LossGrad(w, c.X, c.Y, g)
		wt := make([]float64, len(w))
		for j := range w {
			wt[j] = w[j] - o.Alpha*g[j]
		}
		net.LossGrad(wt, c.X, c.Y, g)
		mi := float64(c.M())
		for j := range w {
			want[j] += mi * (w[j] - o.Beta*g[j])
		}
		total += mi
	}
	for j := range want {
		if want[j] /= total; math.Abs(m.W[j]-want[j]) > 1e-12 {
			t.Fatalf("w[%d] = %.15g after one round, algorithm box %.15g", j, m.W[j], want[j])
		}
	}
}

func TestTrainingHelps(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ds := linearClients(rng, 6, 30, 3)
	ds.New = linearClients(rng, 2, 10, 3).Existing
	o := Default()
	o.Rounds = 0
	before, err := Run(ds, o)
	if err != nil {
		t.Fatal(err)
	}
	after, err := Run(ds, Default())
	if err != nil {
		t.Fatal(err)
	}
	if !(after.Existing.MeanRSMSE < 0.5*before.Existing.MeanRSMSE) || !(after.New.MeanRSMSE < before.New.MeanRSMSE) {
		t.Errorf("RSMSE existing %.3f → %.3f, new %.3f → %.3f: training did not help", before.Existing.MeanRSMSE,
			after.Existing.MeanRSMSE, before.New.MeanRSMSE, after.New.MeanRSMSE)
	}
	if !math.IsNaN(after.Existing.MeanCE) {
		t.Errorf("a point predictor reported CE %v", after.Existing.MeanCE)
	}
	for _, bad := range []Options{{Alpha: -1, Beta: 1}, {Alpha: 0.1, Beta: 0}, {Alpha: 0.1, Beta: 1, Rounds: -1}} {
		if _, err := Train(ds, bad); err == nil {
			t.Errorf("options %+v accepted", bad)
		}
	}
}

func TestDivergenceIsAnError(t *testing.T) {
	ds := linearClients(rand.New(rand.NewPCG(5, 6)), 3, 20, 3)
	o := Default()
	o.Alpha, o.Beta, o.Rounds = 10, 10, 50
	if _, err := Train(ds, o); err == nil || !strings.Contains(err.Error(), "diverged") {
		t.Errorf("step sizes 10: error %v, want one saying the weights diverged", err)
	}
}

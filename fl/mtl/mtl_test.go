package mtl

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pacpfl/pacpfl/data"
)

func clients(rng *rand.Rand, n, m, d int, spread float64) []data.ClientData {
	var out []data.ClientData
	for i := 0; i < n; i++ {
		var c data.ClientData
		w := make([]float64, d)
		for j := range w {
			w[j] = 1 + spread*rng.NormFloat64()
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
		out = append(out, c)
	}
	return out
}

func TestTrainingHelpsAndPenaltiesAct(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ds := &data.Dataset{D: 3, Existing: clients(rng, 6, 30, 3, 0.5), New: clients(rng, 2, 10, 3, 0.5)}
	o := Default()
	o.Rounds, o.PersonalSteps = 0, 0
	before, err := Run(ds, o)
	if err != nil {
		t.Fatal(err)
	}
	after, err := Run(ds, Default())
	if err != nil {
		t.Fatal(err)
	}
	if !(after.Existing.MeanRSMSE < 0.5*before.Existing.MeanRSMSE) ||
		!(after.New.MeanRSMSE < 0.5*before.New.MeanRSMSE) {
		t.Errorf("RSMSE existing %.3f → %.3f, new %.3f → %.3f", before.Existing.MeanRSMSE, after.Existing.MeanRSMSE,
			before.New.MeanRSMSE, after.New.MeanRSMSE)
	}
	if !math.IsNaN(after.New.MeanCE) {
		t.Errorf("a point predictor reported CE %v", after.New.MeanCE)
	}
	// A huge λ_v pins every client to w₀: personalisation changes nothing.
	o = Default()
	o.LambdaV = 1e9
	m, err := Train(ds, o)
	if err != nil {
		t.Fatal(err)
	}
	w, err := m.Personalise(ds.New[0].X, ds.New[0].Y)
	if err != nil {
		t.Fatal(err)
	}
	// (Adam's normalised steps leave a small oscillation around v = 0.)
	moved := func(w, w0 []float64) (d float64) {
		for j := range w {
			d = math.Max(d, math.Abs(w[j]-w0[j]))
		}
		return d
	}
	if d := moved(w, m.W0); d > 1e-3 {
		t.Errorf("λ_v = 1e9: personal weights moved by up to %v", d)
	}
	o.LambdaV = 0
	m, _ = Train(ds, o)
	w, _ = m.Personalise(ds.New[0].X, ds.New[0].Y)
	if d := moved(w, m.W0); d < 0.05 {
		t.Errorf("λ_v = 0: personal weights moved by only %v", d)
	}
	for _, bad := range []Options{{LambdaV: -1, LR: 1}, {LR: 0}, {LR: 1, Rounds: -1}, {LR: math.Inf(1)}} {
		if _, err := Train(ds, bad); err == nil {
			t.Errorf("options %+v accepted", bad)
		}
	}
}

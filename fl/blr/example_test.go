package blr_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/blr"
)

// makeClients builds n clients whose weights scatter around (1, −2): the
// shared structure the hyper-posterior should find.
func makeClients(rng *rand.Rand, n, m int) []data.ClientData {
	out := make([]data.ClientData, n)
	for i := range out {
		w := []float64{1 + 0.2*rng.NormFloat64(), -2 + 0.2*rng.NormFloat64()}
		gen := func(rows int) (x, y []float64) {
			for j := 0; j < rows; j++ {
				a, b := rng.NormFloat64(), rng.NormFloat64()
				x = append(x, a, b)
				y = append(y, a*w[0]+b*w[1]+0.3*rng.NormFloat64())
			}
			return x, y
		}
		out[i].X, out[i].Y = gen(m)
		out[i].XTest, out[i].YTest = gen(20)
	}
	return out
}

// A model of your own — here Bayesian linear regression — trained by the
// same server as the GP and BNN clients, evaluated with the same metrics,
// and bounded with the same PAC-Bayesian machinery.
func Example() {
	rng := rand.New(rand.NewPCG(1, 2))
	ds := &data.Dataset{Name: "toy", D: 2, Existing: makeClients(rng, 8, 10), New: makeClients(rng, 3, 4)}

	model, _ := blr.New(2, 0.3, 0.5, true) // φ = (μ, ln s²)
	clients := make([]fl.Client, len(ds.Existing))
	for i := range ds.Existing {
		clients[i], _ = model.NewClient(&ds.Existing[i])
	}
	hyper, _ := model.HyperPrior(2)
	cfg := fl.Config{K: 2, Rounds: 1500, LR: 0.05, Tau: 0.2, Seed: 7}
	srv, err := fl.NewServer(cfg, hyper, clients)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := srv.Run()
	if err != nil {
		fmt.Println(err)
		return
	}
	// The particles spread over the hyper-posterior; their mean is close to the
	// shared weights (1, −2) of the clients.
	var mu [2]float64
	for r := 0; r < res.K; r++ {
		mu[0] += res.Particles[r*res.Dim] / float64(res.K)
		mu[1] += res.Particles[r*res.Dim+1] / float64(res.K)
	}
	fmt.Printf("mean of the particles' μ: (%.2f, %.2f)\n", mu[0], mu[1])

	// New clients: condition on their 4 points, predict their test sets.
	preds, _ := model.PredictGroup(res.Particles, res.K, ds.New)
	m, _ := fl.Evaluate(preds, ds.New)
	fmt.Printf("new clients: RSMSE below 0.5: %v\n", m.MeanRSMSE < 0.5)

	// Theorem 4.2 at the Gibbs hyper-posterior, for the NLL clipped to [0, 3].
	bc := fl.BoundConfig{A: 0, B: 3, Delta: 0.05, Beta: 10, Tau: cfg.Tau}
	for _, c := range ds.Existing {
		bc.M = append(bc.M, c.M())
	}
	lzs, _ := fl.EstimateLogZS(hyper, 100, len(ds.Existing), cfg.Tau, model.ClippedLogZ(ds.Existing, 0, 3, 50),
		rand.New(rand.NewPCG(3, 4)))
	b, err := bc.Evaluate(lzs)
	fmt.Println("bounds finite:", err == nil, b.Server > 0, b.NewClient > b.Server)
	// Output:
	// mean of the particles' μ: (0.92, -2.09)
	// new clients: RSMSE below 0.5: true
	// bounds finite: true true true
}

package fl

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pacpfl/pacpfl/data"
)

// CVPoint is one hyper-parameter setting scored by cross-validation.
type CVPoint struct {
	Tau    float64   `json:"tau"`
	SigmaP float64   `json:"sigma_p"`
	RSMSE  float64   `json:"rsmse"`    // mean validation RSMSE over folds
	Folds  []float64 `json:"per_fold"` // per-fold validation RSMSE
}

// CVOptions configure CrossValidate.
type CVOptions struct {
	Taus    []float64 // candidate τ
	SigmaPs []float64 // candidate σ_𝒫
	Folds   int       // K of K-fold over the existing clients
	Seed    uint64    // fold assignment
	// Progress, if set, is called after each training run.
	Progress func(done, total int)
}

// CrossValidate chooses τ and σ_𝒫 as the paper does, by K-fold
// cross-validation on the existing clients' training data only: the clients
// are split into K folds; for each fold and setting, PAC-PFL is trained on
// the other folds' clients, and every held-out client is treated as a new
// client: it conditions on one half of its training samples and is scored
// (RSMSE) on the other half, and the other way round. No test set and no
// new client is touched. Returns every setting's score, best first.
func CrossValidate(ds *data.Dataset, g *GPModel, base PACPFLOptions, o CVOptions) ([]CVPoint, error) {
	if len(o.Taus) == 0 || len(o.SigmaPs) == 0 {
		return nil, errors.New("cv: empty grid")
	}
	folds, err := CVFolds(ds, o.Folds, o.Seed)
	if err != nil {
		return nil, err
	}
	var points []CVPoint
	total, done := len(o.Taus)*len(o.SigmaPs)*o.Folds, 0
	for _, tau := range o.Taus {
		for _, sp := range o.SigmaPs {
			p := CVPoint{Tau: tau, SigmaP: sp}
			for _, fold := range folds {
				train, val := fold.Train, fold.Val
				opt := base
				opt.Server.Tau, opt.SigmaP = tau, sp
				opt.Bounds = BoundOptions{}
				opt.Server.ClientsPerRound = min(len(train.Existing), base.Server.ClientsPerRound)
				if opt.Server.ClientsPerRound == 0 {
					opt.Server.ClientsPerRound = min(len(train.Existing), DefaultClientsPerRound)
				}
				res, gm, err := trainPACPFL(train, g, opt)
				if err != nil {
					return nil, fmt.Errorf("cv: τ=%g σ_P=%g: %w", tau, sp, err)
				}
				preds, err := gm.PredictGroup(res.Particles, val)
				if err != nil {
					return nil, fmt.Errorf("cv: τ=%g σ_P=%g: %w", tau, sp, err)
				}
				m, err := Evaluate(preds, val)
				if err != nil {
					return nil, err
				}
				p.Folds = append(p.Folds, m.MeanRSMSE)
				done++
				if o.Progress != nil {
					o.Progress(done, total)
				}
			}
			p.RSMSE = Mean(p.Folds)
			points = append(points, p)
		}
	}
	sortCV(points)
	return points, nil
}

// CVFold is one fold of K-fold cross-validation over the existing clients:
// the training federation (the other folds' clients) and the validation
// pseudo-clients made from the held-out clients' training data.
type CVFold struct {
	Train *data.Dataset
	Val   []data.ClientData
}

// CVFolds splits the existing clients of ds into k folds (a seeded
// permutation dealt round-robin) as every cross-validation of pacpfl does:
// each held-out client becomes two validation clients, one conditioning on
// the first half of its training samples and scored on the second half, one
// the other way round. No test set and no new client is touched.
func CVFolds(ds *data.Dataset, k int, seed uint64) ([]CVFold, error) {
	n := len(ds.Existing)
	switch {
	case k < 2 || k > n:
		return nil, fmt.Errorf("cv: %d folds for %d clients (want 2 ≤ K ≤ n)", k, n)
	case ds.MinM() < 2:
		return nil, fmt.Errorf("cv: a client with %d training samples cannot be split into context and validation halves", ds.MinM())
	}
	perm := rand.New(rand.NewPCG(seed, data.StreamID(0x6376666f6c64))).Perm(n)
	held := make([][]int, k)
	for r, i := range perm {
		held[r%k] = append(held[r%k], i)
	}
	folds := make([]CVFold, k)
	for f, h := range held {
		folds[f].Train, folds[f].Val = splitClients(ds, h)
	}
	return folds, nil
}

// splitClients returns the training federation (clients not in held) and
// the validation clients: for each held-out client two pseudo-clients, one
// conditioning on the first half of its training samples and scored on the
// second half, one the other way round.
func splitClients(ds *data.Dataset, held []int) (*data.Dataset, []data.ClientData) {
	in := make(map[int]bool, len(held))
	for _, i := range held {
		in[i] = true
	}
	train := &data.Dataset{Name: ds.Name, D: ds.D}
	for i := range ds.Existing {
		if !in[i] {
			train.Existing = append(train.Existing, ds.Existing[i])
		}
	}
	d := ds.D
	var val []data.ClientData
	for _, i := range held {
		c := &ds.Existing[i]
		h := c.M() / 2
		a := data.ClientData{X: c.X[:h*d], Y: c.Y[:h]}
		b := data.ClientData{X: c.X[h*d:], Y: c.Y[h:]}
		val = append(val,
			data.ClientData{X: a.X, Y: a.Y, XTest: b.X, YTest: b.Y},
			data.ClientData{X: b.X, Y: b.Y, XTest: a.X, YTest: a.Y})
	}
	return train, val
}

// sortCV orders by validation RSMSE (NaN last), ties by the grid order.
func sortCV(p []CVPoint) {
	less := func(a, b CVPoint) bool {
		if math.IsNaN(b.RSMSE) {
			return !math.IsNaN(a.RSMSE)
		}
		return a.RSMSE < b.RSMSE
	}
	for i := 1; i < len(p); i++ {
		for j := i; j > 0 && less(p[j], p[j-1]); j-- {
			p[j], p[j-1] = p[j-1], p[j]
		}
	}
}

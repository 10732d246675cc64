package fl

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/pacpfl/pacpfl/data"
)

// CVPoint is one hyper-parameter setting scored by cross-validation.
type CVPoint struct {
	Tau    float64   `json:"tau"`
	SigmaP float64   `json:"sigma_p"`
	LR     float64   `json:"lr"`       // server learning rate η
	Rounds int       `json:"rounds"`   // T: the particles after this round were scored
	RSMSE  float64   `json:"rsmse"`    // mean validation RSMSE over folds
	Folds  []float64 `json:"per_fold"` // per-fold validation RSMSE
}

// CVOptions configure CrossValidate.
type CVOptions struct {
	Taus    []float64 // candidate τ
	SigmaPs []float64 // candidate σ_𝒫
	// LRs are the candidate server learning rates η (empty: the base
	// options' η only).
	LRs []float64
	// Checkpoints are the numbers of rounds T at which the particles are
	// scored (empty: the base options' T only). Each training run lasts
	// max(Checkpoints) rounds and is scored after each checkpoint round, so
	// T is chosen by early stopping at no extra training cost.
	Checkpoints []int
	Folds       int    // K of K-fold over the existing clients
	Seed        uint64 // fold assignment
	// Split is how the validation clients are made (empty: CVHalves).
	Split CVSplit
	// Progress, if set, is called after each training run.
	Progress func(done, total int)
}

// CrossValidate chooses τ and σ_𝒫 as the paper does, by K-fold
// cross-validation on the existing clients' training data only: the clients
// are split into K folds; for each fold and setting, PAC-PFL is trained on
// the other folds' clients, and every held-out client is treated as a new
// client: it conditions on one half of its training samples and is scored
// (RSMSE) on the other half, and the other way round. No test set and no
// new client is touched. Returns every setting's score, best first
// (SortCV); the first setting that fails ends the search.
func CrossValidate(ds *data.Dataset, g *GPModel, base PACPFLOptions, o CVOptions) ([]CVPoint, error) {
	if len(o.Taus) == 0 || len(o.SigmaPs) == 0 {
		return nil, errors.New("cv: empty grid")
	}
	lrs := o.LRs
	if len(lrs) == 0 {
		lrs = []float64{base.Server.LR}
	}
	checks := slices.Clone(o.Checkpoints)
	if len(checks) == 0 {
		checks = []int{base.Server.Rounds}
	}
	slices.Sort(checks)
	checks = slices.Compact(checks)
	if checks[0] < 1 {
		return nil, fmt.Errorf("cv: checkpoint after %d rounds (want at least 1)", checks[0])
	}
	folds, err := CVFoldsBy(ds, o.Folds, o.Seed, o.Split)
	if err != nil {
		return nil, err
	}
	var grid []CVPoint // one per setting (τ, σ_P, η), in grid order
	for _, tau := range o.Taus {
		for _, sp := range o.SigmaPs {
			for _, lr := range lrs {
				grid = append(grid, CVPoint{Tau: tau, SigmaP: sp, LR: lr})
			}
		}
	}
	scores := ScoreGrid(folds, CVGrid{Settings: len(grid), Progress: o.Progress,
		Score: func(i int, fold CVFold) ([]float64, error) {
			return cvFold(fold, g, base, grid[i].Tau, grid[i].SigmaP, grid[i].LR, checks)
		}})
	var points []CVPoint
	for i, sc := range scores {
		p := grid[i]
		if sc.Err != nil {
			return nil, fmt.Errorf("cv: τ=%g σ_P=%g η=%g: %w", p.Tau, p.SigmaP, p.LR, sc.Err)
		}
		for c, t := range checks {
			p.Rounds, p.Folds = t, sc.Folds[c]
			p.RSMSE = Mean(p.Folds)
			points = append(points, p)
		}
	}
	SortCV(points, func(p CVPoint) float64 { return p.RSMSE })
	return points, nil
}

// CVGrid is a hyper-parameter grid for ScoreGrid: Settings settings, each
// trained once per fold by Score.
type CVGrid struct {
	Settings int
	// Score trains setting i on fold.Train and returns the validation
	// RSMSE (on fold.Val) of each of the setting's points: one for most
	// methods, one per checkpoint round for PAC-PFL's single training
	// scored after several rounds. Every call of a setting returns as
	// many.
	Score func(i int, fold CVFold) ([]float64, error)
	// KeepGoing makes a failed setting a result of the search (its
	// CVScore.Err set, its remaining folds skipped) rather than its end.
	KeepGoing bool
	// Progress, if set, is called after each training run (setting and
	// fold).
	Progress func(done, total int)
}

// CVScore is one setting's cross-validation: Folds[p][f] is the
// validation RSMSE of its point p on fold f; Err the error that stopped
// it (Folds then holds the folds before it).
type CVScore struct {
	Folds [][]float64
	Err   error
}

// ScoreGrid is pacpfl's one cross-validation loop (CrossValidate's and
// methods.CrossValidateGrid's): it scores every setting of g on every
// fold, setting by setting in order, and returns one CVScore per setting.
// Without g.KeepGoing it stops after the first failed setting, whose score
// is the last returned.
func ScoreGrid(folds []CVFold, g CVGrid) []CVScore {
	var out []CVScore
	total, done := g.Settings*len(folds), 0
	for i := range g.Settings {
		var sc CVScore
		for _, fold := range folds {
			s, err := g.Score(i, fold)
			if err != nil {
				sc.Err = err
				break
			}
			if sc.Folds == nil {
				sc.Folds = make([][]float64, len(s))
			}
			for p, v := range s {
				sc.Folds[p] = append(sc.Folds[p], v)
			}
			done++
			if g.Progress != nil {
				g.Progress(done, total)
			}
		}
		out = append(out, sc)
		if sc.Err != nil && !g.KeepGoing {
			break
		}
	}
	return out
}

// cvFold trains PAC-PFL on one fold's federation for the last checkpoint's
// number of rounds and returns the validation RSMSE of the particles after
// each checkpoint round.
func cvFold(fold CVFold, g *GPModel, base PACPFLOptions, tau, sp, lr float64, checks []int) ([]float64, error) {
	train, val := fold.Train, fold.Val
	opt := base
	opt.Server.Tau, opt.SigmaP, opt.Server.LR = tau, sp, lr
	opt.Server.Rounds = checks[len(checks)-1]
	opt.Bounds = BoundOptions{}
	opt.Server.ClientsPerRound = min(len(train.Existing), base.Server.ClientsPerRound)
	if opt.Server.ClientsPerRound == 0 {
		opt.Server.ClientsPerRound = min(len(train.Existing), DefaultClientsPerRound)
	}
	// The client model prediction uses: trainPACPFL's, built the same way.
	gm := &GPModel{Model: g.Model, LiteralBatch: g.LiteralBatch, FreezeMean: g.FreezeMean || opt.ZeroMean,
		Beta: opt.Beta, Inference: g.Inference}
	scores := make([]float64, 0, len(checks))
	score := func(particles []float64) error {
		preds, err := gm.PredictGroup(particles, val)
		if err != nil {
			return err
		}
		m, err := Evaluate(preds, val)
		if err != nil {
			return err
		}
		scores = append(scores, m.MeanRSMSE)
		return nil
	}
	after := base.Server.AfterRound
	opt.Server.AfterRound = func(s *Server, round int) error {
		if after != nil {
			if err := after(s, round); err != nil {
				return err
			}
		}
		if next := len(scores); next < len(checks)-1 && round == checks[next] {
			st, err := s.State()
			if err != nil {
				return err
			}
			if err := score(st.Particles); err != nil {
				return fmt.Errorf("after %d rounds: %w", round, err)
			}
		}
		return nil
	}
	res, _, err := trainPACPFL(train, g, opt)
	if err != nil {
		return nil, err
	}
	if err := score(res.Particles); err != nil {
		return nil, err
	}
	return scores, nil
}

// CVFold is one fold of K-fold cross-validation over the existing clients:
// the training federation (the other folds' clients) and the validation
// pseudo-clients made from the held-out clients' training data.
type CVFold struct {
	Train *data.Dataset
	Val   []data.ClientData
}

// CVSplit is how cross-validation makes its validation clients from the
// held-out clients' training samples S_i.
type CVSplit string

const (
	// CVHalves (the default): the other folds' clients train on all of
	// their S_i; each held-out client becomes two validation clients, one
	// conditioning on the first half of S_i and scored on the second, one
	// the other way round.
	CVHalves CVSplit = "halves"
	// CVFuture is for time series whose clients share one time line (the
	// PV houses of a city share its weather): every S_i, in time order, is
	// cut at its middle; the other folds' clients train on their first
	// halves only, and each held-out client conditions on its first half
	// and is scored on its second — hours that no client of the training
	// federation saw, as the test period was not seen. With CVHalves the
	// server has learnt the very hours (the same weather) that the
	// held-out clients are scored on, which flatters models that memorise
	// them.
	CVFuture CVSplit = "future"
)

// ParseCVSplit parses "halves" or "future" ("" is halves).
func ParseCVSplit(s string) (CVSplit, error) {
	switch CVSplit(s) {
	case "", CVHalves:
		return CVHalves, nil
	case CVFuture:
		return CVFuture, nil
	}
	return "", fmt.Errorf("cv: unknown split %q (want halves or future)", s)
}

// CVFolds splits the existing clients of ds into k folds (a seeded
// permutation dealt round-robin) as every cross-validation of pacpfl does:
// each held-out client becomes two validation clients, one conditioning on
// the first half of its training samples and scored on the second half, one
// the other way round. No test set and no new client is touched.
func CVFolds(ds *data.Dataset, k int, seed uint64) ([]CVFold, error) {
	return CVFoldsBy(ds, k, seed, CVHalves)
}

// CVFoldsBy is CVFolds with the validation clients made by split; the
// folds (which clients are held out) do not depend on it.
func CVFoldsBy(ds *data.Dataset, k int, seed uint64, split CVSplit) ([]CVFold, error) {
	n := len(ds.Existing)
	split, err := ParseCVSplit(string(split))
	if err != nil {
		return nil, err
	}
	switch {
	case k < 2 || k > n:
		return nil, fmt.Errorf("cv: %d folds for %d clients (want 2 ≤ K ≤ n)", k, n)
	case ds.MinM() < 2:
		return nil, fmt.Errorf(
			"cv: a client with %d training samples cannot be split into context and validation halves", ds.MinM())
	}
	perm := rand.New(rand.NewPCG(seed, data.StreamID(0x6376666f6c64))).Perm(n)
	held := make([][]int, k)
	for r, i := range perm {
		held[r%k] = append(held[r%k], i)
	}
	folds := make([]CVFold, k)
	for f, h := range held {
		folds[f].Train, folds[f].Val = splitClients(ds, h, split)
	}
	return folds, nil
}

// splitClients returns the training federation (clients not in held) and
// the validation clients made from each held-out client's S_i, cut at its
// middle into halves a and b:
//   - CVHalves: the training clients keep all of S_i; each held-out client
//     becomes two pseudo-clients, one conditioning on a and scored on b,
//     one the other way round;
//   - CVFuture: the training clients keep only a (the earlier half in
//     time); each held-out client conditions on a and is scored on b.
func splitClients(ds *data.Dataset, held []int, split CVSplit) (*data.Dataset, []data.ClientData) {
	in := make(map[int]bool, len(held))
	for _, i := range held {
		in[i] = true
	}
	d := ds.D
	halves := func(c *data.ClientData) (a, b data.ClientData) {
		h := c.M() / 2
		return data.ClientData{X: c.X[:h*d], Y: c.Y[:h]}, data.ClientData{X: c.X[h*d:], Y: c.Y[h:]}
	}
	train := &data.Dataset{Name: ds.Name, D: d}
	for i := range ds.Existing {
		switch {
		case in[i]:
		case split == CVFuture:
			a, _ := halves(&ds.Existing[i])
			a.Mode = ds.Existing[i].Mode
			train.Existing = append(train.Existing, a)
		default:
			train.Existing = append(train.Existing, ds.Existing[i])
		}
	}
	var val []data.ClientData
	for _, i := range held {
		a, b := halves(&ds.Existing[i])
		val = append(val, data.ClientData{X: a.X, Y: a.Y, XTest: b.X, YTest: b.Y})
		if split != CVFuture {
			val = append(val, data.ClientData{X: b.X, Y: b.Y, XTest: a.X, YTest: a.Y})
		}
	}
	return train, val
}

// SortCV orders cross-validation points by their validation RSMSE,
// smallest first (+Inf, a failed setting, after every finite score, NaN
// last), ties in their order: the order of every tuning report.
func SortCV[P any](p []P, rsmse func(P) float64) {
	less := func(a, b float64) bool {
		if math.IsNaN(b) {
			return !math.IsNaN(a)
		}
		return a < b
	}
	for i := 1; i < len(p); i++ {
		for j := i; j > 0 && less(rsmse(p[j]), rsmse(p[j-1])); j-- {
			p[j], p[j-1] = p[j-1], p[j]
		}
	}
}

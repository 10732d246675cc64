package methods

import (
	"fmt"
	"math"
	"slices"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/maml"
	"github.com/pacpfl/pacpfl/fl/mtl"
)

// Setting is one point of a hyper-parameter grid: its values by name and
// the validation metrics of one cross-validation fold.
type Setting struct {
	Values map[string]float64
	Score  func(fold fl.CVFold) (fl.GroupMetrics, error)
}

// GridPoint is a Setting scored by cross-validation.
type GridPoint struct {
	Setting map[string]float64 `json:"setting"`
	RSMSE   float64            `json:"rsmse"`    // mean validation RSMSE over the folds; +Inf if it failed
	Folds   []float64          `json:"per_fold"` // per-fold validation RSMSE
	Failed  string             `json:"failed,omitempty"`
}

// CrossValidateGrid scores every setting on every fold (fl.CVFoldsBy: the
// existing clients' training data only) with fl.ScoreGrid and returns the
// points best first, ties in grid order (fl.SortCV). A setting whose
// training or prediction fails (NaN weights, a singular fit) is a result
// of the search, not a failure of it: it scores +Inf with the first
// failing fold's error.
func CrossValidateGrid(folds []fl.CVFold, grid []Setting) []GridPoint {
	scores := fl.ScoreGrid(folds, fl.CVGrid{Settings: len(grid), KeepGoing: true,
		Score: func(i int, fold fl.CVFold) ([]float64, error) {
			m, err := grid[i].Score(fold)
			return []float64{m.MeanRSMSE}, err
		}})
	pts := make([]GridPoint, 0, len(grid))
	for i, sc := range scores {
		p := GridPoint{Setting: grid[i].Values}
		if len(sc.Folds) > 0 {
			p.Folds = sc.Folds[0]
		}
		p.RSMSE = fl.Mean(p.Folds)
		if sc.Err != nil {
			p.Failed, p.RSMSE = sc.Err.Error(), math.Inf(1)
		}
		pts = append(pts, p)
	}
	fl.SortCV(pts, func(p GridPoint) float64 { return p.RSMSE })
	return pts
}

// The grids the baselines' defaults were chosen on (docs/math.md, "PV
// defaults by cross-validation").
var (
	tuneMTLLambdaVs = []float64{1e-3, 1e-2, 3e-2, 1e-1, 0.3, 1}
	tuneMTLLRs      = []float64{3e-3, 1e-2, 3e-2}
	tuneMAMLAlphas  = []float64{0.01, 0.03, 0.1}
	tuneMAMLBetas   = []float64{0.003, 0.01, 0.03, 0.1}
	tuneFitSteps    = []int{300, 1000, 3000, 6000}
	tuneFitLRs      = []float64{3e-3, 1e-2}
)

// DefaultPACPFLGrid is the grid of server temperatures τ and hyper-prior
// stds σ_P PAC-PFL's defaults were chosen on: σ_P on the paper's grid, τ
// on a log scale below the largest value that keeps the new-client bound
// finite.
func DefaultPACPFLGrid() (taus, sigmaPs []float64) {
	return []float64{0.05, 0.1, 0.2, 0.5}, []float64{0.1, 0.25, 0.5, 1}
}

// TuneSeed is the seed of the data tuning draws unless told otherwise:
// the data of the reported tables start at seed 1, and the defaults were
// chosen on data none of them uses.
const TuneSeed = 1000

// DefaultFitGrid is the grid of Adam steps and step sizes of Vanilla's and
// Pooled's LML fits their defaults were chosen on.
func DefaultFitGrid() (steps []int, lrs []float64) {
	return slices.Clone(tuneFitSteps), slices.Clone(tuneFitLRs)
}

// BaselineGrid is the cross-validation grid of a baseline: MTL's (λ_v,
// learning rate) and MAML's (α, β) on the grids their defaults were chosen
// on; Vanilla's and Pooled's (Adam steps, step size) on fitSteps × fitLRs
// with the client model g (nil: fl.NewGPModel). Vanilla fits each held-out
// pseudo-client on its context half alone; Pooled fits the pooled GP on
// the fold's training clients and predicts the held-out halves from those
// points. Every fit draws from seed's streams.
func BaselineGrid(method string, g GPModel, d int, seed uint64, fitSteps []int, fitLRs []float64) ([]Setting, error) {
	var grid []Setting
	point := func(fit func(train *data.Dataset) (fl.PointFit, error)) func(fl.CVFold) (fl.GroupMetrics, error) {
		return func(fold fl.CVFold) (fl.GroupMetrics, error) {
			f, err := fit(fold.Train)
			if err != nil {
				return fl.GroupMetrics{}, err
			}
			return fl.EvaluatePointGroup(fold.Val, f)
		}
	}
	switch method {
	case MTL{}.Name():
		for _, lv := range tuneMTLLambdaVs {
			for _, lr := range tuneMTLLRs {
				o := mtl.Default()
				o.LambdaV, o.LR, o.Seed = lv, lr, seed
				grid = append(grid, Setting{Values: map[string]float64{"lambda_v": lv, "lr": lr},
					Score: point(func(train *data.Dataset) (fl.PointFit, error) {
						m, err := mtl.Train(train, o)
						if err != nil {
							return nil, err
						}
						return m.Fit, nil
					})})
			}
		}
	case MAML{}.Name():
		for _, a := range tuneMAMLAlphas {
			for _, b := range tuneMAMLBetas {
				o := maml.Default()
				o.Alpha, o.Beta, o.Seed = a, b, seed
				grid = append(grid, Setting{Values: map[string]float64{"alpha": a, "beta": b},
					Score: point(func(train *data.Dataset) (fl.PointFit, error) {
						m, err := maml.Train(train, o)
						if err != nil {
							return nil, err
						}
						return m.Fit, nil
					})})
			}
		}
	case fl.MethodVanilla, fl.MethodPooled:
		if len(fitSteps) == 0 || len(fitLRs) == 0 {
			return nil,
				fmt.Errorf("methods: an empty grid of fit steps (%d) or step sizes (%d)", len(fitSteps), len(fitLRs))
		}
		gm := g.make(d)
		for _, steps := range fitSteps {
			for _, lr := range fitLRs {
				vals := map[string]float64{"steps": float64(steps), "lr": lr}
				if method == fl.MethodVanilla {
					o := fl.DefaultVanillaOptions()
					o.Steps, o.LR, o.Seed = steps, lr, seed
					grid = append(grid, Setting{Values: vals, Score: func(fold fl.CVFold) (fl.GroupMetrics, error) {
						return fl.VanillaGroup(gm, fold.Val, o, 0)
					}})
					continue
				}
				o := fl.DefaultPooledOptions()
				o.Steps, o.LR, o.Seed = steps, lr, seed
				grid = append(grid, Setting{Values: vals, Score: func(fold fl.CVFold) (fl.GroupMetrics, error) {
					p, err := fl.FitPooled(gm, fold.Train.Existing, fold.Train.D, o)
					if err != nil {
						return fl.GroupMetrics{}, err
					}
					return p.Evaluate(fold.Val)
				}})
			}
		}
	default:
		return nil, fmt.Errorf("methods: no baseline grid for %q (mtl, maml, vanilla or pooled)", method)
	}
	return grid, nil
}

// TuneBaseline cross-validates a baseline (mtl, maml, vanilla, pooled) on
// the existing clients' training data of ds: K = folds folds of
// fl.CVFoldsBy with seed and split, the grid of BaselineGrid. The points
// come best first (CrossValidateGrid).
func TuneBaseline(ds *data.Dataset, method string, g GPModel, fitSteps []int, fitLRs []float64, folds int, seed uint64,
	split fl.CVSplit) ([]GridPoint, error) {
	fs, err := fl.CVFoldsBy(ds, folds, seed, split)
	if err != nil {
		return nil, err
	}
	grid, err := BaselineGrid(method, g, ds.D, seed, fitSteps, fitLRs)
	if err != nil {
		return nil, err
	}
	return CrossValidateGrid(fs, grid), nil
}

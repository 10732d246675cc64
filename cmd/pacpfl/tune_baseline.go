package main

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/maml"
	"github.com/pacpfl/pacpfl/fl/mtl"
)

// baselinePoint is one hyper-parameter setting of MTL or MAML scored by
// cross-validation.
type baselinePoint struct {
	Setting map[string]float64 `json:"setting"`
	RSMSE   float64            `json:"rsmse"` // +Inf (JSON null) when the setting failed
	Folds   []float64          `json:"per_fold"`
	Failed  string             `json:"failed,omitempty"` // why training or prediction failed
}

// The grids the MTL and MAML defaults were chosen on (docs/math.md).
var (
	tuneMTLLambdaVs = []float64{1e-3, 1e-2, 3e-2, 1e-1, 0.3, 1}
	tuneMTLLRs      = []float64{3e-3, 1e-2, 3e-2}
	tuneMAMLAlphas  = []float64{0.01, 0.03, 0.1}
	tuneMAMLBetas   = []float64{0.003, 0.01, 0.03, 0.1}
	// Vanilla and Pooled: Adam steps and step size of the LML fits (the
	// defaults of --fit-steps and --fit-lrs).
	tuneGPSteps = []int{300, 1000, 3000, 6000}
	tuneGPLRs   = []float64{3e-3, 1e-2}
)

// runTuneBaseline chooses MTL's (λ_v, learning rate), MAML's (α, β) or the
// Adam steps and step size of Vanilla's and Pooled's LML fits by K-fold
// cross-validation on the existing clients' training data only (the folds
// of fl.CVFolds, as for PAC-PFL). Vanilla fits each held-out pseudo-client
// on its context half alone; Pooled fits the pooled GP on the fold's
// training clients and predicts the held-out halves from those points.
func runTuneBaseline(method string, ds *data.Dataset, g *fl.GPModel, fitSteps []int, fitLRs []float64, key string, k int, seed uint64, split fl.CVSplit, jsonPath string, stdout, stderr io.Writer) int {
	folds, err := fl.CVFoldsBy(ds, k, seed, split)
	if err != nil {
		return fail(stderr, "tune", usageError{err})
	}
	type setting struct {
		vals  map[string]float64
		fit   func(train *data.Dataset) (fl.PointFit, error)
		score func(fold fl.CVFold) (fl.GroupMetrics, error) // instead of fit
	}
	var grid []setting
	switch method {
	case methodMTL:
		for _, lv := range tuneMTLLambdaVs {
			for _, lr := range tuneMTLLRs {
				o := mtl.Default()
				o.LambdaV, o.LR, o.Seed = lv, lr, seed
				grid = append(grid, setting{vals: map[string]float64{"lambda_v": lv, "lr": lr}, fit: func(train *data.Dataset) (fl.PointFit, error) {
					m, err := mtl.Train(train, o)
					if err != nil {
						return nil, err
					}
					return m.Fit, nil
				}})
			}
		}
	case methodMAML:
		for _, a := range tuneMAMLAlphas {
			for _, b := range tuneMAMLBetas {
				o := maml.Default()
				o.Alpha, o.Beta, o.Seed = a, b, seed
				grid = append(grid, setting{vals: map[string]float64{"alpha": a, "beta": b}, fit: func(train *data.Dataset) (fl.PointFit, error) {
					m, err := maml.Train(train, o)
					if err != nil {
						return nil, err
					}
					return m.Fit, nil
				}})
			}
		}
	case fl.MethodVanilla, fl.MethodPooled:
		for _, steps := range fitSteps {
			for _, lr := range fitLRs {
				vals := map[string]float64{"steps": float64(steps), "lr": lr}
				if method == fl.MethodVanilla {
					o := fl.DefaultVanillaOptions()
					o.Steps, o.LR, o.Seed = steps, lr, seed
					grid = append(grid, setting{vals: vals, score: func(fold fl.CVFold) (fl.GroupMetrics, error) {
						return fl.VanillaGroup(g, fold.Val, o, 0)
					}})
					continue
				}
				o := fl.DefaultPooledOptions()
				o.Steps, o.LR, o.Seed = steps, lr, seed
				grid = append(grid, setting{vals: vals, score: func(fold fl.CVFold) (fl.GroupMetrics, error) {
					p, err := fl.FitPooled(g, fold.Train.Existing, fold.Train.D, o)
					if err != nil {
						return fl.GroupMetrics{}, err
					}
					return p.Evaluate(fold.Val)
				}})
			}
		}
	}
	start := time.Now()
	var pts []baselinePoint
	for _, st := range grid {
		p := baselinePoint{Setting: st.vals}
		for _, fold := range folds {
			// A setting whose training diverges (NaN weights or
			// predictions) is a result of the search, not a failure of it.
			var m fl.GroupMetrics
			var err error
			if st.score != nil {
				m, err = st.score(fold)
			} else {
				var fit fl.PointFit
				if fit, err = st.fit(fold.Train); err == nil {
					m, err = fl.EvaluatePointGroup(fold.Val, fit)
				}
			}
			if err != nil {
				p.Failed = err.Error()
				break
			}
			p.Folds = append(p.Folds, m.MeanRSMSE)
		}
		p.RSMSE = fl.Mean(p.Folds)
		if p.Failed != "" {
			p.RSMSE = math.Inf(1)
		}
		pts = append(pts, p)
	}
	if math.IsInf(pts[0].RSMSE, 1) && len(pts) == 1 {
		return fail(stderr, "tune", fmt.Errorf("every setting failed: %s", pts[0].Failed))
	}
	sort.SliceStable(pts, func(a, b int) bool { return pts[a].RSMSE < pts[b].RSMSE })
	stdout, jsonOut := reportStreams(jsonPath, stdout, stderr)
	fmt.Fprintf(stdout, "%s %d-fold cross-validation on %s seed %d (%d existing clients, training data only; %s)\n\n",
		methodLabel(method), k, datasetTitle(key), seed, len(ds.Existing), cvSplitText(split))
	fmt.Fprintln(stdout, "| setting | validation RSMSE | per fold |")
	fmt.Fprintln(stdout, "|---|---|---|")
	for _, p := range pts {
		fs := make([]string, len(p.Folds))
		for i, v := range p.Folds {
			fs[i] = fmt.Sprintf("%.3f", v)
		}
		if p.Failed != "" {
			fmt.Fprintf(stdout, "| %s | failed | %s |\n", fmtSetting(p.Setting), p.Failed)
			continue
		}
		fmt.Fprintf(stdout, "| %s | %.4f | %s |\n", fmtSetting(p.Setting), p.RSMSE, strings.Join(fs, " "))
	}
	if pts[0].Failed != "" {
		return fail(stderr, "tune", fmt.Errorf("every setting failed; the first: %s", pts[0].Failed))
	}
	fmt.Fprintf(stdout, "\nbest: %s (wall time %.0fs)\n", fmtSetting(pts[0].Setting), time.Since(start).Seconds())
	if jsonPath != "" {
		rep := struct {
			Dataset string          `json:"dataset"`
			Method  string          `json:"method"`
			Seed    uint64          `json:"seed"`
			Folds   int             `json:"folds"`
			Split   fl.CVSplit      `json:"cv_split"`
			Points  []baselinePoint `json:"points"`
			Best    baselinePoint   `json:"best"`
		}{key, method, seed, k, split, pts, pts[0]}
		if err := writeJSON(jsonOut, jsonPath, rep); err != nil {
			return fail(stderr, "tune", err)
		}
	}
	return exitOK
}

func fmtSetting(s map[string]float64) string {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%g", k, s[k])
	}
	return strings.Join(parts, " ")
}

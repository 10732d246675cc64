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
	"github.com/pacpfl/pacpfl/methods"
)

// runTuneBaseline chooses MTL's (λ_v, learning rate), MAML's (α, β) or the
// Adam steps and step size of Vanilla's and Pooled's LML fits by K-fold
// cross-validation on the existing clients' training data only (the folds
// of fl.CVFolds, as for PAC-PFL; methods.BaselineGrid).
func runTuneBaseline(method string, ds *data.Dataset, g *fl.GPModel, fitSteps []int, fitLRs []float64, key string, k int, seed uint64, split fl.CVSplit, jsonPath string, stdout, stderr io.Writer) int {
	folds, err := fl.CVFoldsBy(ds, k, seed, split)
	if err != nil {
		return fail(stderr, "tune", usageError{err})
	}
	grid, err := methods.BaselineGrid(method, func(int) *fl.GPModel { return g }, ds.D, seed, fitSteps, fitLRs)
	if err != nil {
		return fail(stderr, "tune", usageError{err})
	}
	start := time.Now()
	pts := methods.CrossValidateGrid(folds, grid)
	if math.IsInf(pts[0].RSMSE, 1) && len(pts) == 1 {
		return fail(stderr, "tune", fmt.Errorf("every setting failed: %s", pts[0].Failed))
	}
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
			Dataset string              `json:"dataset"`
			Method  string              `json:"method"`
			Seed    uint64              `json:"seed"`
			Folds   int                 `json:"folds"`
			Split   fl.CVSplit          `json:"cv_split"`
			Points  []methods.GridPoint `json:"points"`
			Best    methods.GridPoint   `json:"best"`
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

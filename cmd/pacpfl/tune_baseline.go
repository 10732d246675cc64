package main

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/methods"
	"github.com/pacpfl/pacpfl/report"
)

// runTuneBaseline chooses MTL's (λ_v, learning rate), MAML's (α, β) or the
// Adam steps and step size of Vanilla's and Pooled's LML fits by K-fold
// cross-validation on the existing clients' training data only
// (methods.TuneBaseline).
func runTuneBaseline(method string, ds *data.Dataset, g *fl.GPModel, fitSteps []int, fitLRs []float64, key string, k int, seed uint64, split fl.CVSplit, jsonPath string, stdout, stderr io.Writer) int {
	start := time.Now()
	pts, err := methods.TuneBaseline(ds, method, func(int) *fl.GPModel { return g }, fitSteps, fitLRs, k, seed, split)
	if err != nil {
		return fail(stderr, "tune", usageError{err})
	}
	if math.IsInf(pts[0].RSMSE, 1) && len(pts) == 1 {
		return fail(stderr, "tune", fmt.Errorf("every setting failed: %s", pts[0].Failed))
	}
	stdout, jsonOut := reportStreams(jsonPath, stdout, stderr)
	rep := report.TuneBaseline{Dataset: key, Method: method, Seed: seed, Folds: k, Split: split, Points: pts, Best: pts[0],
		Clients: len(ds.Existing), Seconds: time.Since(start).Seconds()}
	rep.WriteText(stdout)
	if pts[0].Failed != "" {
		return fail(stderr, "tune", fmt.Errorf("every setting failed; the first: %s", pts[0].Failed))
	}
	if jsonPath != "" {
		if err := writeJSON(jsonOut, jsonPath, rep); err != nil {
			return fail(stderr, "tune", err)
		}
	}
	return exitOK
}

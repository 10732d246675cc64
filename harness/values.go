package harness

import (
	"math"

	"github.com/pacpfl/pacpfl/fl"
)

// Metric keys of SeedValues and ClientValues: a group (existing, new,
// global) and a metric, joined by "_". Regression results give the RSMSE
// and the calibration error (CE) of the existing and the new clients;
// classification results their accuracy (%) and CE, and the global model's
// where the method has one.
const (
	ExistingRSMSE    = "existing_rsmse"
	ExistingCE       = "existing_ce"
	NewRSMSE         = "new_rsmse"
	NewCE            = "new_ce"
	ExistingAccuracy = "existing_accuracy"
	NewAccuracy      = "new_accuracy"
	GlobalAccuracy   = "global_accuracy"
	GlobalCE         = "global_ce"
	// The best mean accuracy over a window of rounds (fl.BestAccuracy).
	BestExisting = "best_existing"
	BestGlobal   = "best_global"
	// A mixture's mode specialisation (fl.ModeSpecialisation) per group, and
	// its chance level.
	ExistingModePurity = "existing_mode_purity"
	NewModePurity      = "new_mode_purity"
	ExistingModeChance = "existing_mode_chance"
	NewModeChance      = "new_mode_chance"
)

// Classification reports whether res is a classification result: one
// with personalised models' or only a global model's metrics (FedAvg).
func Classification(res *fl.MethodResult) bool {
	return res.ExistingClass != nil || res.NewClass != nil || res.GlobalClass != nil
}

// SeedValues returns the group averages of one result by metric key: for
// regression the RSMSE and CE of the existing and the new clients and, when
// the method predicts with a mixture of at least two priors and the data's
// modes are known, the mode specialisation of both groups; for
// classification the accuracy and CE of both groups (NaN for a group the
// result lacks), of the global model and the best accuracies where the
// method has them.
func SeedValues(res *fl.MethodResult) map[string]float64 {
	if Classification(res) {
		v := map[string]float64{}
		put := func(acc, ce string, g *fl.ClassGroupMetrics) {
			v[acc], v[ce] = math.NaN(), math.NaN()
			if g != nil {
				v[acc], v[ce] = g.MeanAccuracy, g.MeanCE
			}
		}
		put(ExistingAccuracy, ExistingCE, res.ExistingClass)
		put(NewAccuracy, NewCE, res.NewClass)
		if res.GlobalClass != nil {
			put(GlobalAccuracy, GlobalCE, res.GlobalClass)
		}
		if b := res.Best; b != nil {
			if b.Existing != nil {
				v[BestExisting] = *b.Existing
			}
			if b.Global != nil {
				v[BestGlobal] = *b.Global
			}
		}
		return v
	}
	v := map[string]float64{
		ExistingRSMSE: res.Existing.MeanRSMSE, ExistingCE: res.Existing.MeanCE,
		NewRSMSE: res.New.MeanRSMSE, NewCE: res.New.MeanCE,
	}
	ex, nw := res.Existing.Modes, res.New.Modes
	if ex != nil && nw != nil && len(res.Existing.Weights) > 0 && len(res.Existing.Weights[0]) >= 2 {
		v[ExistingModePurity], v[NewModePurity] = ex.Purity, nw.Purity
		v[ExistingModeChance], v[NewModeChance] = ex.Chance, nw.Chance
	}
	return v
}

// ClientValues returns the per-client values of one result by metric key,
// in client order (NaN where a client's metric is undefined, such as the
// CE of a point predictor): the RSMSE and CE of both groups for regression,
// their accuracy and CE for classification (empty for a group the result
// lacks). The keys do not depend on the result beyond its kind.
func ClientValues(res *fl.MethodResult) map[string][]float64 {
	nonNil := func(xs []float64) []float64 {
		if xs == nil {
			return []float64{}
		}
		return xs
	}
	if Classification(res) {
		var ex, nw fl.ClassGroupMetrics
		if res.ExistingClass != nil {
			ex = *res.ExistingClass
		}
		if res.NewClass != nil {
			nw = *res.NewClass
		}
		return map[string][]float64{
			ExistingAccuracy: nonNil(ex.Accuracy), ExistingCE: nonNil(ex.CE),
			NewAccuracy: nonNil(nw.Accuracy), NewCE: nonNil(nw.CE),
		}
	}
	return map[string][]float64{
		ExistingRSMSE: nonNil(res.Existing.RSMSE), ExistingCE: nonNil(res.Existing.CE),
		NewRSMSE: nonNil(res.New.RSMSE), NewCE: nonNil(res.New.CE),
	}
}

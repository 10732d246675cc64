package fl

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/pacpfl/pacpfl/data"
)

// CELevels is H, the number of calibration levels of eq. (41).
const CELevels = 20

// RSMSE is the root mean squared error of pred against y divided by the
// population standard deviation of y (SPEC §8). It is scale-free.
func RSMSE(pred, y []float64) (float64, error) {
	if len(pred) != len(y) {
		return 0, fmt.Errorf("rsmse: %d predictions for %d targets", len(pred), len(y))
	}
	if len(y) == 0 {
		return 0, errors.New("rsmse: no test points")
	}
	var mean float64
	for _, v := range y {
		mean += v
	}
	mean /= float64(len(y))
	var se, sv float64
	for i, v := range y {
		d := pred[i] - v
		se += d * d
		sv += (v - mean) * (v - mean)
	}
	if sv == 0 {
		return 0, errors.New("rsmse: test targets have zero variance")
	}
	r := math.Sqrt(se / sv) // the 1/m factors cancel
	if math.IsNaN(r) {
		return 0, errors.New("rsmse: NaN in predictions or targets")
	}
	return r, nil
}

// CalibrationError is eq. (41): cdf[j] = F̂(y_j | x_j) is the predictive CDF
// evaluated at the true target; with q_h = h/H, h = 1..H,
// q̂_h = |{j : cdf[j] ≤ q_h}|/m and CE = (1/H) Σ_h |q̂_h − q_h|.
func CalibrationError(cdf []float64) (float64, error) {
	if len(cdf) == 0 {
		return 0, errors.New("calibration error: no test points")
	}
	var counts [CELevels + 1]int // counts[h] = #{j : cdf ∈ (q_{h-1}, q_h]}
	for _, p := range cdf {
		if !(p >= 0 && p <= 1) {
			return 0, fmt.Errorf("calibration error: CDF value %v outside [0,1]", p)
		}
		h := int(math.Ceil(p * CELevels))
		// Guard the rounding of p·H: the defining test is p ≤ h/H.
		for h > 0 && p <= float64(h-1)/CELevels {
			h--
		}
		for h < CELevels && p > float64(h)/CELevels {
			h++
		}
		counts[h]++
	}
	m := float64(len(cdf))
	ce, cum := 0.0, 0
	for h := 1; h <= CELevels; h++ {
		if h == 1 {
			cum = counts[0]
		}
		cum += counts[h]
		q := float64(h) / CELevels
		ce += math.Abs(float64(cum)/m - q)
	}
	return ce / CELevels, nil
}

// Summary is the mean of a sample and the half-width of its 95% confidence
// interval (Student t with n−1 degrees of freedom; 0 for n = 1).
type Summary struct {
	Mean float64 `json:"mean"`
	CI95 float64 `json:"ci95"`
}

// Summarise returns the mean ± 95% CI half-width t_{0.975,n−1}·s/√n.
func Summarise(xs []float64) Summary {
	n := len(xs)
	if n == 0 {
		return Summary{Mean: math.NaN(), CI95: math.NaN()}
	}
	mean := Mean(xs)
	if n == 1 {
		return Summary{Mean: mean}
	}
	var ss float64
	for _, v := range xs {
		ss += (v - mean) * (v - mean)
	}
	s := math.Sqrt(ss / float64(n-1))
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(0.975)
	return Summary{Mean: mean, CI95: t * s / math.Sqrt(float64(n))}
}

// Mean is the arithmetic mean (NaN for an empty slice).
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, v := range xs {
		s += v
	}
	return s / float64(len(xs))
}

// GroupMetrics are the per-client metrics of one group of clients and their
// averages.
type GroupMetrics struct {
	RSMSE     []float64 `json:"rsmse_per_client"`
	CE        []float64 `json:"ce_per_client"`
	MeanRSMSE float64   `json:"rsmse"`
	MeanCE    float64   `json:"ce"`
}

// Prediction is a predictive distribution evaluated on a client's test set:
// the mean per test point (for RSMSE) and the CDF at the true target (for CE).
type Prediction struct {
	Mean   []float64
	CDFAtY []float64
}

// Evaluate computes the per-client metrics of a group and their averages.
func Evaluate(preds []Prediction, clients []data.ClientData) (GroupMetrics, error) {
	if len(preds) != len(clients) {
		return GroupMetrics{}, fmt.Errorf("evaluate: %d predictions for %d clients", len(preds), len(clients))
	}
	g := GroupMetrics{RSMSE: make([]float64, len(preds)), CE: make([]float64, len(preds))}
	for i := range preds {
		r, err := RSMSE(preds[i].Mean, clients[i].YTest)
		if err != nil {
			return g, fmt.Errorf("client %d: %w", i, err)
		}
		ce, err := CalibrationError(preds[i].CDFAtY)
		if err != nil {
			return g, fmt.Errorf("client %d: %w", i, err)
		}
		g.RSMSE[i], g.CE[i] = r, ce
	}
	g.MeanRSMSE, g.MeanCE = Mean(g.RSMSE), Mean(g.CE)
	return g, nil
}

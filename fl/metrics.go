package fl

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/pacpfl/pacpfl/data"
)

// CELevels is H, the number of calibration levels of eq. (41) and of the
// confidence bins of eq. (42).
const CELevels = 20

// RSMSE is the root mean squared error of pred against y divided by the
// population standard deviation of y (docs/math.md §2.10). It is scale-free.
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
		counts[calibrationBin(p)]++
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

// calibrationBin returns the h ∈ 0..H with p ∈ ((h−1)/H, h/H] (h = 0 for
// p = 0), for p ∈ [0, 1].
func calibrationBin(p float64) int {
	h := int(math.Ceil(p * CELevels))
	// Guard the rounding of p·H: the defining test is p ≤ h/H.
	for h > 0 && p <= float64(h-1)/CELevels {
		h--
	}
	for h < CELevels && p > float64(h)/CELevels {
		h++
	}
	return h
}

// Summary is the mean of a sample and the half-width of its 95% confidence
// interval (Student t with n−1 degrees of freedom). One value has no spread
// to estimate: its CI95 is NaN ("no interval"), not 0, which would claim no
// uncertainty at all.
type Summary struct {
	Mean float64 `json:"mean"`
	CI95 float64 `json:"ci95"`
}

// Summarise returns the mean ± 95% CI half-width t_{0.975,n−1}·s/√n (NaN
// for n = 1; both NaN for n = 0).
func Summarise(xs []float64) Summary {
	n := len(xs)
	if n == 0 {
		return Summary{Mean: math.NaN(), CI95: math.NaN()}
	}
	mean := Mean(xs)
	if n == 1 {
		return Summary{Mean: mean, CI95: math.NaN()}
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

// WeightedMean is Σ wᵢxᵢ / Σ wᵢ: a group's metric weighted by the clients'
// local data sizes (FedVI's aggregation of accuracy). The weights must be
// finite and ≥ 0 with a positive sum; NaN if xs is empty.
func WeightedMean(xs, ws []float64) (float64, error) {
	if len(xs) != len(ws) {
		return 0, fmt.Errorf("weighted mean: %d values, %d weights", len(xs), len(ws))
	}
	if len(xs) == 0 {
		return math.NaN(), nil
	}
	var s, sw float64
	for i, w := range ws {
		if !(w >= 0) || math.IsInf(w, 0) {
			return 0, fmt.Errorf("weighted mean: weight %d is %v, want finite and ≥ 0", i, w)
		}
		s += w * xs[i]
		sw += w
	}
	if sw == 0 {
		return 0, errors.New("weighted mean: the weights sum to 0")
	}
	return s / sw, nil
}

// WeightedAccuracy is a group's accuracy (%) weighted by the clients'
// test-set sizes: the fraction of the group's test images classified
// correctly (FedVI's metric), from the per-client accuracies of g; NaN for
// an empty group.
func WeightedAccuracy(g ClassGroupMetrics, clients []data.ClientData) (float64, error) {
	sizes := make([]float64, len(clients))
	for k := range clients {
		sizes[k] = float64(len(clients[k].YTest))
	}
	return WeightedMean(g.Accuracy, sizes)
}

// GroupMetrics are the per-client metrics of one group of clients and their
// averages.
type GroupMetrics struct {
	RSMSE     []float64 `json:"rsmse_per_client"`
	CE        []float64 `json:"ce_per_client"`
	MeanRSMSE float64   `json:"rsmse"`
	MeanCE    float64   `json:"ce"`
	// Weights are the mixture weights α_κ (37b) each client's prediction
	// gave the k priors, for methods that predict with a mixture.
	Weights [][]float64 `json:"mixture_weights_per_client,omitempty"`
	// Modes is set when the clients' generating modes are known (synthetic
	// data with at least two modes, such as PV-EW and Polynomial) and the
	// method predicts with a mixture: how far the particles serve the modes.
	Modes *ModeSpecialisation `json:"mode_specialisation,omitempty"`
}

// ModeSpecialisation measures whether the particles of a hyper-posterior
// specialise in the data's modes, from the mixture weights α_iκ of n
// clients with known modes c_i: Purity = (1/n) Σ_κ max_c Σ_{i: c_i = c} α_iκ.
// It is 1 when every particle serves the clients of one mode only and
// equals Chance = max_c n_c / n when every client weights the particles
// alike (k = 1 always gives Chance).
type ModeSpecialisation struct {
	Purity float64 `json:"purity"`
	Chance float64 `json:"chance"`
}

// Specialisation computes the ModeSpecialisation of mixture weights
// (one row of k weights per client) and the clients' modes. It returns nil
// when fewer than two modes occur.
func Specialisation(weights [][]float64, modes []int) (*ModeSpecialisation, error) {
	if len(weights) != len(modes) {
		return nil, fmt.Errorf("mode specialisation: %d clients' weights for %d modes", len(weights), len(modes))
	}
	count := map[int]int{}
	for _, c := range modes {
		count[c]++
	}
	if len(count) < 2 {
		return nil, nil
	}
	k := len(weights[0])
	mass := map[int][]float64{} // mode → Σ_{i in mode} α_iκ per κ
	for i, w := range weights {
		if len(w) != k || k == 0 {
			return nil, fmt.Errorf("mode specialisation: client %d has %d weights, client 0 has %d", i, len(w), k)
		}
		if mass[modes[i]] == nil {
			mass[modes[i]] = make([]float64, k)
		}
		for κ, a := range w {
			if !(a >= 0 && a <= 1) {
				return nil, fmt.Errorf("mode specialisation: client %d's weight %d is %v, not in [0, 1]", i, κ, a)
			}
			mass[modes[i]][κ] += a
		}
	}
	var s ModeSpecialisation
	for κ := 0; κ < k; κ++ {
		var best float64
		for _, m := range mass {
			best = math.Max(best, m[κ])
		}
		s.Purity += best
	}
	n := float64(len(modes))
	s.Purity /= n
	for _, c := range count {
		s.Chance = math.Max(s.Chance, float64(c)/n)
	}
	return &s, nil
}

// Prediction is a predictive distribution evaluated on a client's test set:
// the mean per test point (for RSMSE) and the CDF at the true target (for CE).
// A method that predicts points only leaves CDFAtY nil; its CE is NaN (not
// applicable), never a number.
type Prediction struct {
	Mean   []float64
	CDFAtY []float64
	// Weights are the mixture weights α_κ over the k priors behind a
	// mixture prediction; nil for a single model.
	Weights []float64
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
		// A point predictor (CDFAtY nil) has no calibration error.
		ce := math.NaN()
		if preds[i].CDFAtY != nil {
			if ce, err = CalibrationError(preds[i].CDFAtY); err != nil {
				return g, fmt.Errorf("client %d: %w", i, err)
			}
		}
		g.RSMSE[i], g.CE[i] = r, ce
	}
	g.MeanRSMSE, g.MeanCE = Mean(g.RSMSE), Mean(g.CE)
	if len(preds) > 0 && !slices.ContainsFunc(preds, func(p Prediction) bool { return p.Weights == nil }) {
		modes := make([]int, len(clients))
		for i := range preds {
			g.Weights = append(g.Weights, preds[i].Weights)
			modes[i] = clients[i].Mode
		}
		var err error
		if g.Modes, err = Specialisation(g.Weights, modes); err != nil {
			return g, err
		}
	}
	return g, nil
}

// ClassPrediction is a predictive distribution over C classes evaluated on
// a client's n test points: Probs is n×C row-major, row j the class
// probabilities of test point j (each row sums to 1).
type ClassPrediction struct {
	Probs []float64
}

// ClassGroupMetrics are the per-client classification metrics of one group
// of clients and their averages; accuracy in percent.
type ClassGroupMetrics struct {
	Accuracy     []float64 `json:"accuracy_per_client"`
	CE           []float64 `json:"ce_per_client"`
	MeanAccuracy float64   `json:"accuracy"`
	MeanCE       float64   `json:"ce"`
}

// probRowTolerance is how far a row of class probabilities may sum from 1
// (rounding of a softmax or of a mixture of them, never a wrong input such
// as logits).
const probRowTolerance = 1e-6

// ClassificationMetrics returns the accuracy (%) and the calibration error
// (42) of the class probabilities probs (n×classes, row-major) against the
// labels y (class indices 0..classes−1 stored as float64). The predicted
// class is the arg max of a row (the lowest index among ties), the
// confidence p̂_j its probability; with the bins B_h = {j : p̂_j ∈
// ((h−1)/H, h/H]}, H = CELevels,
// CE = Σ_h |B_h|/n · |acc(B_h) − conf(B_h)|, empty bins contributing 0
// (docs/math.md §2.10, Guo et al. 2017).
func ClassificationMetrics(probs, y []float64, classes int) (accuracy, ce float64, err error) {
	n := len(y)
	switch {
	case classes < 2:
		return 0, 0, fmt.Errorf("classification metrics: %d classes, need at least 2", classes)
	case n == 0:
		return 0, 0, errors.New("classification metrics: no test points")
	case len(probs) != n*classes:
		return 0, 0, fmt.Errorf("classification metrics: %d probabilities for %d test points × %d classes", len(probs),
			n, classes)
	}
	var count, correct [CELevels + 1]int
	var conf [CELevels + 1]float64
	for j := range n {
		l := y[j]
		if !(l >= 0 && l < float64(classes)) || l != math.Trunc(l) {
			return 0, 0,
				fmt.Errorf("classification metrics: label %v of test point %d is not a class 0..%d", l, j, classes-1)
		}
		row := probs[j*classes : (j+1)*classes]
		best, sum := 0, 0.0
		for c, p := range row {
			if !(p >= 0 && p <= 1) {
				return 0, 0, fmt.Errorf(
					"classification metrics: probability %v of class %d at test point %d outside [0, 1]", p, c, j)
			}
			if p > row[best] {
				best = c
			}
			sum += p
		}
		if math.Abs(sum-1) > probRowTolerance {
			return 0, 0,
				fmt.Errorf("classification metrics: the class probabilities of test point %d sum to %v, not 1", j, sum)
		}
		h := calibrationBin(row[best])
		count[h]++
		conf[h] += row[best]
		if best == int(l) {
			correct[h]++
		}
	}
	hits := 0
	for h := range count {
		hits += correct[h]
		if count[h] == 0 {
			continue
		}
		nh := float64(count[h])
		ce += nh / float64(n) * math.Abs(float64(correct[h])/nh-conf[h]/nh)
	}
	return 100 * float64(hits) / float64(n), ce, nil
}

// EvaluateClassification computes the per-client accuracy and calibration
// error of a group from each client's class probabilities on its test set,
// and their averages over the clients (the over-seeds mean ± CI is
// Summarise's).
func EvaluateClassification(preds []ClassPrediction, clients []data.ClientData,
	classes int) (ClassGroupMetrics, error) {
	if len(preds) != len(clients) {
		return ClassGroupMetrics{},
			fmt.Errorf("evaluate classification: %d predictions for %d clients", len(preds), len(clients))
	}
	g := ClassGroupMetrics{Accuracy: make([]float64, len(preds)), CE: make([]float64, len(preds))}
	for i := range preds {
		acc, ce, err := ClassificationMetrics(preds[i].Probs, clients[i].YTest, classes)
		if err != nil {
			return g, fmt.Errorf("client %d: %w", i, err)
		}
		g.Accuracy[i], g.CE[i] = acc, ce
	}
	g.MeanAccuracy, g.MeanCE = Mean(g.Accuracy), Mean(g.CE)
	return g, nil
}

// PointFit personalises a point-predicting model on one client's data (x,
// y) and returns its predictor, which writes the predictions for the rows of
// xTest into out.
type PointFit func(x, y []float64) (predict func(xTest, out []float64), err error)

// EvaluatePoint evaluates a point-predicting method (the frequentist
// baselines): every existing and new client personalises on its own data
// (S_i ∪ S̃_i, or a new client's data) and predicts its test set. RSMSE as
// for every method; CE is NaN (not applicable). start is when the method's
// training began (for the reported time).
func EvaluatePoint(name string, ds *data.Dataset, fit PointFit, start time.Time) (*MethodResult, error) {
	group := func(clients []data.ClientData) (GroupMetrics, error) { return EvaluatePointGroup(clients, fit) }
	out := &MethodResult{Method: name}
	var err error
	if out.Existing, err = group(ds.Existing); err != nil {
		return nil, fmt.Errorf("%s, existing clients: %w", name, err)
	}
	if out.New, err = group(ds.New); err != nil {
		return nil, fmt.Errorf("%s, new clients: %w", name, err)
	}
	out.Elapsed = time.Since(start)
	out.Seconds = out.Elapsed.Seconds()
	return out, nil
}

// EvaluatePointGroup personalises a point predictor on each client's own
// data and scores it on the client's test set (CE NaN).
func EvaluatePointGroup(clients []data.ClientData, fit PointFit) (GroupMetrics, error) {
	preds := make([]Prediction, len(clients))
	for i := range clients {
		x, y := clients[i].PersonalisationData()
		predict, err := fit(x, y)
		if err != nil {
			return GroupMetrics{}, fmt.Errorf("client %d: %w", i, err)
		}
		preds[i].Mean = make([]float64, len(clients[i].YTest))
		predict(clients[i].XTest, preds[i].Mean)
	}
	return Evaluate(preds, clients)
}

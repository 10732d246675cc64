package fl

import (
	"fmt"
	"math"
	"slices"
)

// RobustRule names how the accepted updates of a round become the one
// update the score (40) uses (Config.Robust). Every rule works on the
// updates that passed validation (finite entries, finite squared norm,
// finite ln Z^C, Config.MaxUpdateNorm, Config.MaxNormFactor), in slot order
// (the order of the round's draw): a run is bit-identical whatever
// GOMAXPROCS or Workers. Let u be the number of accepted updates G_1..G_u
// (k×dφ each, u = c without a quorum). The breakdown point is the largest
// fraction of the u updates that can be arbitrary (Byzantine) while the
// result stays within a bound set by the honest updates alone.
type RobustRule string

const (
	// RobustMean is (1/u) Σ G_i, the aggregate of Algorithm 1 (and the
	// only one DP is calibrated for). Breakdown point 0: one update moves
	// it arbitrarily far; MaxUpdateNorm bounds how far (by B/u). The zero
	// value "" means this rule. Cost O(u·k·dφ).
	RobustMean RobustRule = "mean"
	// RobustMedian is the coordinate-wise median (Yin et al. 2018): for
	// every coordinate, the middle value of the u updates' values (the
	// mean of the two middle ones for even u). Breakdown point
	// ⌊(u−1)/2⌋/u (just below 1/2): fewer than half the updates cannot
	// take a coordinate outside the range of the honest values. Needs
	// u ≥ 3 (the median of two is their mean). Cost O(k·dφ·u log u).
	RobustMedian RobustRule = "median"
	// RobustTrimmedMean is the coordinate-wise β-trimmed mean (Yin et al.
	// 2018): for every coordinate, sort the u values, drop the t = ⌊βu⌋
	// smallest and the t largest and average the u − 2t that remain.
	// Breakdown point t/u ≈ β: up to t arbitrary updates leave every
	// coordinate within the range of the honest values. Needs
	// 0 < β < 1/2 and t ≥ 1 for the fewest updates a round may have.
	// Cost O(k·dφ·u log u).
	RobustTrimmedMean RobustRule = "trimmed-mean"
	// RobustKrum is Krum (Blanchard et al. 2017) with f = Byzantine: each
	// update's score is the sum of its squared L2 distances to its
	// u − f − 2 nearest other updates, and the update of lowest score is
	// the aggregate (ties to the earliest slot). It tolerates f arbitrary
	// updates when u ≥ 2f + 3: breakdown point f/u, at most (u−3)/(2u).
	// Cost O(u²·k·dφ) for the distances.
	RobustKrum RobustRule = "krum"
	// RobustMultiKrum is multi-Krum (Blanchard et al. 2017): the mean of
	// the m = Select updates of lowest Krum score (m = 0: u − f, as in
	// El Mhamdi et al. 2018), averaged in slot order. Every update it
	// averages scores no worse than some honest update (m ≤ u − f), so the
	// same f, u ≥ 2f + 3, breakdown point f/u. Cost O(u²·k·dφ).
	RobustMultiKrum RobustRule = "multi-krum"
)

// RobustRules lists the rules in the order they are documented.
var RobustRules = []RobustRule{RobustMean, RobustMedian, RobustTrimmedMean, RobustKrum, RobustMultiKrum}

// Robust chooses the aggregation of a round's accepted updates
// (Config.Robust; the zero value is the mean). It replaces the mean only:
// Config.Aggregation's factor (τ·n or τ) applies to its result as to the
// mean's. With a rule other than the mean, the round's ln Z^C reported in
// Result.MeanLML and Progress is aggregated by the same rule (median,
// trimmed mean, mean over the Krum-selected updates), so one client's
// outlying value cannot dominate the history either.
//
// DP with a rule other than the mean is refused: the noise is calibrated to
// the sensitivity 2γ/u of the mean of clipped updates, and one client can
// move a coordinate-wise median or a Krum choice by far more than γ/u.
type Robust struct {
	Rule RobustRule
	// Trim is β of the trimmed mean, in (0, 1/2): the fraction of the
	// updates dropped at each end of every coordinate.
	Trim float64
	// Byzantine is f of Krum and multi-Krum (≥ 1): the number of updates
	// the rule is guaranteed to tolerate. Validate requires
	// ClientsPerRound ≥ 2f + 3 and, with a quorum, Quorum ≥ 2f + 3, so every
	// round that completes has enough updates.
	Byzantine int
	// Select is m of multi-Krum: the number of updates averaged, 1 ≤ m ≤
	// (fewest updates of a round) − f; 0 means u − f in each round.
	Select int
}

func (r Robust) rule() RobustRule {
	if r.Rule == "" {
		return RobustMean
	}
	return r.Rule
}

// validate reports the first unusable parameter when a round aggregates at
// least minUpdates (Quorum, or c without one) and at most c updates.
func (r Robust) validate(c, quorum int, dp bool) error {
	rule := r.rule()
	minU, minWhat := c, fmt.Sprintf("%d clients per round", c)
	if quorum > 0 && quorum < c {
		minU, minWhat = quorum, fmt.Sprintf("quorum %d (a round may complete with %d updates)", quorum, quorum)
	}
	switch rule {
	case RobustMean, RobustMedian, RobustTrimmedMean, RobustKrum, RobustMultiKrum:
	default:
		return fmt.Errorf("server: unknown robust aggregation %q (want mean, median, trimmed-mean, krum or multi-krum)",
			r.Rule)
	}
	if r.Trim != 0 && rule != RobustTrimmedMean {
		return fmt.Errorf("server: trim fraction %v set for robust aggregation %s (only trimmed-mean trims)", r.Trim,
			rule)
	}
	if r.Byzantine != 0 && rule != RobustKrum && rule != RobustMultiKrum {
		return fmt.Errorf("server: %d Byzantine updates set for robust aggregation %s (only krum and multi-krum use "+
			"it)", r.Byzantine, rule)
	}
	if r.Select != 0 && rule != RobustMultiKrum {
		return fmt.Errorf("server: %d selected updates set for robust aggregation %s (only multi-krum uses it)",
			r.Select, rule)
	}
	if rule != RobustMean && dp {
		return fmt.Errorf("server: robust aggregation %s with DP: the noise is calibrated to the sensitivity of the "+
			"clipped mean, which %s does not have", rule, rule)
	}
	switch rule {
	case RobustMedian:
		if minU < 3 {
			return fmt.Errorf("server: the coordinate-wise median needs at least 3 updates per round, but %s: the "+
				"median of 1 or 2 updates is their mean", minWhat)
		}
	case RobustTrimmedMean:
		if !(r.Trim > 0 && r.Trim < 0.5) {
			return fmt.Errorf("server: trim fraction β = %v must be in (0, 1/2)", r.Trim)
		}
		if t := trimCount(r.Trim, minU); t < 1 {
			return fmt.Errorf("server: trimmed mean with β = %v trims nothing from %d updates (%s): ⌊βu⌋ must be ≥ 1",
				r.Trim, minU, minWhat)
		}
	case RobustKrum, RobustMultiKrum:
		f := r.Byzantine
		if f < 1 {
			return fmt.Errorf("server: %s needs Byzantine f ≥ 1, got %d (with f = 0 use the mean)", rule, f)
		}
		if need := 2*f + 3; minU < need {
			return fmt.Errorf("server: %s with f = %d needs at least 2f + 3 = %d updates per round, but %s", rule, f,
				need, minWhat)
		}
		if r.Select < 0 || r.Select > minU-f {
			return fmt.Errorf("server: multi-krum selects m = %d updates; need 0 ≤ m ≤ %d (fewest updates %d − f %d)",
				r.Select, minU-f, minU, f)
		}
	}
	return nil
}

// trimCount is t = ⌊βu⌋, the values dropped at each end.
func trimCount(beta float64, u int) int { return int(math.Floor(beta * float64(u))) }

// robustWork holds the buffers of the robust rules, sized for c updates at
// NewServer: a round allocates nothing.
type robustWork struct {
	ups    [][]float64 // accepted updates, slot order
	lmls   []float64   // their ln Z^C
	col    []float64   // one coordinate's values (u)
	dist   []float64   // u×u squared distances (Krum)
	score  []float64   // u Krum scores
	order  []int       // u indices
	picked []int       // selected indices, slot order
}

func newRobustWork(c int, krum bool) *robustWork {
	w := &robustWork{ups: make([][]float64, 0, c), lmls: make([]float64, 0, c), col: make([]float64, c)}
	if krum {
		w.dist = make([]float64, c*c)
		w.score = make([]float64, c)
		w.order = make([]int, c)
		w.picked = make([]int, 0, c)
	}
	return w
}

// aggregate writes rule r's aggregate of w.ups into dst and returns the
// round's ln Z^C aggregated the same way.
func (w *robustWork) aggregate(dst []float64, r Robust) (float64, error) {
	u := len(w.ups)
	switch r.rule() {
	case RobustMedian:
		coordMedian(dst, w.ups, w.col)
		return medianOf(w.lmls), nil
	case RobustTrimmedMean:
		t := trimCount(r.Trim, u)
		coordTrimmedMean(dst, w.ups, t, w.col)
		return trimmedMeanOf(w.lmls, t), nil
	case RobustKrum, RobustMultiKrum:
		f := r.Byzantine
		if u < 2*f+3 {
			return 0, fmt.Errorf("%s with f = %d needs at least %d updates, %d accepted", r.rule(), f, 2*f+3, u)
		}
		m := 1
		if r.rule() == RobustMultiKrum {
			m = r.Select
			if m == 0 {
				m = u - f
			}
		}
		w.picked = krumSelect(w.picked[:0], w.ups, f, m, w.dist[:u*u], w.score[:u], w.order[:u], w.col)
		clear(dst)
		for _, i := range w.picked {
			for j, v := range w.ups[i] {
				dst[j] += v
			}
		}
		inv := 1 / float64(len(w.picked))
		for j := range dst {
			dst[j] *= inv
		}
		sel := w.col[:0]
		for _, i := range w.picked {
			sel = append(sel, w.lmls[i])
		}
		return meanOf(sel), nil
	}
	return 0, fmt.Errorf("robust aggregation %q not implemented", r.Rule)
}

// coordMedian writes the coordinate-wise median of ups into dst; col holds
// at least len(ups) values.
func coordMedian(dst []float64, ups [][]float64, col []float64) {
	col = col[:len(ups)]
	for j := range dst {
		for i, g := range ups {
			col[i] = g[j]
		}
		dst[j] = medianOf(col)
	}
}

// coordTrimmedMean writes the coordinate-wise mean of ups without the t
// smallest and t largest values of each coordinate into dst.
func coordTrimmedMean(dst []float64, ups [][]float64, t int, col []float64) {
	col = col[:len(ups)]
	for j := range dst {
		for i, g := range ups {
			col[i] = g[j]
		}
		dst[j] = trimmedMeanOf(col, t)
	}
}

// medianOf sorts x in place and returns its median (the mean of the two
// middle values for an even length).
func medianOf(x []float64) float64 {
	sortSmall(x)
	h := len(x) / 2
	if len(x)%2 == 1 {
		return x[h]
	}
	return 0.5 * (x[h-1] + x[h])
}

// trimmedMeanOf sorts x in place and returns the mean of x[t:len−t].
func trimmedMeanOf(x []float64, t int) float64 {
	sortSmall(x)
	return meanOf(x[t : len(x)-t])
}

// meanOf is Σx/len(x), summed in order; if the sum of finite values
// overflows, Σ(x/len(x)) instead (finite whenever the values are).
func meanOf(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	n := float64(len(x))
	if m := s / n; !math.IsInf(m, 0) {
		return m
	}
	s = 0
	for _, v := range x {
		s += v / n
	}
	return s
}

// sortSmall sorts x ascending: insertion sort for the handful of updates
// of a round, pdqsort beyond. The values are finite (validated), so the
// result is the same whatever the algorithm.
func sortSmall(x []float64) {
	if len(x) > 32 {
		slices.Sort(x)
		return
	}
	for i := 1; i < len(x); i++ {
		v := x[i]
		j := i
		for ; j > 0 && x[j-1] > v; j-- {
			x[j] = x[j-1]
		}
		x[j] = v
	}
}

// krumSelect appends to picked the indices (ascending) of the m updates of
// lowest Krum score with f Byzantine: score(i) = the sum of the u − f − 2
// smallest ‖G_i − G_j‖², j ≠ i, summed in ascending order. Ties go to the
// lower index. dist (u×u), score (u), order (u) and col (u) are scratch.
func krumSelect(picked []int, ups [][]float64, f, m int, dist, score []float64, order []int, col []float64) []int {
	u := len(ups)
	for i := 0; i < u; i++ {
		dist[i*u+i] = 0
		for j := i + 1; j < u; j++ {
			a, b := ups[i], ups[j]
			b = b[:len(a)]
			d := 0.0
			for x, v := range a {
				e := v - b[x]
				d += e * e
			}
			dist[i*u+j], dist[j*u+i] = d, d
		}
	}
	nb := u - f - 2
	col = col[:u-1]
	for i := 0; i < u; i++ {
		n := 0
		for j := 0; j < u; j++ {
			if j != i {
				col[n] = dist[i*u+j]
				n++
			}
		}
		sortSmall(col)
		s := 0.0
		for _, d := range col[:nb] {
			s += d
		}
		score[i] = s
	}
	// Stable insertion sort of the indices by score: ties keep slot order.
	for i := range order {
		order[i] = i
	}
	for i := 1; i < u; i++ {
		o := order[i]
		j := i
		for ; j > 0 && score[order[j-1]] > score[o]; j-- {
			order[j] = order[j-1]
		}
		order[j] = o
	}
	picked = append(picked, order[:m]...)
	slices.Sort(picked)
	return picked
}

package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/methods"
)

// Tune is the --json report of pacpfl tune --method pacpfl: PAC-PFL's
// K-fold cross-validation over a grid of τ, σ_P, η and T, best first.
type Tune struct {
	Dataset string       `json:"dataset"`
	Seed    uint64       `json:"seed"`
	Folds   int          `json:"folds"`
	Split   fl.CVSplit   `json:"cv_split"`
	Clients int          `json:"clients"`
	Points  []fl.CVPoint `json:"points"`
	Best    fl.CVPoint   `json:"best"`
	Seconds float64      `json:"seconds"`
	// K, Beta and Net describe the fixed settings in the text: the
	// particles, the client temperature and the GP networks.
	K    int    `json:"-"`
	Beta string `json:"-"`
	Net  string `json:"-"`
}

// WriteText writes the report as pacpfl tune prints it: the grid, best
// first, and the best setting as flags.
func (r *Tune) WriteText(w io.Writer) {
	fmt.Fprintf(w, "PAC-PFL %d-fold cross-validation on %s seed %d (%d existing clients, training data only; %s): "+
		"k=%d, β=%s, %s\n\n",
		r.Folds, DatasetTitle(r.Dataset), r.Seed, r.Clients, CVSplitText(r.Split), r.K, r.Beta, r.Net)
	fmt.Fprintln(w, "| τ | σ_P | η | T | validation RSMSE | per fold |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, p := range r.Points {
		fmt.Fprintf(w, "| %g | %g | %g | %d | %.4f | %s |\n", p.Tau, p.SigmaP, p.LR, p.Rounds, p.RSMSE, folds(p.Folds))
	}
	b := r.Best
	fmt.Fprintf(w, "\nbest: --tau %g --sigma-p %g --lr %g --rounds %d (wall time %.0fs)\n", b.Tau, b.SigmaP, b.LR,
		b.Rounds, r.Seconds)
}

func folds(xs []float64) string {
	s := make([]string, len(xs))
	for i, v := range xs {
		s[i] = fmt.Sprintf("%.3f", v)
	}
	return strings.Join(s, " ")
}

// CVSplitText says how the validation clients of split were made.
func CVSplitText(s fl.CVSplit) string {
	if s == fl.CVFuture {
		return "--cv-split future: the other clients train on the first half of S_i in time, held-out clients " +
			"predict their second half from their first"
	}
	return "held-out clients predict one half of S_i from the other"
}

// TuneBaseline is the --json report of pacpfl tune for a baseline (MTL,
// MAML, Vanilla, Pooled): its cross-validation grid, best first.
type TuneBaseline struct {
	Dataset string              `json:"dataset"`
	Method  string              `json:"method"`
	Seed    uint64              `json:"seed"`
	Folds   int                 `json:"folds"`
	Split   fl.CVSplit          `json:"cv_split"`
	Points  []methods.GridPoint `json:"points"`
	Best    methods.GridPoint   `json:"best"`
	// Clients and Seconds are the text's: the existing clients and the
	// wall time.
	Clients int     `json:"-"`
	Seconds float64 `json:"-"`
}

// WriteText writes the report as pacpfl tune prints it: the grid, best
// first (a failed setting with its error), and the best setting unless
// every one failed.
func (r *TuneBaseline) WriteText(w io.Writer) {
	fmt.Fprintf(w, "%s %d-fold cross-validation on %s seed %d (%d existing clients, training data only; %s)\n\n",
		methods.Label(r.Method), r.Folds, DatasetTitle(r.Dataset), r.Seed, r.Clients, CVSplitText(r.Split))
	fmt.Fprintln(w, "| setting | validation RSMSE | per fold |")
	fmt.Fprintln(w, "|---|---|---|")
	for _, p := range r.Points {
		if p.Failed != "" {
			fmt.Fprintf(w, "| %s | failed | %s |\n", SettingText(p.Setting), p.Failed)
			continue
		}
		fmt.Fprintf(w, "| %s | %.4f | %s |\n", SettingText(p.Setting), p.RSMSE, folds(p.Folds))
	}
	if r.Best.Failed != "" {
		return
	}
	fmt.Fprintf(w, "\nbest: %s (wall time %.0fs)\n", SettingText(r.Best.Setting), r.Seconds)
}

// SettingText is a grid point's setting as name=value pairs in name order.
func SettingText(s map[string]float64) string {
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

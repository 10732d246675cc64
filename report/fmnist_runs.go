package report

import (
	"fmt"
	"math"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/fedvi"
	"github.com/pacpfl/pacpfl/harness"
)

// ClassRuns collects the per-seed results of a classification experiment
// (pacpfl experiment fmnist) from the harness's Done events, method by
// method, and builds the FMNIST report's rows from them. Weighted: the
// FedVI paper's metric for every method (FedVI's partition); the
// FedVI-family methods have it in any case.
type ClassRuns struct {
	seeds      int
	weightAll  bool
	vals       map[string]map[string][]float64
	perClient  map[string]PerClient
	weighted   map[string]*WeightedRuns
	secs       map[string]float64
	roundSecs  map[string]float64
	bestRounds map[string]string
	err        error
}

// NewClassRuns collects the results of an experiment over seeds seeds;
// weightAll gives every method the weighted accuracies.
func NewClassRuns(seeds int, weightAll bool) *ClassRuns {
	return &ClassRuns{seeds: seeds, weightAll: weightAll, vals: map[string]map[string][]float64{},
		perClient: map[string]PerClient{},
		weighted:  map[string]*WeightedRuns{}, secs: map[string]float64{}, roundSecs: map[string]float64{},
		bestRounds: map[string]string{}}
}

// Observe records the result of a Done event (it ignores the others); the
// first error is kept for Err.
func (a *ClassRuns) Observe(ev harness.Event) {
	if ev.Kind != harness.Done || ev.Result == nil {
		return
	}
	m, res := ev.Method, ev.Result
	if r, ok := res.Detail.(*fedvi.Result); ok {
		a.weightedOf(m).Add(r)
	} else if a.weightAll && a.err == nil {
		// FedVI's metric for every method on FedVI's partition, so that
		// the rows compare in one table.
		if err := a.weightedOf(m).AddOnce(res, ev.Data); err != nil {
			a.err = fmt.Errorf("%s, seed %d: %w", m, ev.Seed, err)
		}
	}
	if a.vals[m] == nil {
		a.vals[m] = map[string][]float64{}
	}
	v := a.vals[m]
	put := func(acc, ce string, g *fl.ClassGroupMetrics) {
		c := NewClassMetrics(g)
		v[acc], v[ce] = append(v[acc], float64(c.Accuracy)), append(v[ce], float64(c.CE))
	}
	put(harness.ExistingAccuracy, harness.ExistingCE, res.ExistingClass)
	put(harness.NewAccuracy, harness.NewCE, res.NewClass)
	a.perClient[m] = a.perClient[m].Add(res)
	a.secs[m] += res.Seconds
	a.roundSecs[m] += res.RoundSeconds / float64(a.seeds)
	if res.GlobalClass != nil {
		put(harness.GlobalAccuracy, harness.GlobalCE, res.GlobalClass)
	}
	if b := res.Best; b != nil {
		a.bestRounds[m] = fmt.Sprintf("%d-%d", b.From, b.To)
		if b.Existing != nil {
			v[harness.BestExisting] = append(v[harness.BestExisting], *b.Existing)
		}
		if b.Global != nil {
			v[harness.BestGlobal] = append(v[harness.BestGlobal], *b.Global)
		}
	}
}

// Err is the first error of the results observed: a method without the
// accuracies the weighted metric needs.
func (a *ClassRuns) Err() error { return a.err }

func (a *ClassRuns) weightedOf(m string) *WeightedRuns {
	if a.weighted[m] == nil {
		a.weighted[m] = &WeightedRuns{}
	}
	return a.weighted[m]
}

// Method is the row of method m over the seeds observed.
func (a *ClassRuns) Method(m string) *ClassMethod {
	r := NewClassMethod(a.vals[m], a.perClient[m])
	r.BestRounds, r.RoundSeconds, r.Seconds = a.bestRounds[m], a.roundSecs[m], a.secs[m]
	if w := a.weighted[m]; w != nil {
		r.Weighted = w.Groups()
	}
	return r
}

// Methods are the rows of the methods named, by name (an FMNIST report's
// Methods).
func (a *ClassRuns) Methods(names []string) map[string]*ClassMethod {
	out := make(map[string]*ClassMethod, len(names))
	for _, m := range names {
		out[m] = a.Method(m)
	}
	return out
}

// WeightedRuns are one method's weighted accuracies (the FedVI paper's
// metric) over the seeds.
type WeightedRuns struct {
	// ExFinal, NewFinal: after the final round; ExLast, NewLast: the mean
	// over the last evaluated rounds; one value per seed.
	ExFinal, ExLast, NewFinal, NewLast []float64
	// Rounds is the number of rounds the last-rounds means cover.
	Rounds  int
	History [][]FedVIRound
	// Global: the participating figures are the global model's.
	Global bool
}

// AddOnce adds a method evaluated once, after training (PAC-PFL,
// pFedBayes, …) on ds: its personalised models on the participating
// clients, or its global model where it has no personalised one, and the
// new clients; the final round is then also the mean of the last (one)
// rounds.
func (w *WeightedRuns) AddOnce(res *fl.MethodResult, ds *data.Dataset) error {
	ex := res.ExistingClass
	if ex == nil {
		ex, w.Global = res.GlobalClass, true
	}
	if ex == nil {
		return fmt.Errorf("%s: no accuracies of the participating clients", res.Method)
	}
	e, err := fl.WeightedAccuracy(*ex, ds.Existing)
	if err != nil {
		return fmt.Errorf("participating clients: %w", err)
	}
	n := math.NaN()
	if res.NewClass != nil {
		if n, err = fl.WeightedAccuracy(*res.NewClass, ds.New); err != nil {
			return fmt.Errorf("non-participating clients: %w", err)
		}
	}
	w.ExFinal, w.ExLast = append(w.ExFinal, e), append(w.ExLast, e)
	w.NewFinal, w.NewLast = append(w.NewFinal, n), append(w.NewLast, n)
	w.Rounds = 1
	return nil
}

// Add adds a FedVI-family run with its evaluated rounds (none: nothing).
func (w *WeightedRuns) Add(r *fedvi.Result) {
	f := r.Final()
	if f == nil {
		return
	}
	w.ExFinal = append(w.ExFinal, f.ExistingWeighted)
	w.NewFinal = append(w.NewFinal, f.NewWeighted)
	w.ExLast = append(w.ExLast, r.LastExisting)
	w.NewLast = append(w.NewLast, r.LastNew)
	w.Rounds = len(r.History)
	h := make([]FedVIRound, len(r.History))
	for i, e := range r.History {
		h[i] = FedVIRound{Round: e.Round, Existing: Float(e.ExistingWeighted), New: Float(e.NewWeighted)}
	}
	w.History = append(w.History, h)
}

// Groups are the weighted accuracies over the seeds.
func (w *WeightedRuns) Groups() *WeightedGroups {
	group := func(final, last []float64) Weighted {
		return Weighted{Final: Summarise(final), LastRounds: Summarise(last), LastRoundsNum: w.Rounds}
	}
	return &WeightedGroups{Existing: group(w.ExFinal, w.ExLast), New: group(w.NewFinal, w.NewLast),
		GlobalModel: w.Global, History: w.History}
}

package report

import (
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/harness"
)

// Experiment is the --json report of pacpfl experiment polynomial and pv:
// each regression method's test metrics over the seeds.
type Experiment struct {
	Dataset string                       `json:"dataset"` // polynomial, pv-s-150, pv-ew-610, …
	Seeds   []uint64                     `json:"seeds"`
	Methods map[string]*ExperimentMethod `json:"methods"` // by method name (pacpfl, pfedgp, mtl, …)
	Seconds float64                      `json:"seconds"` // wall time of the whole experiment
}

// ExperimentMethod is one method's figures in an Experiment.
type ExperimentMethod struct {
	Existing Group `json:"existing"` // on the clients that took part in training
	New      Group `json:"new"`      // on clients that did not, personalised from their own data
	// PerSeed holds the per-seed group averages (existing_rsmse, …) and,
	// for mixtures on data with modes, the mode specialisation
	// (harness.SeedValues), one value per seed in seed order.
	PerSeed map[string][]Float `json:"per_seed"`
	// PerClient holds the per-client values (plot experiment's box plots).
	PerClient PerClient `json:"per_client"`
	Seconds   float64   `json:"seconds"` // the method's own time over all seeds
}

// Group is one group of clients' mean test metrics over the seeds: the
// root standardised MSE and the calibration error (42), null where
// undefined (no clients; the CE of a point predictor; the CI of one seed).
type Group struct {
	RSMSE Summary `json:"rsmse"`
	CE    Summary `json:"ce"`
}

// Groups are the existing and the new clients' Group of a method's results
// over the seeds.
func Groups(mr *harness.MethodReport) (existing, new Group) {
	s := mr.Summary
	return Group{NewSummary(s[harness.ExistingRSMSE]), NewSummary(s[harness.ExistingCE])},
		Group{NewSummary(s[harness.NewRSMSE]), NewSummary(s[harness.NewCE])}
}

// NewExperiment is the report of hr, an experiment on the data set named
// dataset.
func NewExperiment(dataset string, hr *harness.Report) *Experiment {
	rep := &Experiment{Dataset: dataset, Seeds: hr.Seeds, Methods: map[string]*ExperimentMethod{}, Seconds: hr.Seconds}
	for _, mr := range hr.Methods {
		m := &ExperimentMethod{PerSeed: PerSeed(mr.PerSeed), PerClient: NewPerClient(mr.PerClient), Seconds: mr.Seconds}
		m.Existing, m.New = Groups(mr)
		rep.Methods[mr.Name] = m
	}
	return rep
}

// PerSeed is a method's per-seed values (harness.MethodReport.PerSeed) as
// written.
func PerSeed(v map[string][]float64) map[string][]Float {
	out := make(map[string][]Float, len(v))
	for key, xs := range v {
		out[key] = Floats(xs)
	}
	return out
}

// PerClient holds a method's per-client test metrics over the seeds of an
// experiment: metric key (existing_rsmse, new_ce, existing_accuracy, …;
// harness.ClientValues) → one list per seed, in seed order → one value per
// client, in client order (null where a client's metric is undefined, e.g.
// the CE of a point predictor).
type PerClient map[string][][]Float

// NewPerClient is a harness.MethodReport's PerClient as written.
func NewPerClient(pc map[string][][]float64) PerClient {
	out := PerClient{}
	for key, seeds := range pc {
		for _, xs := range seeds {
			out[key] = append(out[key], Floats(xs))
		}
	}
	return out
}

// Add appends the per-client values of one seed's result; p may be nil.
func (p PerClient) Add(res *fl.MethodResult) PerClient {
	if p == nil {
		p = PerClient{}
	}
	for key, xs := range harness.ClientValues(res) {
		p[key] = append(p[key], Floats(xs))
	}
	return p
}

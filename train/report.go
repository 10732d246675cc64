package train

import (
	"fmt"
	"math"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/predict"
	"github.com/pacpfl/pacpfl/report"
)

// Metrics are one group's per-client test metrics, NaN where a client's
// test rows do not define one, and their means over the clients that have
// them (NaN for none).
type Metrics struct {
	// First and Second are RSMSE and CE (regression) or accuracy in
	// percent and CE (classification), in client order.
	First, Second         []float64
	MeanFirst, MeanSecond float64
	// Defined clients have the metrics, Skipped ones do not.
	Defined, Skipped int
}

// Metrics are the existing and the new clients' test metrics of the
// predictions on their test rows.
func (r *Result) Metrics() (existing, new Metrics) {
	return r.metrics(r.Data.Existing, r.Existing), r.metrics(r.Data.New, r.New)
}

func (r *Result) metrics(group []data.ClientData, outs []predict.Output) Metrics {
	m := Metrics{First: make([]float64, len(group)), Second: make([]float64, len(group))}
	var s1, s2 float64
	for i := range group {
		a, b := clientMetrics(&group[i], outs[i], r.Data.Classes)
		m.First[i], m.Second[i] = a, b
		if math.IsNaN(a) {
			m.Skipped++
			continue
		}
		m.Defined++
		s1 += a
		s2 += b
	}
	m.MeanFirst, m.MeanSecond = math.NaN(), math.NaN()
	if m.Defined > 0 {
		m.MeanFirst, m.MeanSecond = s1/float64(m.Defined), s2/float64(m.Defined)
	}
	return m
}

// clientMetrics are one client's RSMSE and CE, or accuracy and CE; NaN
// where its test rows do not define them.
func clientMetrics(c *data.ClientData, out predict.Output, classes int) (a, b float64) {
	a, b = math.NaN(), math.NaN()
	if len(c.YTest) == 0 {
		return a, b
	}
	if mix := out.Mixture; mix != nil {
		mean, cdf := make([]float64, len(c.YTest)), make([]float64, len(c.YTest))
		for j, y := range c.YTest {
			mean[j] = mix.Mean(j)
			cdf[j] = math.Max(0, math.Min(1, mix.CDF(j, y)))
		}
		if v, err := fl.RSMSE(mean, c.YTest); err == nil {
			a = v
		}
		if v, err := fl.CalibrationError(cdf); err == nil {
			b = v
		}
	} else if out.Probs != nil {
		if acc, ce, err := fl.ClassificationMetrics(out.Probs, c.YTest, classes); err == nil {
			a, b = acc, ce
		}
	}
	return a, b
}

// ReportInfo is what a run's reports say about its data and command
// beyond the result: the data's name and task, how its rows were split,
// the seed and the run's total time.
type ReportInfo struct {
	Source, Task, ClientColumn, SplitColumn string
	TestFraction                            float64
	Seed                                    uint64
	TotalSeconds                            float64
}

// Report is the run's text report and its JSON report (a report.Train for
// GP clients, a report.BNNTrain for BNN clients).
func (r *Result) Report(info ReportInfo) (*report.TrainText, any) {
	ds, mf := r.Data.Dataset, r.Model
	em, nm := r.Metrics()
	text := &report.TrainText{Header: r.header(info), LML: "mean client LML", Train: r.Train,
		NoRounds: len(r.Train.MeanLML) == 0, Private: r.Train.Privacy.Epsilon < math.Inf(1), Bounds: r.Bounds,
		Certification: r.Certification}
	line := report.RegressionLine
	if ds.Classes > 0 {
		line = report.ClassLine
	}
	group := func(m Metrics, clients int) report.GroupLine {
		g := line(clients, m.MeanFirst, m.MeanSecond)
		if m.Skipped > 0 {
			g.Metrics += fmt.Sprintf("  (over %d of %d clients: the others have no test rows that define it)",
				m.Defined, clients)
		}
		return g
	}
	text.Existing, text.New = group(em, len(ds.Existing)), group(nm, len(ds.New))
	config := map[string]any{"data": info.Source, "task": info.Task,
		"features": r.Data.Features, "target": r.Data.Target,
		"client_column": info.ClientColumn, "new_client_ids": r.Data.NewIDs, "existing_client_ids": r.Data.ExistingIDs,
		"test_fraction": info.TestFraction, "split_column": info.SplitColumn}
	for k, v := range mf.Training {
		if _, ok := config[k]; !ok {
			config[k] = v
		}
	}
	per := map[string]any{"existing_ids": r.Data.ExistingIDs, "new_ids": r.Data.NewIDs}
	if ds.Classes == 0 {
		per["existing_rsmse"], per["existing_ce"] = report.Floats(em.First), report.Floats(em.Second)
		per["new_rsmse"], per["new_ce"] = report.Floats(nm.First), report.Floats(nm.Second)
		text.Setting = fmt.Sprintf("PAC-PFL, GP clients on %s: %d existing clients, %d new; k=%s particles, "+
			"T=%s rounds, seed %d", info.Source, len(ds.Existing), len(ds.New), mf.Training["k"],
			mf.Training["rounds"], info.Seed)
		rep := report.Train{Dataset: info.Source, Seed: info.Seed, Config: config, TotalSeconds: info.TotalSeconds,
			Certification: r.Certification,
			Existing:      report.Metrics{RSMSE: report.Float(em.MeanFirst), CE: report.Float(em.MeanSecond)},
			New:           report.Metrics{RSMSE: report.Float(nm.MeanFirst), CE: report.Float(nm.MeanSecond)},
			Bounds:        r.Bounds.Bounds, Learned: r.Bounds.Learned, LearnedNA: r.Bounds.LearnedUnavailable,
			PerClient: per,
		}
		rep.SetTraining(r.Train, text.Private)
		return text, rep
	}
	per["existing_accuracy"], per["existing_ce"] = report.Floats(em.First), report.Floats(em.Second)
	per["new_accuracy"], per["new_ce"] = report.Floats(nm.First), report.Floats(nm.Second)
	rep := report.BNNTrain{Dataset: info.Source, Seed: info.Seed, Config: config, TotalSeconds: info.TotalSeconds,
		Existing: report.ClassMetrics{Accuracy: report.Float(em.MeanFirst), CE: report.Float(em.MeanSecond)},
		New:      report.ClassMetrics{Accuracy: report.Float(nm.MeanFirst), CE: report.Float(nm.MeanSecond)},
		Bounds:   r.Bounds.Bounds, PerClient: per, Certification: r.Certification,
	}
	rep.SetTraining(r.Train, text.Private)
	return text, rep
}

// header is the first line of the text report.
func (r *Result) header(info ReportInfo) string {
	ds, mf := r.Data.Dataset, r.Model
	rows := func(group []data.ClientData) (train, test int) {
		for i := range group {
			train += len(group[i].Y)
			test += len(group[i].YTest)
		}
		return train, test
	}
	etr, ete := rows(ds.Existing)
	ntr, nte := rows(ds.New)
	kind := "GP clients"
	if ds.Classes > 0 {
		kind = fmt.Sprintf("BNN clients (MLP %d-%d-%d), %d classes", ds.D, mf.BNN.Hidden, ds.Classes, ds.Classes)
	}
	return fmt.Sprintf("PAC-PFL on %s (%s, %s): %d feature(s); %d existing clients (%d training, %d test rows), "+
		"%d new clients (%d own, %d test rows); k=%s, T=%s, τ=%s, seed %d",
		info.Source, info.Task, kind, ds.D, len(ds.Existing), etr, ete, len(ds.New), ntr, nte,
		mf.Training["k"], mf.Training["rounds"], mf.Training["tau"], info.Seed)
}

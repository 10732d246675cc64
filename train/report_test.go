package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/report"
)

// The metrics of a GP run are fl's RSMSE and CE of the predictions on the
// test rows, and the reports carry them with the data's client IDs.
func TestResultMetricsAndReport(t *testing.T) {
	fed := federated(t, data.Regression)
	res, err := Run(context.Background(), fed,
		Options{Source: "t.csv", ClientColumn: "client", Seed: 9, GP: gpOptions()})
	if err != nil {
		t.Fatal(err)
	}
	em, nm := res.Metrics()
	if len(em.First) != 4 || len(nm.First) != 1 || em.Defined != 4 || em.Skipped != 0 {
		t.Fatalf("metrics %+v / %+v", em, nm)
	}
	c := &fed.Existing[0]
	mix := res.Existing[0].Mixture
	mean := make([]float64, len(c.YTest))
	for j := range mean {
		mean[j] = mix.Mean(j)
	}
	want, err := fl.RSMSE(mean, c.YTest)
	if err != nil || math.Abs(want-em.First[0]) > 1e-12 {
		t.Fatalf("RSMSE %v, want %v (%v)", em.First[0], want, err)
	}
	sum := 0.0
	for _, v := range em.First {
		sum += v
	}
	if math.Abs(sum/4-em.MeanFirst) > 1e-12 {
		t.Fatalf("mean %v of %v", em.MeanFirst, em.First)
	}
	text, js := res.Report(ReportInfo{Source: "t.csv", Task: "regression", Seed: 9, TotalSeconds: 1})
	rep, ok := js.(report.Train)
	if !ok {
		t.Fatalf("JSON report %T, want report.Train", js)
	}
	if float64(rep.Existing.RSMSE) != em.MeanFirst || rep.Seed != 9 || rep.Config["data"] != "t.csv" ||
		rep.Config["k"] != "2" {
		t.Fatalf("report %+v", rep)
	}
	if text.Existing.Clients != 4 || text.New.Clients != 1 || text.Private || text.NoRounds {
		t.Fatalf("text %+v", text)
	}
}

// A classification target of mostly distinct labels is refused as one;
// the records come back with a federation error.
func TestReadData(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/d.csv"
	var b strings.Builder
	b.WriteString("c,x,y\n")
	for i := range 10 {
		fmt.Fprintf(&b, "a,%d,%d.5\n", i, i)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := data.CSVSpec{ClientColumn: "c", TargetColumn: "y", Task: data.Classification}
	_, _, err := ReadData(path, spec, data.FederateConfig{})
	var le *LabelsError
	if !errors.As(err, &le) || le.Labels != 10 || le.Rows != 10 {
		t.Fatalf("got %v, want a LabelsError of 10 labels", err)
	}
	spec.Task = data.Regression
	rec, fed, err := ReadData(path, spec, data.FederateConfig{TestFraction: 0.2})
	if err != nil || rec.Rows() != 10 || len(fed.Existing) != 1 {
		t.Fatalf("regression: %v", err)
	}
	rec, _, err = ReadData(path, spec, data.FederateConfig{NewClients: []string{"nobody"}})
	if err == nil || rec == nil {
		t.Fatalf("federation error %v with records %v", err, rec)
	}
}

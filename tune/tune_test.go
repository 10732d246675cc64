package tune

import (
	"errors"
	"slices"
	"testing"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/option"
	"github.com/pacpfl/pacpfl/report"
)

func smallPoly(t *testing.T) *data.Dataset {
	t.Helper()
	c := data.DefaultPolynomial()
	c.Existing, c.New, c.Seed = 4, 0, 1000
	ds, err := data.Polynomial(c)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// Validate names the field at fault: an unknown method, then folds outside
// 2…clients.
func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		method string
		folds  int
		field  string
	}{
		{"pacpfl", 2, ""}, {"pooled", 4, ""}, {"fedavg", 2, "Method"}, {"pfedgp", 2, "Method"},
		{"mtl", 1, "CV.Folds"}, {"mtl", 5, "CV.Folds"},
	} {
		err := Options{Method: tc.method, CV: fl.CVOptions{Folds: tc.folds}}.Validate(4)
		var fe *option.FieldError
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%s, %d folds: %v", tc.method, tc.folds, err)
		case tc.field != "" && (!errors.As(err, &fe) || !slices.Equal(fe.Fields, []string{tc.field})):
			t.Errorf("%s, %d folds: %v, want a FieldError on %s", tc.method, tc.folds, err, tc.field)
		}
	}
}

// PAC-PFL's search trains once per setting (τ, σ_P, η) and fold.
func TestRuns(t *testing.T) {
	o := Options{CV: fl.CVOptions{Taus: []float64{1, 2}, SigmaPs: []float64{1, 2, 3}, Folds: 5}}
	if got := o.Runs(); got != 30 {
		t.Errorf("without LRs: %d runs, want 30", got)
	}
	o.CV.LRs = []float64{0.1, 0.2}
	if got := o.Runs(); got != 60 {
		t.Errorf("two LRs: %d runs, want 60", got)
	}
}

// A baseline's search reports every setting of its grid, best first, with
// the options' folds, seed and data set.
func TestRunBaseline(t *testing.T) {
	ds := smallPoly(t)
	o := Options{Method: fl.MethodVanilla, CV: fl.CVOptions{Folds: 2, Seed: 7}, FitSteps: []int{3, 10},
		FitLRs: []float64{0.01}, Dataset: "polynomial"}
	rep, err := Run(ds, o)
	if err != nil {
		t.Fatal(err)
	}
	r, ok := rep.(*report.TuneBaseline)
	if !ok {
		t.Fatalf("report %T", rep)
	}
	if len(r.Points) != 2 || r.Seed != 7 || r.Folds != 2 || r.Clients != 4 || r.Dataset != "polynomial" ||
		r.Method != fl.MethodVanilla {
		t.Fatalf("report %+v", r)
	}
	if r.Best.RSMSE != r.Points[0].RSMSE || r.Points[0].RSMSE > r.Points[1].RSMSE || len(r.Points[0].Folds) != 2 {
		t.Errorf("points %+v, best first", r.Points)
	}
	o.FitSteps = nil // an empty grid: the options' fault
	if _, err := Run(ds, o); !errors.Is(err, ErrInvalid) {
		t.Errorf("empty grid: %v, want ErrInvalid", err)
	}
}

// PAC-PFL's search reports each (τ, σ_P, η, T) point with the base
// options' k.
func TestRunPACPFL(t *testing.T) {
	ds := smallPoly(t)
	base := fl.DefaultPACPFLOptions()
	base.Server.K, base.Server.Rounds, base.Server.ClientsPerRound = 2, 3, 2
	o := Options{Method: fl.MethodPACPFL, Base: base, Dataset: "polynomial",
		CV: fl.CVOptions{Taus: []float64{0.2, 0.5}, SigmaPs: []float64{0.5}, Folds: 2, Seed: 3}}
	rep, err := Run(ds, o)
	if err != nil {
		t.Fatal(err)
	}
	r, ok := rep.(*report.Tune)
	if !ok {
		t.Fatalf("report %T", rep)
	}
	if len(r.Points) != 2 || r.K != 2 || r.Seed != 3 || r.Best.RSMSE != r.Points[0].RSMSE {
		t.Errorf("report %+v", r)
	}
}

package train

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/option"
)

// CSVSource is a user's CSV file and how a job reads and federates it
// (ReadData): the data of a CSV job.
type CSVSource struct {
	Path     string
	Spec     data.CSVSpec
	Federate data.FederateConfig
	// SaveClients stores the existing clients' training rows in the model
	// (Options.SaveClients).
	SaveClients bool
	// Notes, if set, is told what the user should know before the run:
	// rows dropped for a missing value, a model file that holds training
	// rows of a differentially private run.
	Notes io.Writer
}

// Validate refuses, before the file is read, a source without its client
// or target column, a test fraction outside [0, 1) or an unknown task, as
// an *option.FieldError naming the field by its path in CSVSource
// ("Spec.ClientColumn", "Federate.TestFraction").
func (s *CSVSource) Validate() error {
	switch sp := &s.Spec; {
	case sp.ClientColumn == "":
		return option.Format("", []string{"Spec.ClientColumn"}, "%s is required: the column naming each row's client")
	case sp.TargetColumn == "":
		return option.Format("", []string{"Spec.TargetColumn"}, "%s is required")
	case !(s.Federate.TestFraction >= 0 && s.Federate.TestFraction < 1):
		return option.Range("", "Federate.TestFraction", s.Federate.TestFraction, "must lie in [0, 1)")
	case sp.Task != data.Regression && sp.Task != data.Classification:
		return option.Format("", []string{"Spec.Task"}, "unknown %s %q (want regression or classification)", sp.Task)
	}
	return nil
}

// hinted is err told as a FieldError naming the option that helps (its
// Error); errors.As finds both.
type hinted struct {
	err  error
	hint *option.FieldError
}

func (h *hinted) Error() string   { return h.hint.Error() }
func (h *hinted) Unwrap() []error { return []error{h.hint, h.err} }

// Validate refuses, before any data are read, BNN options out of range:
// the hidden units, the weight samples L (stated: Model.Samples 0, fl's
// default, is refused too), the hyper-prior's σ_μ and σ_ω, the bounds'
// weight draws (*option.FieldErrors naming the field by its path in
// BNNOptions) and the posterior inference (lml's error).
func (o *BNNOptions) Validate() error {
	switch b := &o.Options; {
	case o.Hidden < 0:
		return option.Range("", "Hidden", o.Hidden, "must be ≥ 0")
	case o.Model.Samples < 1:
		return option.Range("", "Model.Samples", o.Model.Samples, "must be at least 1")
	case !(b.SigmaMu > 0) || math.IsInf(b.SigmaMu, 0) || !(b.SigmaOmega > 0) || math.IsInf(b.SigmaOmega, 0):
		return option.Joint("", []string{"Options.SigmaMu", "Options.SigmaOmega"}, []any{b.SigmaMu, b.SigmaOmega},
			"must be positive and finite")
	case b.Bounds.WeightDraws < 1:
		return option.Range("", "Options.Bounds.WeightDraws", b.Bounds.WeightDraws, "must be at least 1")
	}
	return o.Model.Posterior.Validate()
}

// NewCSVJob reads and federates src and builds the job on it: GP clients
// with gp's options for a regression target, BNN clients with bnn's for a
// classification one, each given the federated data set (the options
// depend on its clients). A classification target of mostly distinct
// labels is refused (LabelsError).
func NewCSVJob(src CSVSource, gp func(*data.Dataset) (*GPOptions, error),
	bnn func(*data.Dataset) (*BNNOptions, error)) (*Job, error) {
	notes := src.Notes
	if notes == nil {
		notes = io.Discard
	}
	rec, fed, err := ReadData(src.Path, src.Spec, src.Federate)
	if rec != nil && rec.Dropped > 0 {
		fmt.Fprintf(notes, "note: %d row(s) with a missing value dropped (--drop-missing)\n", rec.Dropped)
	}
	var le *LabelsError
	if errors.As(err, &le) {
		return nil, &hinted{err, option.Format("", []string{"Spec.Task"}, "%[2]v (%[1]s regression)", err)}
	}
	if err != nil {
		return nil, err
	}
	o := Options{Source: src.Path, ClientColumn: src.Spec.ClientColumn, Seed: src.Federate.Seed,
		SaveClients: src.SaveClients}
	if src.Spec.Task == data.Classification {
		o.BNN, err = bnn(fed.Dataset)
	} else {
		o.GP, err = gp(fed.Dataset)
	}
	if err != nil {
		return nil, err
	}
	job := &Job{CSV: &CSVJob{Records: rec, Data: fed, Options: o, Info: ReportInfo{Source: src.Path,
		Task: string(src.Spec.Task), ClientColumn: src.Spec.ClientColumn, SplitColumn: src.Spec.SplitColumn,
		TestFraction: src.Federate.TestFraction, Seed: src.Federate.Seed}}}
	if job.Config().DP != nil && src.SaveClients {
		fmt.Fprintln(notes, "note: the model file holds the existing clients' training rows (--save-clients); "+
			"the DP guarantee covers the particles, not those rows")
	}
	return job, nil
}

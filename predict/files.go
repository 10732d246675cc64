package predict

import (
	"errors"
	"fmt"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/option"
)

// ConfigError is a prediction's options that cannot work (a missing
// file name, an unknown inference, more inducing inputs than a client's
// rows): bad input that the caller can fix. An error of an option field
// is an *option.FieldError naming the field (Override's and FileOptions'
// by their names in those types: "Mode", "Inducing", "Model", ...), for a
// front end to render with its own names.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// fieldErrorf is a ConfigError of fields (option.Format).
func fieldErrorf(fields []string, format string, a ...any) error {
	return &ConfigError{option.Format("", fields, format, a...)}
}

// Override replaces parts of a model file's GP inference: the mode if
// SetMode, the number of inducing inputs if SetInducing (the seed of their
// choice is always the file's).
type Override struct {
	Mode                 string
	Inducing             int
	SetMode, SetInducing bool
}

// Check refuses a bad mode or M (ConfigErrors), before any file is read.
func (o Override) Check() error {
	if o.SetMode {
		if err := (fl.GPInference{Mode: o.Mode}).Validate(); err != nil || o.Mode == "" {
			return fieldErrorf([]string{"Mode"}, "%s %q: want exact, sparse or auto", o.Mode)
		}
	}
	if o.Inducing < 0 {
		return fieldErrorf([]string{"Inducing"}, "%s %d: want at least 1 inducing input (0: the default %d)",
			o.Inducing, fl.DefaultInducing)
	}
	return nil
}

// Apply overrides p's inference; on a classification (BNN) model an
// override is a ConfigError.
func (o Override) Apply(p *Predictor) error {
	var err error
	if o.SetMode {
		err = p.SetInferenceMode(o.Mode)
	}
	if err == nil && o.SetInducing {
		err = p.SetInducing(o.Inducing)
	}
	if errors.Is(err, ErrNotGP) {
		return fieldErrorf([]string{"Mode", "Inducing"}, "%s and %s apply to GP (regression) models; this one has %s "+
			"clients", p.Model().Kind)
	}
	if err != nil {
		return &ConfigError{err}
	}
	return nil
}

// LoadWith reads the model file path (Load) and applies o to it.
func LoadWith(path string, o Override) (*Predictor, error) {
	p, err := Load(path)
	if err != nil {
		return nil, err
	}
	if err := o.Apply(p); err != nil {
		return nil, err
	}
	return p, nil
}

// Explain words the errors of Predict and PredictClients that the options
// can fix as FieldErrors naming the option that helps (Override's
// "Inducing" and "Mode", FileOptions' "ContextColumn"): an M from an
// Override above a client's rows is a ConfigError, the model's own M above
// them and a client without context rows are not. Other errors are
// returned as they are.
func Explain(err error) error {
	var ie *InducingError
	var ne *NoContextError
	inducing := []string{"Inducing", "Mode"}
	switch {
	case errors.As(err, &ie) && ie.Requested:
		return fieldErrorf(inducing, "client %[3]q: %[1]s %[4]d: the client is conditioned on only %[5]d rows "+
			"(give %[1]s %[5]d or fewer, or %[2]s exact)", ie.Client, ie.M, ie.Rows)
	case errors.As(err, &ie):
		return option.Format("", inducing, "client %[3]q: the model's GP inference is %[4]s, but the client is "+
			"conditioned on only %[5]d rows (give %[1]s %[5]d or fewer, or %[2]s exact)", ie.Client, ie.Inference,
			ie.Rows)
	case errors.As(err, &ne):
		where := ""
		if ne.Source != "" {
			where = fmt.Sprintf("%s:%d: ", ne.Source, ne.Line)
		}
		return option.Format("", []string{"ContextColumn"}, "%[2]sclient %[3]q is not one the model was trained on "+
			"(or its rows were not saved), and no row of it is marked as its own training data: give a %[1]s "+
			"marking some of its labelled rows", where, ne.Client)
	}
	return err
}

// FileOptions are a prediction from files (pacpfl predict): the model
// file, the CSV file of rows, the column marking its context rows ("":
// none) and the overrides of the model's GP inference.
type FileOptions struct {
	Model, Data, ContextColumn string
	Override                   Override
}

// Check refuses unusable options (ConfigErrors) before any file is read.
func (o FileOptions) Check() error {
	switch {
	case o.Model == "":
		return fieldErrorf([]string{"Model"}, "%s FILE is required")
	case o.Data == "":
		return fieldErrorf([]string{"Data"}, "%s FILE.csv is required")
	}
	return o.Override.Check()
}

// PredictFile predicts every row of o.Data that is not a context row with
// the model of o.Model, its errors worded as Explain says.
func PredictFile(o FileOptions) (*Result, error) {
	p, err := LoadWith(o.Model, o.Override)
	if err != nil {
		return nil, err
	}
	rec, err := p.ReadCSV(o.Data, o.ContextColumn)
	if err != nil {
		return nil, err
	}
	res, err := p.Predict(rec)
	if err != nil {
		return nil, Explain(err)
	}
	return res, nil
}

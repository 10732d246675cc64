package predict

import (
	"errors"
	"fmt"

	"github.com/pacpfl/pacpfl/fl"
)

// ConfigError is a prediction's options that cannot work (a missing
// file name, an unknown inference, more inducing inputs than a client's
// rows): bad input that the caller can fix. Its messages name pacpfl
// predict's flags.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

func configErrorf(format string, a ...any) error { return &ConfigError{fmt.Errorf(format, a...)} }

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
			return configErrorf("--gp-inference %q: want exact, sparse or auto", o.Mode)
		}
	}
	if o.Inducing < 0 {
		return configErrorf("--inducing %d: want at least 1 inducing input (0: the default %d)",
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
		return configErrorf("--gp-inference and --inducing apply to GP (regression) models; this one has %s clients",
			p.Model().Kind)
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
// can fix in terms of pacpfl predict's flags: an M from an Override above
// a client's rows is a ConfigError, the model's own M above them and a
// client without context rows say which flag helps. Other errors are
// returned as they are.
func Explain(err error) error {
	var ie *InducingError
	var ne *NoContextError
	switch {
	case errors.As(err, &ie) && ie.Requested:
		return configErrorf("client %q: --inducing %d: the client is conditioned on only %d rows "+
			"(give --inducing %d or fewer, or --gp-inference exact)", ie.Client, ie.M, ie.Rows, ie.Rows)
	case errors.As(err, &ie):
		return fmt.Errorf("client %q: the model's GP inference is %s, but the client is conditioned on only %d rows "+
			"(give --inducing %d or fewer, or --gp-inference exact)", ie.Client, ie.Inference, ie.Rows, ie.Rows)
	case errors.As(err, &ne):
		s := fmt.Sprintf("client %q is not one the model was trained on (or its rows were not saved), and no row "+
			"of it is marked as its own training data: give a --context-column marking some of its labelled rows",
			ne.Client)
		if ne.Source != "" {
			s = fmt.Sprintf("%s:%d: %s", ne.Source, ne.Line, s)
		}
		return errors.New(s)
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
		return configErrorf("--model FILE is required")
	case o.Data == "":
		return configErrorf("--data FILE.csv is required")
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

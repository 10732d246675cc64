package clienteval

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/lml"
	"github.com/pacpfl/pacpfl/option"
)

// ConfigError is an evaluation's options that cannot work (a missing data
// file, a width below 1, more inducing inputs than rows): bad input, as
// opposed to a file that cannot be read or a figure that is not finite.
// An error of option fields is an *option.FieldError naming them by their
// paths in GPFile or BNNFile ("Data", "Inference.Mode"), for a front end
// to render with its own names.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// fieldErrorf is a ConfigError of fields (option.Format).
func fieldErrorf(fields []string, format string, a ...any) error {
	return &ConfigError{option.Format("", fields, format, a...)}
}

// GPFile is a GP evaluation on a CSV file (pacpfl gp eval): features then
// y in the last column of every row.
type GPFile struct {
	// Data is the CSV file, read with lines of at most MaxLine bytes
	// (0: data.DefaultMaxCSVLine).
	Data    string
	MaxLine int
	// Params is a file of φ, one number a line in the order of the
	// layout; without it φ is drawn from the hyper-prior of standard
	// deviation SigmaP with InitSeed (≥ 0).
	Params   string
	InitSeed int64
	SigmaP   float64
	// Hidden are the hidden widths of both networks and DF the kernel
	// network's output width.
	Hidden    []int
	DF        int
	Inference fl.GPInference
	// Memory, if set, refuses an evaluation whose buffers (a lower bound,
	// in bytes) do not fit; what names the sizes.
	Memory func(what string, bytes float64) error
}

// Check refuses unusable options (ConfigErrors) before any file is read.
func (o *GPFile) Check() error {
	switch m := o.Inference.Mode; {
	case o.Data == "":
		return fieldErrorf([]string{"Data"}, "%s is required")
	case (o.Params == "") == (o.InitSeed < 0):
		return fieldErrorf([]string{"Params", "InitSeed"}, "give exactly one of %s FILE and %s N (N ≥ 0)")
	case o.DF < 1:
		return fieldErrorf([]string{"DF"}, "%s %d: want at least 1", o.DF)
	case !(o.SigmaP > 0) || math.IsInf(o.SigmaP, 0):
		return fieldErrorf([]string{"SigmaP"}, "%s %v: want a positive number", o.SigmaP)
	case m != fl.InferenceExact && m != fl.InferenceSparse && m != fl.InferenceAuto:
		return fieldErrorf([]string{"Inference.Mode"}, "%s %q: want exact, sparse or auto", m)
	case o.Inference.Inducing < 0:
		return fieldErrorf([]string{"Inference.Inducing"}, "%s %d: want at least 1 inducing input (0: the default %d)",
			o.Inference.Inducing, fl.DefaultInducing)
	}
	return nil
}

// EvalGP checks o, reads the data and φ and evaluates the GP (GP).
func EvalGP(o GPFile) (*GPResult, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	X, y, d, err := data.ReadNumericCSV(o.Data, maxLine(o.MaxLine))
	if err != nil {
		return nil, err
	}
	model := lml.Model{D: d, DF: o.DF, MeanHidden: o.Hidden, KernelHidden: o.Hidden}
	sparse, M, err := o.Inference.Plan(len(y))
	if err != nil {
		return nil, fieldErrorf([]string{"Inference.Inducing"}, "%s %d: the data have only %d rows",
			o.Inference.Inducing, len(y))
	}
	if o.Memory != nil {
		what := fmt.Sprintf("--hidden %v --df %d on %d samples", o.Hidden, o.DF, len(y))
		if err := o.Memory(what, GPMemoryBytes(model, len(y), sparse, M)); err != nil {
			return nil, err
		}
	}
	var phi []float64
	if o.Params == "" {
		phi, err = GPPrior(model, o.SigmaP, uint64(o.InitSeed))
	} else if phi, err = data.ReadNumbers(o.Params); err == nil {
		err = CheckParams(o.Params, phi, model)
	}
	if err != nil {
		return nil, err
	}
	return GP(model, o.Inference, X, y, phi)
}

func maxLine(n int) int {
	if n <= 0 {
		return data.DefaultMaxCSVLine
	}
	return n
}

// BNNFile is a BNN evaluation on a CSV file (pacpfl bnn eval): the class
// label (0..Classes−1) then the features in every row.
type BNNFile struct {
	// Data is the CSV file, read with lines of at most MaxLine bytes
	// (0: data.DefaultMaxCSVLine).
	Data    string
	MaxLine int
	// Arch is lml.ArchMLP, whose input is the row's features, or
	// lml.ArchBCNN, whose input is an image of Image "HxW" ("": 28x28).
	Arch, Image              string
	Hidden, Classes, Samples int
	// InitSeed (≥ 0) draws φ from the hyper-prior of standard deviations
	// SigmaMu and SigmaOmega, and then ε.
	InitSeed            int64
	SigmaMu, SigmaOmega float64
	// Memory, if set, refuses an evaluation whose buffers (a lower bound,
	// in bytes) do not fit; what names the sizes.
	Memory func(what string, bytes float64) error
}

// Model checks o (ConfigErrors) and returns the network it describes,
// the mlp's input size still open (the data's feature count).
func (o *BNNFile) Model() (lml.BNN, error) {
	switch {
	case o.Data == "":
		return lml.BNN{}, fieldErrorf([]string{"Data"}, "%s is required")
	case o.InitSeed < 0:
		return lml.BNN{}, fieldErrorf([]string{"InitSeed"}, "%s N (N ≥ 0) is required")
	case o.Samples < 1:
		return lml.BNN{}, fieldErrorf([]string{"Samples"}, "%s %d: want at least 1", o.Samples)
	case o.Classes < 2:
		return lml.BNN{}, fieldErrorf([]string{"Classes"}, "%s %d: want at least 2", o.Classes)
	case o.Hidden < 0:
		return lml.BNN{}, fieldErrorf([]string{"Hidden"}, "%s %d: want ≥ 0", o.Hidden)
	case !(o.SigmaMu > 0) || math.IsInf(o.SigmaMu, 0) || !(o.SigmaOmega > 0) || math.IsInf(o.SigmaOmega, 0):
		return lml.BNN{}, fieldErrorf([]string{"SigmaMu", "SigmaOmega"}, "%[1]s %[3]v and %[2]s %[4]v: want positive numbers",
			o.SigmaMu, o.SigmaOmega)
	case o.Arch != lml.ArchMLP && o.Arch != lml.ArchBCNN:
		return lml.BNN{}, fieldErrorf([]string{"Arch"}, "unknown %s %q (want mlp or bcnn)", o.Arch)
	case o.Image != "" && o.Arch != lml.ArchBCNN:
		return lml.BNN{}, fieldErrorf([]string{"Image", "Arch"},
			"%s is for %s bcnn (the mlp takes the features as they are)")
	}
	model := lml.BNN{Arch: o.Arch, Hidden: o.Hidden, Classes: o.Classes}
	if o.Arch != lml.ArchBCNN {
		return model, nil
	}
	model.InH, model.InW = 28, 28
	if o.Image != "" {
		h, w, ok := parseImageSize(o.Image)
		if !ok {
			return model, fieldErrorf([]string{"Image"}, "%s %q: want HxW with positive integers, e.g. 28x28", o.Image)
		}
		model.InH, model.InW = h, w
	}
	if err := model.Validate(); err != nil {
		return model, &ConfigError{err}
	}
	return model, nil
}

// EvalBNN checks o, reads the data and evaluates the BNN (BNN).
func EvalBNN(o BNNFile) (*BNNResult, error) {
	model, err := o.Model()
	if err != nil {
		return nil, err
	}
	X, y, nf, err := data.ReadLabelledCSV(o.Data, maxLine(o.MaxLine))
	if err != nil {
		return nil, err
	}
	if model.Arch == lml.ArchMLP {
		model.InC, model.InH, model.InW = 1, 1, nf
	} else if nf != model.InH*model.InW {
		return nil, option.Format("", []string{"Image"}, "%[2]s: %[3]d features per row, the bcnn's %[4]d×%[5]d "+
			"image needs %[6]d (see %[1]s)", o.Data, nf, model.InH, model.InW, model.InH*model.InW)
	}
	if err := model.Validate(); err != nil {
		return nil, &ConfigError{err}
	}
	if err := model.CheckData(X, y); err != nil {
		return nil, fmt.Errorf("%s: %w", o.Data, err)
	}
	c := BNNConfig{
		Model:      model,
		Samples:    o.Samples,
		SigmaMu:    o.SigmaMu,
		SigmaOmega: o.SigmaOmega,
		Seed:       uint64(o.InitSeed),
	}
	if o.Memory != nil {
		what := fmt.Sprintf("--arch %s --hidden %d --samples %d on %d samples", o.Arch, o.Hidden, o.Samples, len(y))
		if err := o.Memory(what, c.MemoryBytes(len(y))); err != nil {
			return nil, err
		}
	}
	return BNN(c, X, y)
}

// parseImageSize parses "HxW" (or "HXW") with positive integers.
func parseImageSize(s string) (h, w int, ok bool) {
	a, b, found := strings.Cut(strings.ToLower(s), "x")
	if !found {
		return 0, 0, false
	}
	h, err1 := strconv.Atoi(a)
	w, err2 := strconv.Atoi(b)
	return h, w, err1 == nil && err2 == nil && h > 0 && w > 0
}

// Package tune chooses a method's hyper-parameters as pacpfl tune does:
// by K-fold cross-validation on the existing clients' training data only,
// PAC-PFL's τ, σ_P, η and T (fl.CrossValidate) or a baseline's
// (methods.TuneBaseline), and returns the report of the search.
package tune

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/methods"
	"github.com/pacpfl/pacpfl/option"
	"github.com/pacpfl/pacpfl/report"
)

// Methods are the methods Run tunes.
var Methods = []string{fl.MethodPACPFL, methods.MTL{}.Name(), methods.MAML{}.Name(), fl.MethodVanilla, fl.MethodPooled}

// Options configure Run.
type Options struct {
	// Method is one of Methods.
	Method string
	// CV is the search: PAC-PFL's grid (Taus, SigmaPs, LRs, Checkpoints,
	// Progress) and, for every method, Folds, Seed and Split.
	CV fl.CVOptions
	// Base are PAC-PFL's options around its grid.
	Base fl.PACPFLOptions
	// FitSteps and FitLRs are the grid of Adam steps and step sizes of
	// Vanilla's and Pooled's LML fits (methods.DefaultFitGrid).
	FitSteps []int
	FitLRs   []float64
	// Model is the clients' GP model (nil: fl.NewGPModel's).
	Model *fl.GPModel
	// Dataset names the data set in the report (polynomial, pv-ew-150);
	// Net describes the GP networks in PAC-PFL's text.
	Dataset, Net string
}

// Validate reports, as an *option.FieldError, a Method not in Methods or
// a number of folds CV.Folds outside 2…clients.
func (o Options) Validate(clients int) error {
	if !slices.Contains(Methods, o.Method) {
		return option.Custom("", []string{"Method"}, []any{o.Method}, func(n []string) string {
			return fmt.Sprintf("%s %q: want pacpfl, mtl, maml, vanilla or pooled", n[0], o.Method)
		})
	}
	if o.CV.Folds < 2 || o.CV.Folds > clients {
		return option.Custom("", []string{"CV.Folds"}, []any{o.CV.Folds}, func(n []string) string {
			return fmt.Sprintf("%s %d: want 2 ≤ K ≤ %d clients", n[0], o.CV.Folds, clients)
		})
	}
	return nil
}

// Runs is the number of training runs of PAC-PFL's search, the total that
// CV.Progress counts to: one per setting (τ, σ_P, η) and fold.
func (o Options) Runs() int {
	return len(o.CV.Taus) * len(o.CV.SigmaPs) * max(len(o.CV.LRs), 1) * o.CV.Folds
}

// Report is the report of a search: *report.Tune for PAC-PFL,
// *report.TuneBaseline for a baseline.
type Report interface{ WriteText(w io.Writer) }

// ErrInvalid matches (errors.Is) the errors of Run about options or data
// the search cannot use (a client too small to split, an empty grid).
var ErrInvalid = errors.New("tune: invalid options")

type invalidError struct{ error }

func (e invalidError) Is(target error) bool { return target == ErrInvalid }
func (e invalidError) Unwrap() error        { return e.error }

// Run tunes o.Method on the existing clients of ds and returns the report
// of the search, best setting first. A baseline's setting whose training
// fails is a result of the search; if every one fails, Run returns the
// report with an error (and no report for a grid of one setting).
func Run(ds *data.Dataset, o Options) (Report, error) {
	start := time.Now()
	g := o.Model
	if g == nil {
		g = fl.NewGPModel(ds.D)
	}
	cv := o.CV
	if o.Method == fl.MethodPACPFL {
		pts, err := fl.CrossValidate(ds, g, o.Base, cv)
		if err != nil {
			return nil, err
		}
		return &report.Tune{Dataset: o.Dataset, Seed: cv.Seed, Folds: cv.Folds, Split: cv.Split,
			Clients: len(ds.Existing), Points: pts, Best: pts[0], Seconds: time.Since(start).Seconds(),
			K: o.Base.Server.K, Beta: o.Base.Beta.String(), Net: o.Net}, nil
	}
	pts, err := methods.TuneBaseline(ds, o.Method, func(int) *fl.GPModel { return g }, o.FitSteps, o.FitLRs,
		cv.Folds, cv.Seed, cv.Split)
	if err != nil {
		return nil, invalidError{err}
	}
	if math.IsInf(pts[0].RSMSE, 1) && len(pts) == 1 {
		return nil, fmt.Errorf("every setting failed: %s", pts[0].Failed)
	}
	rep := &report.TuneBaseline{Dataset: o.Dataset, Method: o.Method, Seed: cv.Seed, Folds: cv.Folds,
		Split: cv.Split, Points: pts, Best: pts[0], Clients: len(ds.Existing), Seconds: time.Since(start).Seconds()}
	if pts[0].Failed != "" {
		return rep, fmt.Errorf("every setting failed; the first: %s", pts[0].Failed)
	}
	return rep, nil
}

// Package harness runs experiments: methods on federated data that is a
// function of the seed, over several seeds, with one summary of each metric
// (mean ± 95 % confidence interval), per-seed and per-client values and
// timings, progress through one Observer and cancellation through a context.
//
// Its shape follows gonum's optimize: a Method interface, one driver (Run)
// and one observer for progress. The methods themselves stay in their
// packages (fl, fl/mtl, fl/maml, …); a Method adapts one to the harness.
//
// Concurrency: Run runs one method at a time on the calling goroutine (a
// method may use every core inside its Run) and calls the Observer there;
// separate Runs share nothing. Errors: an experiment that cannot run wraps
// ErrBadExperiment; a method's or the data's error comes back wrapped with
// the method and the seed; a done context gives ctx.Err().
package harness

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
)

// Method is one learning method, ready to run with its options set.
type Method interface {
	// Name is the method's key in reports ("pacpfl", "vanilla", or a
	// sweep's level such as "k=4"); the names of an experiment's methods
	// must differ.
	Name() string
	// Run trains the method on ds with the random streams of seed and
	// evaluates it on ds's test data. It reports its rounds to obs (which
	// is never nil) and should return ctx.Err() soon after ctx is done.
	Run(ctx context.Context, ds *data.Dataset, seed uint64, obs Observer) (*fl.MethodResult, error)
}

// Event is one step of progress.
type Event struct {
	Kind EventKind
	// Method is the Name of the method, Seed its seed, SeedIndex the
	// position of the seed in the experiment (from 0) and Seeds their
	// number: the harness fills them in.
	Method    string
	Seed      uint64
	SeedIndex int
	Seeds     int
	// Phase names the part of a method's run an event belongs to: "" for
	// its training rounds, another name (e.g. "personalisation") for a
	// later stage counted in its own steps.
	Phase string
	// Round of Rounds (Round events): rounds, or a phase's steps; Value is
	// the round's objective (PAC-PFL: the mean client log marginal
	// likelihood), NaN if none.
	Round, Rounds int
	Value         float64
	// Result is the method's result on this seed (Done events) and Data
	// the seed's data set it ran on (Done and DataReady events).
	Result *fl.MethodResult
	Data   *data.Dataset
}

// EventKind tells what an Event reports.
type EventKind int

const (
	// Round: a method finished a training round.
	Round EventKind = iota
	// Done: a method finished on one seed (Event.Result).
	Done
	// Phase: a method started the phase Event.Phase (whose steps, if
	// counted, follow as Round events of that phase).
	Phase
	// DataReady: the data set of a seed (Event.Data) is built, before any
	// method runs on it; Event.Method is empty.
	DataReady
)

// Observer receives the progress of an experiment. Run calls it from the
// goroutine that called Run.
type Observer interface {
	Observe(Event)
}

// ObserverFunc is an Observer that is a function.
type ObserverFunc func(Event)

// Observe calls f(e).
func (f ObserverFunc) Observe(e Event) { f(e) }

// Experiment is the data (a function of the seed), the methods and the
// seeds of a comparison. Every method runs on the same data set of a seed.
type Experiment struct {
	Data    func(seed uint64) (*data.Dataset, error)
	Methods []Method
	Seeds   []uint64
}

// Report is the outcome of Run: one MethodReport per method, in the order
// of Experiment.Methods.
type Report struct {
	Seeds   []uint64
	Methods []*MethodReport
	// Seconds is the wall time of Run.
	Seconds float64
}

// Method returns the report of the method named name, or nil.
func (r *Report) Method(name string) *MethodReport {
	for _, m := range r.Methods {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// MethodReport is one method's results over the seeds.
type MethodReport struct {
	Name string
	// Results are the method's results, one per seed in seed order.
	Results []*fl.MethodResult
	// PerSeed holds, per metric key (SeedValues), one value per seed in
	// seed order; Summary the mean ± 95 % CI of each (fl.Summarise: no
	// interval, NaN, for one seed).
	PerSeed map[string][]float64
	Summary map[string]fl.Summary
	// PerClient holds, per metric key (ClientValues), one list per seed of
	// one value per client, in client order.
	PerClient map[string][][]float64
	// Seconds is the sum of the results' Seconds (the methods' own timing
	// of training and evaluation, without building the data).
	Seconds float64
}

// ErrBadExperiment wraps the errors of an experiment that cannot run.
var ErrBadExperiment = errors.New("harness: bad experiment")

// Run runs every method of e on every seed, seed by seed (the data of a seed
// are built once and shared by the methods), and summarises them. It stops
// at the first error, wrapped with the method and the seed, and returns
// ctx.Err() when ctx is done between two runs or a method returned it.
// obs may be nil.
func Run(ctx context.Context, e Experiment, obs Observer) (*Report, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	if obs == nil {
		obs = ObserverFunc(func(Event) {})
	}
	start := time.Now()
	rep := &Report{Seeds: append([]uint64(nil), e.Seeds...)}
	for _, m := range e.Methods {
		rep.Methods = append(rep.Methods, &MethodReport{
			Name: m.Name(), PerSeed: map[string][]float64{}, PerClient: map[string][][]float64{},
		})
	}
	for si, seed := range e.Seeds {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ds, err := e.Data(seed)
		if err != nil {
			return nil, fmt.Errorf("data of seed %d: %w", seed, err)
		}
		obs.Observe(Event{Kind: DataReady, Seed: seed, SeedIndex: si, Seeds: len(e.Seeds), Data: ds, Value: math.NaN()})
		for mi, m := range e.Methods {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			mr := rep.Methods[mi]
			fill := func(ev Event) Event {
				ev.Method, ev.Seed, ev.SeedIndex, ev.Seeds = mr.Name, seed, si, len(e.Seeds)
				return ev
			}
			res, err := m.Run(ctx, ds, seed, ObserverFunc(func(ev Event) { obs.Observe(fill(ev)) }))
			if err != nil {
				if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
					return nil, err
				}
				return nil, fmt.Errorf("%s, seed %d: %w", mr.Name, seed, err)
			}
			if res == nil {
				return nil, fmt.Errorf("%s, seed %d: the method returned no result", mr.Name, seed)
			}
			mr.add(res)
			obs.Observe(fill(Event{Kind: Done, Result: res, Data: ds, Value: math.NaN()}))
		}
	}
	for _, mr := range rep.Methods {
		mr.Summary = make(map[string]fl.Summary, len(mr.PerSeed))
		for key, xs := range mr.PerSeed {
			mr.Summary[key] = fl.Summarise(xs)
		}
	}
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

func (e *Experiment) check() error {
	switch {
	case e.Data == nil:
		return fmt.Errorf("%w: no data function", ErrBadExperiment)
	case len(e.Methods) == 0:
		return fmt.Errorf("%w: no methods", ErrBadExperiment)
	case len(e.Seeds) == 0:
		return fmt.Errorf("%w: no seeds", ErrBadExperiment)
	}
	names := map[string]bool{}
	for i, m := range e.Methods {
		if m == nil {
			return fmt.Errorf("%w: method %d is nil", ErrBadExperiment, i)
		}
		// A repeated name would pool two methods' runs as if they were
		// more seeds of one.
		if names[m.Name()] {
			return fmt.Errorf("%w: method %q appears twice", ErrBadExperiment, m.Name())
		}
		names[m.Name()] = true
	}
	seeds := map[uint64]bool{}
	for _, s := range e.Seeds {
		if seeds[s] {
			return fmt.Errorf("%w: seed %d appears twice (its runs would count as independent)", ErrBadExperiment, s)
		}
		seeds[s] = true
	}
	return nil
}

// add records the result of the next seed. A metric that appears on some
// seeds only (a mixture's mode specialisation) keeps the values it has.
func (mr *MethodReport) add(res *fl.MethodResult) {
	mr.Results = append(mr.Results, res)
	for key, v := range SeedValues(res) {
		mr.PerSeed[key] = append(mr.PerSeed[key], v)
	}
	for key, xs := range ClientValues(res) {
		mr.PerClient[key] = append(mr.PerClient[key], xs)
	}
	mr.Seconds += res.Seconds
}

// Seeds is n consecutive seeds from base: an experiment's seeds as
// pacpfl's --seeds and --seed-base give them.
func Seeds(n int, base uint64) []uint64 {
	out := make([]uint64, max(n, 0))
	for i := range out {
		out[i] = base + uint64(i)
	}
	return out
}

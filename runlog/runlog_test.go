package runlog

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/genfl"
	"github.com/pacpfl/pacpfl/harness"
	"github.com/pacpfl/pacpfl/methods"
)

// A phase's start and last step are always written; quiet writes nothing.
func TestPhases(t *testing.T) {
	var b strings.Builder
	p := NewPhases(&b, "seed 1", false)
	p.Phase("prior ERM")
	p.Round("prior ERM", "loss", 2, 2, 0.5)
	p.Count("per-user", "users", 1, 4) // within Every of the phase's first line: none
	assert.Equal(t, "seed 1: prior ERM…\nseed 1: prior ERM round [====================] 2/2, mean loss 0.5000, "+
		"elapsed 0s, ETA 0s\n", b.String())
	var q strings.Builder
	p = NewPhases(&q, "x", true)
	p.Phase("a")
	p.Count("a", "pairs", 1, 1)
	assert.Empty(t, q.String())
}

// The GenFL observer labels its lines with the seed and prints each
// seed's certificate when it is done.
func TestGenFLObserver(t *testing.T) {
	var b strings.Builder
	o := &GenFL{W: &b, Full: true}
	o.Observe(harness.Event{Kind: harness.Round, Phase: methods.PhaseSampling, Seed: 3, SeedIndex: 0, Seeds: 2,
		Round: 5, Rounds: 5})
	res := &genfl.FLSOBResult{Bound: &genfl.Bound{FedBoundResult: fl.FedBoundResult{Bound: 0.3, KL: 2, M: 10}},
		TestError: 0.2}
	o.Observe(harness.Event{Kind: harness.Done, Seed: 3, Result: &fl.MethodResult{Detail: res}})
	assert.Contains(t, b.String(), "seed 3 (1/2): FEDBOUND sampling weight draws [")
	assert.Contains(t, b.String(), "experiment genfl: seed 3: bound 0.3000, test error 0.2000")
}

type fakeBar struct {
	log   *[]string
	label string
}

func (b fakeBar) Update(step int, v float64) {
	*b.log = append(*b.log, fmt.Sprintf("%s %d", b.label, step))
}
func (b fakeBar) Done() { *b.log = append(*b.log, b.label+" done") }

// A Bar per method, seed and phase (the personalisation counts clients and
// has no value), then the line of the seed after OnDone.
func TestClassificationObserver(t *testing.T) {
	var log []string
	var b strings.Builder
	done := 0
	o := &Classification{W: &b, OnDone: func(harness.Event) { done++ },
		NewBar: func(label string, total int, unit string, hide bool) Bar {
			log = append(log, fmt.Sprintf("new %s %d %q %v", label, total, unit, hide))
			return fakeBar{&log, label}
		}}
	ev := harness.Event{Method: "pacpfl", Seed: 1, Seeds: 2, Rounds: 2}
	round := func(phase string, r int, v float64) {
		e := ev
		e.Kind, e.Phase, e.Round, e.Value = harness.Round, phase, r, v
		o.Observe(e)
	}
	round("", 1, -3)
	round("", 2, -2)
	round(methods.PhasePersonalisation, 1, math.NaN())
	e := ev
	e.Kind, e.Result = harness.Done, &fl.MethodResult{ExistingClass: &fl.ClassGroupMetrics{MeanAccuracy: 80}}
	o.Observe(e)
	assert.Equal(t,
		[]string{`new pacpfl seed 1/2 2 "" false`, "pacpfl seed 1/2 1", "pacpfl seed 1/2 2", "pacpfl seed 1/2 done",
			`new pacpfl seed 1/2 personalisation 2 "client" true`, "pacpfl seed 1/2 personalisation 1",
			"pacpfl seed 1/2 personalisation done"}, log)
	assert.Equal(t, 1, done)
	assert.Contains(t, b.String(), "experiment: seed 1 pacpfl   existing accuracy 80.00%")
}

// A Bar per method and seed, labelled as a sweep's levels when Sweep is
// set, its values hidden where HideValue says; each seed's line with
// SeedLines.
func TestRegressionObserver(t *testing.T) {
	var log []string
	var labels []string
	var b strings.Builder
	o := &Regression{W: &b, Sweep: "k-sweep", SeedLines: true, HideValue: func(m string) bool { return m == "ε=1" },
		NewBar: func(label string, total int, unit string, hide bool) Bar {
			labels = append(labels, fmt.Sprintf("%s/%d/%v", label, total, hide))
			return fakeBar{&log, label}
		}}
	res := &fl.MethodResult{Existing: fl.GroupMetrics{MeanRSMSE: 0.5, MeanCE: math.NaN()},
		New: fl.GroupMetrics{MeanRSMSE: 0.25, MeanCE: 0.125}, Seconds: 2}
	for _, m := range []string{"ε=1", "no DP"} {
		o.Observe(harness.Event{Kind: harness.Round, Method: m, Seed: 7, SeedIndex: 1, Seeds: 2, Round: 1, Rounds: 3})
		o.Observe(harness.Event{Kind: harness.Done, Method: m, Seed: 7, Result: res})
	}
	assert.Equal(t, []string{"k-sweep seed 2/2 ε=1/3/true", "k-sweep seed 2/2 no DP/3/false"}, labels)
	assert.Equal(t, []string{"k-sweep seed 2/2 ε=1 1", "k-sweep seed 2/2 ε=1 done", "k-sweep seed 2/2 no DP 1",
		"k-sweep seed 2/2 no DP done"}, log)
	assert.Contains(t, b.String(), "experiment: seed 7 no DP    existing RSMSE 0.500 CE –")
	b.Reset()
	o.Quiet = true
	o.Observe(harness.Event{Kind: harness.Done, Method: "x", Result: res})
	assert.Empty(t, b.String())
}

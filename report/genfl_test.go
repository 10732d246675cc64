package report

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/genfl"
	"github.com/pacpfl/pacpfl/harness"
)

func genflBound(bound, kl float64, m int) *genfl.Bound {
	return &genfl.Bound{FedBoundResult: fl.FedBoundResult{Bound: bound, KL: kl, M: m, SamplingAdd: 0.01},
		MC: genfl.MCResult{Evals: 100, Seconds: 2}}
}

// A FL-SOB seed's row is its bound and errors; a PFL seed's the users'
// means and spread; the report summarises the seeds and says whether the
// bound held on every one.
func TestGenFLReport(t *testing.T) {
	o := genfl.DefaultOptions(genfl.LearntPriorKind, genfl.Pairs, 1)
	r := NewGenFL("iid", "flsob", o, "cpu")
	assert.InDelta(t, 1-o.Objective.Delta-o.DeltaPrime, r.Confidence, 1e-15)
	hr := &harness.Report{Seeds: []uint64{1, 2}, Methods: []*harness.MethodReport{{Results: []*fl.MethodResult{
		{Detail: &genfl.FLSOBResult{Bound: genflBound(0.3, 50, 1000), TestError: 0.2, TrainError: 0.1}, Seconds: 3},
		{Detail: &genfl.FLSOBResult{Bound: genflBound(0.2, 40, 1000), TestError: 0.25, TrainError: 0.1}, Seconds: 3},
	}}}}
	require.NoError(t, r.Add(hr, 7))
	require.Len(t, r.Seeds, 2)
	assert.Equal(t, Float(0.3), r.Seeds[0].Bound)
	assert.Equal(t, 50.0, float64(r.Seeds[0].EvalsPerSec))
	assert.True(t, r.Seeds[0].Holds)
	assert.False(t, r.Seeds[1].Holds)
	assert.False(t, r.HoldsAll)
	assert.InDelta(t, 0.25, float64(r.Bound.Mean), 1e-15)
	assert.Contains(t, r.BoundIs, "m = 1000 images")
	var b strings.Builder
	r.WriteText(&b, 10, 100, 2)
	assert.Contains(t, b.String(), "is BELOW the measured test error on some seed")

	p := NewGenFL("shards", "pfl", o, "cpu")
	assert.Equal(t, o.ClientMC.N, p.MCSamples)
	s, err := NewGenFLSeed(4, &fl.MethodResult{Detail: &genfl.PFLResult{Clients: []genfl.ClientBound{
		{Bound: genflBound(0.4, 10, 50), TestError: 0.3}, {Bound: genflBound(0.2, 20, 50), TestError: 0.3},
	}}})
	require.NoError(t, err)
	assert.InDelta(t, 0.3, float64(s.Bound), 1e-15)
	assert.Equal(t, Float(0.2), s.ClientBound.Min)
	assert.Equal(t, Float(0.4), s.ClientBound.Max)
	assert.Equal(t, 1, s.ClientsAbove)
	assert.Equal(t, int64(200), s.MCEvaluations)

	_, err = NewGenFLSeed(1, &fl.MethodResult{})
	assert.Error(t, err)
	_, err = NewGenFLSeed(1, &fl.MethodResult{Detail: &genfl.PFLResult{}})
	assert.Error(t, err)
	assert.Error(t, p.Add(&harness.Report{}, 0))
}

func TestCPUNameNamesTheCores(t *testing.T) {
	if got := CPUName(); !strings.Contains(got, "GOMAXPROCS") {
		t.Fatalf("CPUName() = %q", got)
	}
}

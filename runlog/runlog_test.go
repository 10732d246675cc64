package runlog

import (
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
	assert.Equal(t, "seed 1: prior ERM…\nseed 1: prior ERM round [====================] 2/2, mean loss 0.5000, elapsed 0s, ETA 0s\n", b.String())
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
	o.Observe(harness.Event{Kind: harness.Round, Phase: methods.PhaseSampling, Seed: 3, SeedIndex: 0, Seeds: 2, Round: 5, Rounds: 5})
	res := &genfl.FLSOBResult{Bound: &genfl.Bound{FedBoundResult: fl.FedBoundResult{Bound: 0.3, KL: 2, M: 10}}, TestError: 0.2}
	o.Observe(harness.Event{Kind: harness.Done, Seed: 3, Result: &fl.MethodResult{Detail: res}})
	assert.Contains(t, b.String(), "seed 3 (1/2): FEDBOUND sampling weight draws [")
	assert.Contains(t, b.String(), "experiment genfl: seed 3: bound 0.3000, test error 0.2000")
}

package report

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacpfl/pacpfl/fl"
)

func TestTrainTextLines(t *testing.T) {
	tr := &fl.Result{Elapsed: 1500 * time.Millisecond, MeanLML: []float64{1, 2},
		Privacy: fl.Privacy{Epsilon: math.Inf(1)}}
	text := TrainText{Header: "head", LML: "mean client LML", Train: tr,
		Existing: RegressionLine(2, 0.5, math.NaN()), New: ClassLine(0, 1, 1),
		Bounds: &fl.MethodResult{BoundsUnavailable: "why"}}
	var b strings.Builder
	require.NoError(t, text.WriteText(&b))
	assert.Equal(t, "head\ntraining: 1.5s, mean client LML of the last rounds 1.500\n"+
		"existing clients: RSMSE 0.500  CE –\nnew clients:      none\n"+
		"differential privacy: none (deterministic SVGD; use --dp-epsilon)\nbounds: not computed: why\n", b.String())
	text.NoRounds = true
	b.Reset()
	require.NoError(t, text.WriteText(&b))
	assert.Contains(t, b.String(), "\n"+NoRounds+"\n")
	text.NoRounds, text.Private = false, true
	b.Reset()
	require.NoError(t, text.WriteText(&b))
	assert.Contains(t, b.String(), "client LMLs not shown")
}

package report

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/pacpfl/pacpfl/harness"
)

func TestSummaryText(t *testing.T) {
	assert.Equal(t, "1.50 ± 0.25", Summary{1.5, 0.25}.Text("%.2f"))
	assert.Equal(t, "1.500 ± –", Summary{1.5, Float(math.NaN())}.Text("%.3f"))
	assert.Equal(t, "–", Summary{Float(math.NaN()), Float(math.NaN())}.Text("%.2f"))
	assert.Equal(t, "PV-EW(610)", DatasetTitle("pv-ew-610"))
	assert.Equal(t, "x", DatasetTitle("x"))
}

// A mode line needs the mode purity; it gives the purity over the seeds
// and the mean chance level of both groups.
func TestModeLine(t *testing.T) {
	assert.Empty(t, ModeLine(map[string][]float64{harness.ExistingRSMSE: {1}}))
	line := ModeLine(map[string][]float64{
		harness.ExistingModePurity: {0.9}, harness.ExistingModeChance: {0.5},
		harness.NewModePurity: {0.8}, harness.NewModeChance: {0.6},
	})
	assert.Contains(t, line, "existing 0.90 ± – (chance 0.50), new 0.80 ± – (chance 0.60)")
}

package report

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/methods"
)

func TestSettingText(t *testing.T) {
	assert.Equal(t, "lr=0.01 steps=300", SettingText(map[string]float64{"steps": 300, "lr": 0.01}))
	assert.Contains(t, CVSplitText(fl.CVFuture), "--cv-split future")
}

// A baseline's grid whose best point failed gives no best setting.
func TestTuneBaselineText(t *testing.T) {
	r := TuneBaseline{Dataset: "polynomial", Method: "mtl", Folds: 2,
		Points: []methods.GridPoint{{Setting: map[string]float64{"lr": 1}, Failed: "NaN"}}}
	r.Best = r.Points[0]
	var b strings.Builder
	r.WriteText(&b)
	assert.Contains(t, b.String(), "| lr=1 | failed | NaN |")
	assert.NotContains(t, b.String(), "best:")
	r.Points[0].Failed, r.Best.Failed = "", ""
	b.Reset()
	r.WriteText(&b)
	assert.Contains(t, b.String(), "best: lr=1")
}

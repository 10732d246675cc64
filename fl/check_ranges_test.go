package fl

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/pacpfl/pacpfl/option"
)

func TestPACPFLOptionsCheckRanges(t *testing.T) {
	d := DefaultPACPFLOptions()
	assert.NoError(t, d.CheckRanges())
	zero := d
	zero.Server.ClientsPerRound, zero.Server.Batch, zero.Bounds.PriorSamples, zero.Server.Rounds = 0, 0, 0, 0
	assert.NoError(t, zero.CheckRanges(), "0 is auto (c, b), no bounds, no rounds")
	for field, set := range map[string]func(o *PACPFLOptions){
		"Server.K":               func(o *PACPFLOptions) { o.Server.K = 0 },
		"Server.Rounds":          func(o *PACPFLOptions) { o.Server.Rounds = -1 },
		"Server.ClientsPerRound": func(o *PACPFLOptions) { o.Server.ClientsPerRound = -1 },
		"Server.Batch":           func(o *PACPFLOptions) { o.Server.Batch = -1 },
		"Server.LR":              func(o *PACPFLOptions) { o.Server.LR = math.NaN() },
		"Server.Tau":             func(o *PACPFLOptions) { o.Server.Tau = math.Inf(1) },
		"SigmaP":                 func(o *PACPFLOptions) { o.SigmaP = 0 },
		"Bounds.PriorSamples":    func(o *PACPFLOptions) { o.Bounds.PriorSamples = -1 },
		"Bounds.FuncSamples":     func(o *PACPFLOptions) { o.Bounds.FuncSamples = 0 },
		"Bounds.Delta":           func(o *PACPFLOptions) { o.Bounds.Delta = 1 },
	} {
		o := DefaultPACPFLOptions()
		set(&o)
		var fe *option.FieldError
		if assert.True(t, errors.As(o.CheckRanges(), &fe), field) {
			assert.Equal(t, []string{field}, fe.Fields)
		}
	}
}

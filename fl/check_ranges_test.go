package fl

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/pacpfl/pacpfl/lml"
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

func TestBNNOptionsCheckRanges(t *testing.T) {
	d := DefaultBNNOptions()
	assert.NoError(t, d.CheckRanges())
	for _, c := range []struct {
		set    func(o *BNNOptions)
		fields []string
		values []any
	}{
		{func(o *BNNOptions) { o.SigmaMu = 0 }, []string{"SigmaMu", "SigmaOmega"}, []any{0.0, 1.0}},
		{func(o *BNNOptions) { o.SigmaOmega = math.Inf(1) }, []string{"SigmaMu", "SigmaOmega"},
			[]any{float64(DefaultBNNSigmaMu), math.Inf(1)}},
		{func(o *BNNOptions) { o.Bounds.WeightDraws = 0 }, []string{"Bounds.WeightDraws"}, []any{0}},
	} {
		o := DefaultBNNOptions()
		c.set(&o)
		var fe *option.FieldError
		if assert.True(t, errors.As(o.CheckRanges(), &fe), "%v", c.fields) {
			assert.Equal(t, c.fields, fe.Fields)
			assert.Equal(t, c.values, fe.Values)
		}
	}
}

func TestParseBoundLoss(t *testing.T) {
	l, err := ParseBoundLoss(BoundLossCE, 0.01)
	assert.NoError(t, err)
	assert.Equal(t, lml.Loss{Kind: lml.ClippedNLL, PMin: 0.01}, l)
	l, err = ParseBoundLoss(BoundLossZeroOne, 5) // the floor is the clipped loss's alone
	assert.NoError(t, err)
	assert.Equal(t, lml.Loss{Kind: lml.ZeroOne}, l)
	for _, c := range []struct {
		name  string
		pMin  float64
		field string
		value any
	}{{"ce", 1, "Bounds.Loss.PMin", 1.0}, {"ce", math.NaN(), "Bounds.Loss.PMin", math.NaN()},
		{"nll", 0.01, "Bounds.Loss", "nll"}} {
		_, err := ParseBoundLoss(c.name, c.pMin)
		var fe *option.FieldError
		if assert.True(t, errors.As(err, &fe), c.name) {
			assert.Equal(t, []string{c.field}, fe.Fields)
			if v, ok := c.value.(float64); ok && math.IsNaN(v) {
				assert.True(t, math.IsNaN(fe.Values[0].(float64)))
			} else {
				assert.Equal(t, []any{c.value}, fe.Values)
			}
		}
	}
}

// TrainingBytes counts the images as float64 and, per particle, the
// server's and each concurrent update's copies of φ, and L weight samples.
func TestBNNTrainingBytes(t *testing.T) {
	m := NewBNNModel(lml.BNN{Arch: lml.ArchMLP, Hidden: 10})
	m.Samples = 4
	nw := float64(784*10 + 10 + 10*10 + 10)
	assert.Equal(t, 8*(100*784+3*2*nw*(3+5)+2*4*nw), m.TrainingBytes(100, 3, 5))
	assert.Equal(t, m.TrainingBytes(0, 3, 1), m.TrainingBytes(0, 3, 0), "at least one update")
	m.Samples = 0
	assert.Equal(t, 8*(2*nw*4+2*float64(lml.DefaultBNNSamples)*nw), m.TrainingBytes(0, 1, 1))
}

// BNNModel.Validate refuses a network or a posterior inference that
// cannot run, and takes the zero posterior options as their defaults.
func TestBNNModelValidate(t *testing.T) {
	m := NewBNNModel(lml.BNN{Arch: lml.ArchMLP})
	assert.NoError(t, m.Validate())
	m.Posterior = lml.BNNPosteriorOptions{}
	assert.NoError(t, m.Validate(), "zero: the defaults")
	m.Posterior.Steps = -1
	assert.ErrorContains(t, m.Validate(), "SVGD steps")
	m = NewBNNModel(lml.BNN{Arch: lml.ArchMLP, Hidden: -1})
	assert.ErrorContains(t, m.Validate(), "hidden width -1")
	m = NewBNNModel(lml.BNN{Arch: "rnn"})
	assert.ErrorContains(t, m.Validate(), "unknown architecture")
}

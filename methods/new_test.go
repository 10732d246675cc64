package methods

import (
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/fedavg"
	"github.com/pacpfl/pacpfl/fl/fedvi"
	"github.com/pacpfl/pacpfl/harness"
	"github.com/pacpfl/pacpfl/lml"
	"github.com/pacpfl/pacpfl/option"
)

// New makes every registry method of a task by name, in order, with the
// settings given and the defaults otherwise.
func TestNew(t *testing.T) {
	reg, err := New(Names(Regression), Settings{Preset: PV, BaselineSteps: 7})
	require.NoError(t, err)
	require.Len(t, reg, len(Names(Regression)))
	for i, m := range reg {
		assert.Equal(t, Names(Regression)[i], m.Name())
	}
	assert.Equal(t, 7, reg[4].(Vanilla).Options.Steps)
	assert.Equal(t, 7, reg[5].(Pooled).Options.Steps)
	d, _ := DefaultPACPFL(PV)
	assert.Equal(t, d.Options, reg[0].(PACPFL).Options)

	// pFedGP from PAC-PFL's settings: k and σ_P of pFedGP, PAC-PFL's σ_P
	// as its initial spread, and the GP mean asked for.
	p := d
	p.Options.Server.Rounds = 9
	for mean, zero := range map[string]bool{PFedGPZero: true, PFedGPNet: false, PFedGPLinear: false} {
		ms, err := New([]string{fl.MethodPFedGP}, Settings{PACPFL: &p, PFedGPMean: mean})
		require.NoError(t, err)
		g := ms[0].(PFedGP)
		def := fl.DefaultPFedGPOptions()
		assert.Equal(t, 9, g.Options.Server.Rounds)
		assert.Equal(t, def.Server.K, g.Options.Server.K)
		assert.Equal(t, def.SigmaP, g.Options.SigmaP)
		assert.Equal(t, p.Options.SigmaP, g.Options.InitSigma)
		assert.Equal(t, zero, g.Options.ZeroMean, mean)
		if mean == PFedGPLinear {
			assert.Empty(t, g.Model.make(2).Model.MeanHidden)
		} else {
			assert.NotEmpty(t, g.Model.make(2).Model.MeanHidden)
		}
	}

	cls, err := New(Names(Classification), Settings{Task: Classification})
	require.NoError(t, err)
	require.Len(t, cls, len(Names(Classification)))
	for i, m := range cls {
		assert.Equal(t, Names(Classification)[i], m.Name())
	}
	// FedAvg and FedAvg+FT of one call share their training.
	byName := func(name string) harness.Method { return cls[slices.Index(Names(Classification), name)] }
	avg, ft := byName(fedavg.MethodFedAvg).(FedAvg), byName(fedavg.MethodFedAvgFT).(FedAvg)
	assert.Equal(t, fedavg.MethodFedAvg, avg.Name())
	assert.True(t, avg.shared != nil && avg.shared == ft.shared)
	viAvg, viFT := byName(MethodFedVIFedAvg).(FedVIFedAvg), byName(MethodFedVIFedAvgFT).(FedVIFedAvg)
	assert.True(t, viAvg.shared != nil && viAvg.shared == viFT.shared)
	assert.Equal(t, fedvi.DefaultFineTune(), viFT.FineTune)
}

// Bad names and settings are errors naming the method.
func TestNewErrors(t *testing.T) {
	_, err := New([]string{"mtl", "bogus"}, Settings{})
	assert.True(t, errors.Is(err, ErrUnknownMethod), "%v", err)
	_, err = New([]string{"fedvi"}, Settings{})
	assert.True(t, errors.Is(err, ErrUnknownMethod), "a classification method for regression: %v", err)
	_, err = New([]string{"mtl"}, Settings{Preset: "x"})
	assert.Error(t, err)
	_, err = New([]string{"pfedgp"}, Settings{PFedGPMean: "cubic"})
	var fe *option.FieldError
	if assert.ErrorAs(t, err, &fe) {
		assert.Equal(t, []string{"PFedGPMean"}, fe.Fields)
		assert.Equal(t, []any{"cubic"}, fe.Values)
	}
	for _, mean := range []string{"", PFedGPLinear, PFedGPZero, PFedGPNet} {
		assert.NoError(t, Settings{PFedGPMean: mean}.Validate(), mean)
	}
	bad := fedavg.DefaultOptions()
	bad.LR = -1
	_, err = New([]string{"fedavg"}, Settings{Task: Classification, FedAvg: &bad})
	assert.ErrorContains(t, err, "fedavg: ")
	o := fedavg.DefaultOptions()
	o.Arch = lml.BNN{Arch: lml.ArchMLP}
	_, err = New([]string{"fedavg-ft"}, Settings{Task: Classification, FedAvg: &o})
	assert.NoError(t, err)
}

// The FedAvg rows on FedVI's network say which E they train on; other
// methods keep the registry's label.
func TestSettingsLabel(t *testing.T) {
	relu := fedvi.DefaultOptions()
	relu.Arch.EmbedReLU = true
	s := Settings{FedVIFedAvg: &relu}
	assert.Equal(t, Label(MethodFedVIFedAvg), s.Label(MethodFedVIFedAvg))
	assert.Equal(t, Label(MethodFedVIFedAvgFT), s.Label(MethodFedVIFedAvgFT))
	plain := fedvi.DefaultOptions()
	s = Settings{FedVI: &relu, FedVIFedAvg: &plain}
	assert.NotEqual(t, Label(MethodFedVIFedAvg), s.Label(MethodFedVIFedAvg))
	assert.NotEqual(t, s.Label(MethodFedVIFedAvg), s.Label(MethodFedVIFedAvgFT))
	assert.Equal(t, Label(fedvi.MethodFedVI), s.Label(fedvi.MethodFedVI))
	// Without FedAvg's own options the rows train on FedVI's network.
	assert.Equal(t, Label(MethodFedVIFedAvg), (&Settings{FedVI: &relu}).Label(MethodFedVIFedAvg))
}

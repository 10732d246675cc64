package methods

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacpfl/pacpfl/fl/fedavg"
	"github.com/pacpfl/pacpfl/fl/fedvi"
	"github.com/pacpfl/pacpfl/fl/pfedbayes"
	"github.com/pacpfl/pacpfl/lml"
	"github.com/pacpfl/pacpfl/option"
)

// fieldError is err's fields and values, or fails.
func fieldError(t *testing.T, err error) ([]string, []any) {
	t.Helper()
	var fe *option.FieldError
	require.True(t, errors.As(err, &fe), "%v", err)
	return fe.Fields, fe.Values
}

func TestFedVIFamily(t *testing.T) {
	d := DefaultFedVIFamily()
	require.NoError(t, d.Validate())
	assert.Equal(t, []int{150, 30, 10}, []int{d.FedVI.Rounds, d.FedVI.ClientsPerRound, d.FedVI.EvalLast})
	assert.Equal(t, fedvi.DefaultFineTune(), d.FineTune)
	assert.True(t, d.FedAvgEmbedReLU)
	for _, c := range []struct {
		set    func(*FedVIFamily)
		fields []string
		values []any
	}{
		{func(f *FedVIFamily) { f.FedVI.Rounds = 0 }, []string{"FedVI.Rounds"}, []any{0}},
		{func(f *FedVIFamily) { f.FedVI.ClientsPerRound = -1 }, []string{"FedVI.ClientsPerRound"}, []any{-1}},
		{func(f *FedVIFamily) { f.FedVI.EvalLast = 151 }, []string{"FedVI.EvalLast", "FedVI.Rounds"}, []any{151, 150}},
		{func(f *FedVIFamily) { f.FedVI.EvalLast = 0 }, []string{"FedVI.EvalLast", "FedVI.Rounds"}, []any{0, 150}},
		{func(f *FedVIFamily) { f.FineTune.Epochs = 0 }, []string{"FineTune.Epochs"}, []any{0}},
	} {
		f := DefaultFedVIFamily()
		c.set(&f)
		fields, values := fieldError(t, f.Validate())
		assert.Equal(t, c.fields, fields)
		assert.Equal(t, c.values, values)
	}
	f := DefaultFedVIFamily()
	f.FedVI.Tau = -1
	assert.Error(t, f.Validate(), "fedvi.Options.Validate's own rules")

	var s Settings
	f = DefaultFedVIFamily()
	f.FedVI.Arch.EmbedReLU = false
	f.Set(&s, true)
	assert.Equal(t, f.FedVI, *s.FedVI)
	assert.True(t, s.FedVIFedAvg.Arch.EmbedReLU)
	assert.Equal(t, f.FedVI.Rounds, s.FedVIFedAvg.Rounds)
	assert.Equal(t, f.FineTune, *s.FedVIFineTune)
	f.Set(&s, false)
	assert.Equal(t, 0, s.FedVIFineTune.Epochs, "no FedAvg+FT: no fine-tuning")
}

func TestParsePool(t *testing.T) {
	for _, outputs := range []bool{false, true} {
		got, err := fedvi.ParsePool(fedvi.PoolName(outputs))
		require.NoError(t, err)
		assert.Equal(t, outputs, got)
	}
	_, err := fedvi.ParsePool("mean")
	fields, values := fieldError(t, err)
	assert.Equal(t, []string{"Arch.PoolOutputs"}, fields)
	assert.Equal(t, []any{"mean"}, values)
}

func TestFedBaselines(t *testing.T) {
	arch := lml.BNN{Arch: lml.ArchMLP, Hidden: 7}
	b := DefaultFedBaselines()
	require.NoError(t, b.Validate(arch))
	b.PFedBayes.Rounds, b.PFedBayes.EvalLast, b.PFedBayes.LocalSteps, b.PFedBayes.Batch = 5, 9, 3, 11
	b.PFedBayes.ClientsPerRound, b.FedAvg.LR, b.FedProx.Mu, b.FedProx.LR = 4, 0.5, 0.2, 99

	p := b.PFedBayesOptions(arch, 8)
	assert.Equal(t, arch, p.Arch)
	assert.Equal(t, uint64(8), p.Seed)
	assert.Equal(t, 5, p.EvalLast, "at most the rounds run")
	for _, prox := range []bool{false, true} {
		o := b.FedAvgOptions(arch, 8, prox)
		assert.Equal(t, []int{5, 5, 3, 11, 4}, []int{o.Rounds, o.EvalLast, o.LocalSteps, o.Batch, o.ClientsPerRound})
		assert.Equal(t, 0.5, o.LR, "FedAvg's step for both")
		assert.Equal(t, arch, o.Arch)
		assert.Equal(t, uint64(8), o.Seed)
		if prox {
			assert.Equal(t, 0.2, o.Mu)
			assert.Equal(t, 0, o.FineTune)
		} else {
			assert.Equal(t, 0.0, o.Mu)
			assert.Equal(t, fedavg.DefaultOptions().FineTune, o.FineTune)
		}
	}

	for _, c := range []struct {
		set    func(*FedBaselines)
		fields []string
		values []any
	}{
		{func(b *FedBaselines) { b.PFedBayes.Rounds = 0 }, []string{"PFedBayes.Rounds", "PFedBayes.EvalLast"},
			[]any{0, 101}},
		{func(b *FedBaselines) { b.PFedBayes.EvalLast = 0 }, []string{"PFedBayes.Rounds", "PFedBayes.EvalLast"},
			[]any{800, 0}},
		{func(b *FedBaselines) { b.FedAvg.FineTune = 0 }, []string{"FedAvg.FineTune"}, []any{0}},
	} {
		b := DefaultFedBaselines()
		c.set(&b)
		fields, values := fieldError(t, b.Validate(arch))
		assert.Equal(t, c.fields, fields)
		assert.Equal(t, c.values, values)
	}
	for _, set := range []func(*FedBaselines){
		func(b *FedBaselines) { b.PFedBayes.Zeta = -1 },
		func(b *FedBaselines) { b.FedProx.Mu = -1 },
		func(b *FedBaselines) { b.FedAvg.LR = 0 },
	} {
		b := DefaultFedBaselines()
		set(&b)
		assert.Error(t, b.Validate(arch))
	}

	var s Settings
	b.Set(&s, []string{fedavg.MethodFedAvgFT}, arch, 3)
	assert.Nil(t, s.PFedBayes)
	assert.Nil(t, s.FedProx)
	require.NotNil(t, s.FedAvg)
	assert.Equal(t, b.FedAvgOptions(arch, 3, false), *s.FedAvg)
	b.Set(&s, []string{pfedbayes.MethodPFedBayes, fedavg.MethodFedProx}, arch, 3)
	assert.Equal(t, b.PFedBayesOptions(arch, 3), *s.PFedBayes)
	assert.Equal(t, b.FedAvgOptions(arch, 3, true), *s.FedProx)
	var all Settings
	b.Set(&all, FedBaselineMethods, arch, 3)
	assert.True(t, all.PFedBayes != nil && all.FedAvg != nil && all.FedProx != nil, "every baseline's options")
}

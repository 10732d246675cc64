package pfedbayes

import "testing"

// The code variant takes CodeOptions' settings except those the caller
// chose; the paper variant is left alone.
func TestWithVariantDefaults(t *testing.T) {
	none := func(string) bool { return false }
	o := DefaultOptions()
	o.Rho0, o.Zeta = -1, 3
	if got := o.WithVariantDefaults(none); got.Rho0 != -1 || got.PersonalSteps != 1 || got.NoiseStd != 1 {
		t.Errorf("paper variant changed: %+v", got)
	}
	o.Variant = Code
	got := o.WithVariantDefaults(none)
	c := CodeOptions()
	if got.Rho0 != c.Rho0 || got.Optimizer != c.Optimizer || got.EvalDraws != c.EvalDraws ||
		got.PersonalSteps != c.PersonalSteps || got.NoiseStd != c.NoiseStd || got.Zeta != 3 {
		t.Errorf("code variant: %+v", got)
	}
	o.Optimizer, o.EvalDraws = SGD, 7
	got = o.WithVariantDefaults(func(f string) bool { return f != "EvalDraws" })
	if got.Rho0 != -1 || got.Optimizer != SGD || got.EvalDraws != c.EvalDraws || got.PersonalSteps != c.PersonalSteps {
		t.Errorf("code variant, Rho0 and Optimizer chosen: %+v", got)
	}
	if err := got.Validate(); err != nil {
		t.Error(err)
	}
}

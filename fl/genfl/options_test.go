package genfl

import (
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/pacpfl/pacpfl/option"
)

// 0 in a prior- or estimator-dependent setting takes DefaultOptions' value
// for the options' own prior and estimator; a value set stays.
func TestFillDefaultsFollowsThePriorAndTheEstimator(t *testing.T) {
	for _, prior := range []PriorKind{LearntPriorKind, RandomPriorKind} {
		for _, est := range []Estimator{Pairs, Full} {
			want := DefaultOptions(prior, est, 5)
			o := want
			o.Objective.KLPenalty, o.PosteriorFed.Rounds, o.PosteriorFed.LocalEpochs, o.MC.N = 0, 0, 0, 0
			o.FillDefaults()
			if !reflect.DeepEqual(o, want) {
				t.Errorf("%v, %v: %+v, want %+v", prior, est, o, want)
			}
		}
	}
	o := DefaultOptions(RandomPriorKind, Pairs, 0)
	o.Objective.KLPenalty, o.PosteriorFed.Rounds, o.PosteriorFed.LocalEpochs, o.MC.N = 0.5, 3, 2, 99
	o.FillDefaults()
	if o.Objective.KLPenalty != 0.5 || o.PosteriorFed.Rounds != 3 || o.PosteriorFed.LocalEpochs != 2 || o.MC.N != 99 {
		t.Errorf("set values changed: %+v %+v %+v", o.Objective, o.PosteriorFed, o.MC)
	}
}

func TestValidateNamesTheFields(t *testing.T) {
	for _, est := range []Estimator{Pairs, Full} {
		o := DefaultOptions(RandomPriorKind, est, 1)
		if err := o.Validate(); err != nil {
			t.Errorf("defaults (%v): %v", est, err)
		}
	}
	for _, c := range []struct {
		set    func(o *Options)
		fields []string
		values []any
	}{
		{func(o *Options) { o.SigmaPrior = 0 }, []string{"SigmaPrior"}, []any{0.0}},
		{func(o *Options) { o.Objective.KLPenalty = math.NaN() }, []string{"Objective.KLPenalty"}, nil},
		{func(o *Options) { o.PriorFed.LR = math.Inf(1) }, []string{"PriorFed.LR"}, []any{math.Inf(1)}},
		{func(o *Options) { o.PosteriorFed.Rounds = 0 }, []string{"PosteriorFed.Rounds"}, []any{0}},
		{func(o *Options) { o.PriorFed.LocalEpochs = -1 }, []string{"PriorFed.LocalEpochs"}, []any{-1}},
		{func(o *Options) { o.MC.N = 0 }, []string{"MC.N"}, []any{0}},
		{func(o *Options) { o.ClientMC.Stack = 0 }, []string{"ClientMC.Stack"}, []any{0}},
		{func(o *Options) { o.TestDraws = 0 }, []string{"TestDraws"}, []any{0}},
		{func(o *Options) { o.PosteriorFed.Fraction = 1.5 }, []string{"PosteriorFed.Fraction"}, []any{1.5}},
		{func(o *Options) { o.PriorFed.Momentum = 1 }, []string{"PosteriorFed.Momentum", "PriorFed.Momentum"},
			[]any{DefaultMomentum, 1.0}},
		{func(o *Options) { o.Dropout = -0.1 }, []string{"Dropout"}, []any{-0.1}},
		{func(o *Options) { o.DeltaPrime = 0.96 }, []string{"Objective.Delta", "DeltaPrime"},
			[]any{DefaultDelta, 0.96}},
		{func(o *Options) { o.Objective.PMin = 1 }, []string{"Objective.PMin"}, []any{1.0}},
		{func(o *Options) { o.Arch.Hidden = nil }, []string{"Arch.Hidden"}, nil},
	} {
		o := DefaultOptions(LearntPriorKind, Pairs, 1)
		c.set(&o)
		var fe *option.FieldError
		if err := o.Validate(); !errors.As(err, &fe) {
			t.Errorf("%v: error %v, want an *option.FieldError", c.fields, err)
			continue
		}
		if !reflect.DeepEqual(fe.Fields, c.fields) || c.values != nil && !reflect.DeepEqual(fe.Values, c.values) {
			t.Errorf("fields %v values %v, want %v %v", fe.Fields, fe.Values, c.fields, c.values)
		}
	}
	// Settings without a field rule are errors too.
	for _, set := range []func(o *Options){
		func(o *Options) { o.Prior = 0 }, func(o *Options) { o.ClientMC.Estimator = 0 },
		func(o *Options) { o.MC.Workers = -1 }, func(o *Options) { o.Arch.Hidden = []int{4, 0} },
		func(o *Options) { o.Objective.Objective = 0 },
	} {
		o := DefaultOptions(LearntPriorKind, Pairs, 1)
		set(&o)
		if err := o.Validate(); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

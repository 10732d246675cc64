package methods

import (
	"context"
	"fmt"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/harness"
)

// Sweep is PAC-PFL at several settings of its options on the same data and
// seeds: the utility against the number of particles k (the paper's Fig. 3)
// or against the guaranteed ε (Fig. 4). Each level is a PACPFL whose Key
// names it in the report ("k=4", "ε=2"), so that the levels stay apart.
type Sweep struct {
	Data   func(seed uint64) (*data.Dataset, error)
	Seeds  []uint64
	Levels []PACPFL
}

// Run runs every level on every seed with harness.Run, the data of a seed
// built once and shared by all levels; the report has one MethodReport per
// level, in the order of Levels. A level without a Key is an error
// (wrapping harness.ErrBadExperiment), as is any that harness.Run refuses.
func (s Sweep) Run(ctx context.Context, obs harness.Observer) (*harness.Report, error) {
	exp := harness.Experiment{Data: s.Data, Seeds: s.Seeds}
	for i, l := range s.Levels {
		if l.Key == "" {
			return nil, fmt.Errorf("%w: sweep level %d has no Key", harness.ErrBadExperiment, i+1)
		}
		exp.Methods = append(exp.Methods, l)
	}
	return harness.Run(ctx, exp, obs)
}

// Private reports whether the level named key trains under differential
// privacy (Options.Server.DP set): its clients' LMLs are not covered by
// the guarantee, so a progress display must not show them.
func (s Sweep) Private(key string) bool {
	for _, l := range s.Levels {
		if l.Name() == key {
			return l.Options.Server.DP != nil
		}
	}
	return false
}

package main

import (
	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/harness"
	"github.com/pacpfl/pacpfl/methods"
)

// newMethods are the methods of experiment fmnist with the flags'
// settings, checked on ds0 (the first seed's data); GenFL runs with its
// paper's settings (methods.DefaultGenFL).
func (x *fmnistExperiment) newMethods(ds0 *data.Dataset) ([]harness.Method, error) {
	f, seed0 := &x.f, x.seedBase
	s := methods.Settings{Task: methods.Classification, BNNModel: x.bf.bnnModel}
	if x.has(fl.MethodPACPFL) {
		o, err := x.bf.options(f, ds0, seed0)
		if err != nil {
			return nil, err
		}
		// Per data set: c's default, τ from --lambda, the DP noise.
		o.Server.ClientsPerRound = f.o.Server.ClientsPerRound
		if o.Server.DP != nil {
			o.Server.DP.Noise = nil
		}
		s.PACPFLBNN = &methods.PACPFLBNN{Options: o, Lambda: f.lambda, DPNoiseSeed: f.dpNoiseSeed}
	}
	for _, m := range x.mf {
		m.settings(&s, x, seed0)
	}
	x.set = s
	ms, err := methods.New(x.methods, s)
	return ms, asUsage(err)
}

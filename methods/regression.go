package methods

import (
	"context"
	"fmt"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/maml"
	"github.com/pacpfl/pacpfl/fl/mtl"
	"github.com/pacpfl/pacpfl/harness"
)

// Preset names a data set whose defaults differ from the paper's
// (Polynomial) ones.
type Preset string

const (
	// Polynomial: the PAC-PFL paper's settings (the zero Preset too).
	Polynomial Preset = "polynomial"
	// PV: settings chosen by 5-fold cross-validation on the training
	// clients of PV-EW(150) seed 1000, a data set used for nothing else
	// (`pacpfl tune pv`; docs/math.md, "PV defaults by cross-validation").
	PV Preset = "pv"
)

func (p Preset) check() error {
	if p != "" && p != Polynomial && p != PV {
		return fmt.Errorf("methods: unknown preset %q (want %q or %q)", p, Polynomial, PV)
	}
	return nil
}

// GPModel makes a client's GP model for data with d inputs.
type GPModel func(d int) *fl.GPModel

func (g GPModel) make(d int) *fl.GPModel {
	if g == nil {
		return fl.NewGPModel(d)
	}
	return g(d)
}

// Vanilla is fl.RunVanilla: each client fits its own GP prior by Adam on its
// own LML and predicts with it.
type Vanilla struct {
	Options fl.VanillaOptions // Seed is set by Run
	Model   GPModel           // nil: fl.NewGPModel
}

// DefaultVanilla is Vanilla with the defaults of preset p: 300 Adam steps of
// 10⁻² (Polynomial), 3000 (PV).
func DefaultVanilla(p Preset) (Vanilla, error) {
	if err := p.check(); err != nil {
		return Vanilla{}, err
	}
	o := fl.DefaultVanillaOptions()
	if p == PV {
		o = fl.VanillaOptions{Steps: 3000, LR: 1e-2, InitSigma: 0.5}
	}
	return Vanilla{Options: o}, nil
}

// Name is fl.MethodVanilla.
func (Vanilla) Name() string { return fl.MethodVanilla }

// Validate reports the first option that cannot work.
func (v Vanilla) Validate() error { return v.Options.Validate() }

// Run fits and evaluates the clients of ds with the random streams of seed.
func (v Vanilla) Run(ctx context.Context, ds *data.Dataset, seed uint64, _ harness.Observer) (*fl.MethodResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	o := v.Options
	o.Seed = seed
	return fl.RunVanilla(ds, v.Model.make(ds.D), o)
}

// Pooled is fl.RunPooled: one GP prior fitted on the existing clients'
// pooled data, used by every client.
type Pooled struct {
	Options fl.PooledOptions // Seed is set by Run
	Model   GPModel          // nil: fl.NewGPModel
}

// DefaultPooled is Pooled with the defaults of preset p: the exact GP on 300
// random pooled points, 300 Adam steps of 10⁻² (Polynomial), 3000 (PV).
func DefaultPooled(p Preset) (Pooled, error) {
	if err := p.check(); err != nil {
		return Pooled{}, err
	}
	o := fl.DefaultPooledOptions()
	if p == PV {
		o = fl.PooledOptions{Points: 300, Steps: 3000, LR: 1e-2, InitSigma: 0.5}
	}
	return Pooled{Options: o}, nil
}

// Name is fl.MethodPooled.
func (Pooled) Name() string { return fl.MethodPooled }

// Validate reports the first option that cannot work.
func (p Pooled) Validate() error { return p.Options.Validate() }

// Run fits the pooled prior and evaluates the clients of ds with the random
// streams of seed.
func (p Pooled) Run(ctx context.Context, ds *data.Dataset, seed uint64, _ harness.Observer) (*fl.MethodResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	o := p.Options
	o.Seed = seed
	return fl.RunPooled(ds, p.Model.make(ds.D), o)
}

// MTL is mtl.Run: federated multi-task learning with shared weights and
// personal offsets (a point predictor: no CE).
type MTL struct {
	Options mtl.Options // Seed is set by Run
}

// DefaultMTL is MTL with mtl.Default (cross-validated on PV-EW(150), the same
// for every preset).
func DefaultMTL(p Preset) (MTL, error) {
	if err := p.check(); err != nil {
		return MTL{}, err
	}
	return MTL{Options: mtl.Default()}, nil
}

// Name is "mtl".
func (MTL) Name() string { return "mtl" }

// Validate reports the first option that cannot work.
func (m MTL) Validate() error { return m.Options.Validate() }

// Run trains and evaluates MTL on ds with the random streams of seed.
func (m MTL) Run(ctx context.Context, ds *data.Dataset, seed uint64, _ harness.Observer) (*fl.MethodResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	o := m.Options
	o.Seed = seed
	return mtl.Run(ds, o)
}

// MAML is maml.Run: a federated meta-initialisation personalised by one
// gradient step (a point predictor: no CE).
type MAML struct {
	Options maml.Options // Seed is set by Run
}

// DefaultMAML is MAML with maml.Default (cross-validated on PV-EW(150), the
// same for every preset).
func DefaultMAML(p Preset) (MAML, error) {
	if err := p.check(); err != nil {
		return MAML{}, err
	}
	return MAML{Options: maml.Default()}, nil
}

// Name is "maml".
func (MAML) Name() string { return "maml" }

// Validate reports the first option that cannot work.
func (m MAML) Validate() error { return m.Options.Validate() }

// Run trains and evaluates MAML on ds with the random streams of seed.
func (m MAML) Run(ctx context.Context, ds *data.Dataset, seed uint64, _ harness.Observer) (*fl.MethodResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	o := m.Options
	o.Seed = seed
	return maml.Run(ds, o)
}

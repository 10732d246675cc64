package fl

import "github.com/pacpfl/pacpfl/data"

// MemoryPlan is a lower bound on the memory a PAC-PFL run needs, asked of
// its configuration before anything is allocated, so that a configuration
// that cannot fit is refused with a message instead of an out-of-memory
// crash after the data are built. Each term is in bytes, counted in
// float64 so that absurd sizes do not overflow.
type MemoryPlan struct {
	// Particles: the k particles, their gradients and the optimiser's
	// state, k×dφ each.
	Particles float64
	// Bounds: the Monte Carlo draws of the bounds' terms.
	Bounds float64
}

// MemoryPlan is o's plan for a client model of dim parameters.
func (o PACPFLOptions) MemoryPlan(dim int) MemoryPlan {
	return MemoryPlan{
		Particles: 8 * 3 * float64(o.Server.K) * float64(dim),
		Bounds:    8 * float64(max(o.Bounds.PriorSamples, o.Bounds.FuncSamples)),
	}
}

// Bytes is the plan's total.
func (p MemoryPlan) Bytes() float64 { return p.Particles + p.Bounds }

// Dominant names the larger term: "particles" or "bounds".
func (p MemoryPlan) Dominant() string {
	if p.Bounds > p.Particles {
		return "bounds"
	}
	return "particles"
}

// CheckBounds checks, before training, that o's bounds can be computed on
// ds's existing clients: the loss range, δ, τ and the clients' common β
// meet the bounds' assumptions (BoundConfig.Validate). It is nil when o
// asks for no bound.
func (o PACPFLOptions) CheckBounds(ds *data.Dataset) error {
	if o.Bounds.PriorSamples == 0 && o.Bounds.Learned == nil {
		return nil
	}
	n := len(ds.Existing)
	bc := BoundConfig{A: o.Bounds.A, B: o.Bounds.B, Delta: o.Bounds.Delta, Tau: EffectiveTau(o.Server, n),
		M: make([]int, n)}
	for i := range bc.M {
		bc.M[i] = ds.Existing[i].M()
	}
	var err error
	if bc.Beta, err = o.Beta.Common(bc.M); err != nil {
		return err
	}
	return bc.Validate()
}

// CheckBounds checks, before training, that o's bounds can be computed on
// ds's existing clients: the range of the bounded loss, δ, τ and the
// clients' common β = min m_i meet the bounds' assumptions
// (BoundConfig.Validate). It is nil when o asks for no bound.
func (o BNNOptions) CheckBounds(ds *data.Dataset) error {
	if o.Bounds.PriorSamples == 0 {
		return nil
	}
	n := len(ds.Existing)
	lo, hi := o.Bounds.Loss.Range()
	bc := BoundConfig{A: lo, B: hi, Delta: o.Bounds.Delta, Beta: float64(ds.MinM()), Tau: o.BoundTau(n),
		M: make([]int, n)}
	for i := range bc.M {
		bc.M[i] = ds.Existing[i].M()
	}
	return bc.Validate()
}

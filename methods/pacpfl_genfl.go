package methods

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/genfl"
	"github.com/pacpfl/pacpfl/harness"
	"github.com/pacpfl/pacpfl/lml"
)

// PACPFLPriorBound certifies the 0–1 error of personalised BNN clients
// whose prior is PAC-PFL's (docs/math.md §7.4), on the split and with the
// certificate of GenFL's PFL (Alg. 3/4), so that the two priors stand side
// by side:
//
//  1. PAC-PFL's server learns its hyper-posterior (k particles φ_κ = (μ_κ,
//     ω_κ)) on the first halves S¹_k of the existing clients' training
//     rows only: the rows GenFL's learnt prior is trained on.
//  2. For each particle κ, genfl.RunPFL with the prior N(μ_κ, σ_P² I) given
//     (σ_P = GenFL.SigmaPrior): each client's Q_k,κ by GenFL's userUpdate
//     from that prior on its second half S²_k, its FEDBOUND bound on S²_k
//     at δ/k and δ′/k, and its Gibbs test error.
//
// A client's k bounds hold together with probability ≥ 1 − δ − δ′ (a union
// bound), so the mean over κ of client k's bounds bounds the expected 0–1
// error of its personalised posterior with the prior drawn uniformly from
// PAC-PFL's particles, the predictor whose test error is the mean over κ
// of the Gibbs test errors. The new clients of ds, whose data PAC-PFL never
// saw (PAC-PFL's Lemma 4.6 situation), get the same certificate with their
// whole training sample for the posterior and the bound. What is certified is that posterior, not the
// SVGD posterior PAC-PFL personalises with by default (whose KL to any
// prior is infinite).
type PACPFLPriorBound struct {
	PACPFL PACPFLBNN // server options and network (the MLP)
	// GenFL: personalisation and bound settings; Run sets Arch (from the
	// network), Prior, Given, the seeds and the δ split.
	GenFL genfl.Options
}

// PhasePACPFLServer: PACPFLPriorBound's server rounds on the first halves
// (Value: the mean client ln Z^C).
const PhasePACPFLServer = "PAC-PFL server"

// MethodPACPFLPrior is PACPFLPriorBound's name.
const MethodPACPFLPrior = "pacpfl-prior-genfl"

// DefaultPACPFLPriorBound is PAC-PFL's BNN defaults and GenFL's PFL
// defaults with a given prior.
func DefaultPACPFLPriorBound() PACPFLPriorBound {
	return PACPFLPriorBound{PACPFL: DefaultPACPFLBNN(), GenFL: genfl.DefaultOptions(genfl.GivenPriorKind, genfl.Pairs, 0)}
}

// Name is MethodPACPFLPrior.
func (PACPFLPriorBound) Name() string { return MethodPACPFLPrior }

// PACPFLPriorResult is PACPFLPriorBound's Detail.
type PACPFLPriorResult struct {
	Train *fl.Result         // PAC-PFL's server on the first halves
	Runs  []*genfl.PFLResult // one per particle κ, each at δ/k, δ′/k
	// Per existing client, means over κ: the bound, the Gibbs test error
	// and the Monte Carlo error on S²_k.
	Bound, TestError, TrainError []float64
	// The same for ds's new clients (nil without): NewRuns one per κ, the
	// means per new client.
	NewRuns                               []*genfl.PFLResult
	NewBound, NewTestError, NewTrainError []float64
	Delta, DeltaPrime                     float64 // the total, split over the k particles
	SigmaPrior                            float64
}

// PACPFLArch returns the GenFL network of a PAC-PFL BNN: the MLP D–H–C with ReLU
// (the same layout of weights, lml.BNN.WeightLayout); the BCNN has none.
func PACPFLArch(b lml.BNN) (genfl.Arch, error) {
	b = b.WithDefaults()
	if b.Arch != lml.ArchMLP {
		return genfl.Arch{}, fmt.Errorf("pacpfl prior: GenFL's network is an MLP; the BNN is %s", b.Arch)
	}
	return genfl.Arch{In: b.D(), Hidden: []int{b.Hidden}, Classes: b.Classes}, nil
}

// PACPFLPrior is the GenFL prior N(μ, sigma² I) of a PAC-PFL particle φ =
// (μ, ω) of the MLP b. The weights are in the same order in both networks
// (each dense layer's weight [out, in] row-major, then its bias).
func PACPFLPrior(b lml.BNN, phi []float64, sigma float64) (*genfl.Prior, error) {
	a, err := PACPFLArch(b)
	if err != nil {
		return nil, err
	}
	nw := b.WithDefaults().NumWeights()
	if len(phi) != 2*nw || a.NumParams() != nw {
		return nil, fmt.Errorf("pacpfl prior: particle of %d values for %d weights (GenFL's network: %d)", len(phi),
			nw, a.NumParams())
	}
	p := &genfl.Prior{Mu: slices.Clone(phi[:nw]), Sigma: sigma}
	if err := p.Validate(a); err != nil {
		return nil, err
	}
	return p, nil
}

// firstHalves is ds with each existing client's training rows cut to the
// first ⌊m/2⌋ (genfl.Client.Split's S¹_k), without new clients or the rows
// the split keeps for personalisation only.
func firstHalves(ds *data.Dataset) *data.Dataset {
	h := *ds
	h.New = nil
	h.Existing = make([]data.ClientData, len(ds.Existing))
	for i, c := range ds.Existing {
		m := c.M() / 2
		h.Existing[i] = data.ClientData{X: c.X[: m*ds.D : m*ds.D], Y: c.Y[:m:m], XTest: c.XTest, YTest: c.YTest}
	}
	return &h
}

// Run trains PAC-PFL's server on the first halves of ds's existing clients,
// then certifies every client's personalised posterior under each particle.
func (m PACPFLPriorBound) Run(ctx context.Context, ds *data.Dataset, seed uint64,
	obs harness.Observer) (*fl.MethodResult, error) {
	if err := m.PACPFL.Validate(); err != nil {
		return nil, err
	}
	model := m.PACPFL.Model.make()
	arch, err := PACPFLArch(model.Model)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	obs = observer(obs)
	train, err := m.trainPrior(ctx, model, firstHalves(ds), seed, obs)
	if err != nil {
		return nil, err
	}
	k := train.K
	o := m.GenFL
	o.Arch, o.Prior = arch, genfl.GivenPriorKind
	if k < 1 {
		return nil, fmt.Errorf("pacpfl prior: PAC-PFL's server returned no particles")
	}
	res := &PACPFLPriorResult{Train: train, Delta: o.Objective.Delta, DeltaPrime: o.DeltaPrime, SigmaPrior: o.SigmaPrior}
	o.Objective.Delta /= float64(k)
	o.DeltaPrime /= float64(k)
	for kappa := range k {
		p, err := PACPFLPrior(model.Model, train.Particles[kappa*train.Dim:(kappa+1)*train.Dim], o.SigmaPrior)
		if err != nil {
			return nil, err
		}
		oc := o
		oc.Given = p
		run, err := GenFLBound{Options: oc, Setting: PFL}.Run(ctx, ds, seed, obs)
		if err != nil {
			return nil, fmt.Errorf("particle %d: %w", kappa, err)
		}
		res.Runs = append(res.Runs, run.Detail.(*genfl.PFLResult))
		if len(ds.New) > 0 {
			oc.GivenUnseen = true
			nds := *ds
			nds.Existing, nds.New = ds.New, nil
			run, err := GenFLBound{Options: oc, Setting: PFL}.Run(ctx, &nds, seed, obs)
			if err != nil {
				return nil, fmt.Errorf("particle %d, new clients: %w", kappa, err)
			}
			res.NewRuns = append(res.NewRuns, run.Detail.(*genfl.PFLResult))
		}
	}
	res.Bound, res.TestError, res.TrainError = means(res.Runs)
	if res.NewRuns != nil {
		res.NewBound, res.NewTestError, res.NewTrainError = means(res.NewRuns)
	}
	out := &fl.MethodResult{Method: MethodPACPFLPrior, Train: train, Detail: res, Elapsed: time.Since(start)}
	out.Seconds = out.Elapsed.Seconds()
	return out, nil
}

// trainPrior is PAC-PFL's server on ds (rounds to obs), stopped between
// rounds when ctx is done.
func (m PACPFLPriorBound) trainPrior(ctx context.Context, model *fl.BNNModel, ds *data.Dataset, seed uint64,
	obs harness.Observer) (*fl.Result, error) {
	o := m.PACPFL.Options
	o.Server = serverForRun(o.Server, m.PACPFL.Lambda, m.PACPFL.DPNoiseSeed, ds, seed)
	o.Server.Progress = chainRounds(o.Server.Progress, obs, PhasePACPFLServer)
	after := o.Server.AfterRound
	o.Server.AfterRound = func(s *fl.Server, round int) error {
		if after != nil {
			if err := after(s, round); err != nil {
				return err
			}
		}
		return ctx.Err()
	}
	return fl.TrainPACPFLBNN(ds, model, o)
}

// means are the per-client means over the particles' runs of the bound,
// the test error and the train error.
func means(runs []*genfl.PFLResult) (bound, test, train []float64) {
	n, k := len(runs[0].Clients), float64(len(runs))
	bound, test, train = make([]float64, n), make([]float64, n), make([]float64, n)
	for _, run := range runs {
		for i, c := range run.Clients {
			bound[i] += c.Bound.Bound / k
			test[i] += c.TestError / k
			train[i] += c.TrainError / k
		}
	}
	return bound, test, train
}

// Particles is the number k of PAC-PFL's particles, one prior each.
func (r *PACPFLPriorResult) Particles() int { return len(r.Runs) }

// PFL is the result as one genfl.PFLResult, each client's figures the means
// over the particles' runs (bound, KL, Monte Carlo error and sampling term,
// test and train errors; the Monte Carlo work and times summed, δ and δ′
// the totals), for the reports of GenFL's PFL; Prior is nil (there are k)
// and PriorTest is the mean of the k prior means' test errors.
func (r *PACPFLPriorResult) PFL() *genfl.PFLResult {
	return r.pfl(r.Runs, r.TestError, r.TrainError)
}

// NewPFL is PFL for the new clients (nil without).
func (r *PACPFLPriorResult) NewPFL() *genfl.PFLResult {
	if r.NewRuns == nil {
		return nil
	}
	return r.pfl(r.NewRuns, r.NewTestError, r.NewTrainError)
}

func (r *PACPFLPriorResult) pfl(runs []*genfl.PFLResult, test, train []float64) *genfl.PFLResult {
	k := float64(len(runs))
	out := &genfl.PFLResult{Clients: make([]genfl.ClientBound, len(test))}
	out.Timings.Prior = r.Train.Elapsed.Seconds()
	for i := range out.Clients {
		b := &genfl.Bound{}
		b.Delta, b.DeltaPrime, b.Confidence = r.Delta, r.DeltaPrime, 1-r.Delta-r.DeltaPrime
		for _, run := range runs {
			c := run.Clients[i].Bound
			b.M, b.N = c.M, c.N
			b.Bound += c.Bound / k
			b.KL += c.KL / k
			b.Err += c.Err / k
			b.RiskUpper += c.RiskUpper / k
			b.Complexity += c.Complexity / k
			b.NoSampling += c.NoSampling / k
			b.SamplingAdd += c.SamplingAdd / k
			b.PinskerAtN += c.PinskerAtN / k
			b.QuadAtN += c.QuadAtN / k
			b.MC.Evals += c.MC.Evals
			b.MC.Errors += c.MC.Errors
			b.MC.Seconds += c.MC.Seconds
		}
		b.MC.N, b.MC.Err = b.N, b.Err
		out.Clients[i] = genfl.ClientBound{Bound: b, TestError: test[i], TrainError: train[i]}
	}
	for _, run := range runs {
		out.PriorTest += run.PriorTest / k
		out.Timings.Posterior += run.Timings.Posterior
		out.Timings.Bound += run.Timings.Bound
		out.Timings.Test += run.Timings.Test
	}
	return out
}

// NewPACPFLPriorBound is PACPFLPriorBound with PAC-PFL's BNN defaults on
// the MLP of o.Arch (one hidden layer; 784 inputs are a 28×28 image) and o
// for GenFL's personalisation and bound.
func NewPACPFLPriorBound(o genfl.Options) (PACPFLPriorBound, error) {
	a := o.Arch
	if len(a.Hidden) != 1 {
		return PACPFLPriorBound{}, fmt.Errorf("pacpfl prior: PAC-PFL's MLP has one hidden layer, not %d", len(a.Hidden))
	}
	b := lml.BNN{Arch: lml.ArchMLP, InC: 1, InH: 1, InW: a.In, Hidden: a.Hidden[0], Classes: a.Classes}
	if a.In == 28*28 {
		b.InH, b.InW = 28, 28
	}
	if err := b.Validate(); err != nil {
		return PACPFLPriorBound{}, err
	}
	m := PACPFLPriorBound{PACPFL: DefaultPACPFLBNN(), GenFL: o}
	m.PACPFL.Model = func() *fl.BNNModel { return fl.NewBNNModel(b) }
	m.GenFL.Prior, m.GenFL.Given = genfl.GivenPriorKind, nil
	return m, nil
}

package genfl

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"

	"github.com/pacpfl/pacpfl/asm"
	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/internal/meanfield"
	"github.com/pacpfl/pacpfl/linalg"
)

// Federation holds the settings of the FedAvg protocol shared by GenFL
// (Alg. 1) and the learnt prior's ERM: rounds, the fraction C of the K
// users sampled each round, E local epochs of mini-batches of size B, SGD
// with momentum.
type Federation struct {
	Rounds      int
	Fraction    float64 // C ∈ (0, 1]: max(round(C·K), 1) users per round
	LocalEpochs int     // E ≥ 1
	Batch       int     // B ≥ 1
	LR          float64 // η > 0
	Momentum    float64 // ∈ [0, 1)
	// Workers is the number of users updated at once (0: GOMAXPROCS); each
	// runs single-threaded. Results do not depend on it.
	Workers int
	Seed    uint64
	// Progress, if set, is called after every round, Value the mean over
	// the round's users of their mean training objective.
	Progress func(fl.RoundEvent)
	// Stop, if set, is asked after every round (after Progress); an error
	// it returns ends the run with that error (a caller's cancellation:
	// ctx.Err).
	Stop func() error
}

// ObjectiveConfig is the PAC-Bayes objective users minimise.
type ObjectiveConfig struct {
	Objective Objective
	// KLPenalty multiplies KL(Q‖P) in the objective (the paper's "KL
	// penalty" 0.1 with random priors; 1 = none). Bounds never use it.
	KLPenalty float64
	Delta     float64 // δ of the bound the objective relaxes (0.05)
	PMin      float64 // p_min of the bounded cross-entropy (1e-4)
}

// Defaults of the paper's experiments (docs/math.md §7).
const (
	DefaultSigmaPrior = 0.025
	DefaultDelta      = 0.05
	DefaultDeltaPrime = 0.01
	DefaultPMin       = 1e-4
	DefaultLR         = 5e-3
	DefaultMomentum   = 0.95 // posterior; 0.99 for the prior's ERM
	DefaultBatch      = 25
	DefaultFraction   = 0.1
	DefaultDropout    = 0.2 // the prior's ERM
)

// DefaultObjective is f₁ without KL penalty, δ = 0.05, p_min = 1e-4.
func DefaultObjective() ObjectiveConfig {
	return ObjectiveConfig{Objective: F1, KLPenalty: 1, Delta: DefaultDelta, PMin: DefaultPMin}
}

func (f *Federation) validate() error {
	switch {
	case f.Rounds < 0:
		return fmt.Errorf("genfl: %d rounds", f.Rounds)
	case !(f.Fraction > 0 && f.Fraction <= 1):
		return fmt.Errorf("genfl: fraction of users per round C = %v must lie in (0, 1]", f.Fraction)
	case f.LocalEpochs < 1:
		return fmt.Errorf("genfl: %d local epochs, want ≥ 1", f.LocalEpochs)
	case f.Batch < 1:
		return fmt.Errorf("genfl: batch size %d, want ≥ 1", f.Batch)
	case !(f.LR > 0) || math.IsInf(f.LR, 0):
		return fmt.Errorf("genfl: learning rate %v must be positive and finite", f.LR)
	case !(f.Momentum >= 0 && f.Momentum < 1):
		return fmt.Errorf("genfl: momentum %v must lie in [0, 1)", f.Momentum)
	case f.Workers < 0:
		return fmt.Errorf("genfl: %d workers", f.Workers)
	}
	return nil
}

func (o *ObjectiveConfig) validate() error {
	if !(o.PMin > 0 && o.PMin < 1) {
		return fmt.Errorf("genfl: p_min = %v must lie in (0, 1)", o.PMin)
	}
	_, err := newObjectiveTerms(o.Objective, 1, o.Delta, o.KLPenalty)
	return err
}

func (f *Federation) workers() int {
	w := f.Workers
	if w == 0 {
		w = runtime.GOMAXPROCS(0)
	}
	return max(w, 1)
}

// Purpose tags of the random streams (ASCII words, see data.StreamID).
const (
	tagSelect = 0x73656c656374   // "select": users of a round
	tagUser   = 0x75736572       // "user": one user's local update in a round
	tagPairs  = 0x7061697273     // "pairs": FEDBOUND's (weight, example) pairs
	tagFull   = 0x66756c6c       // "full": FEDBOUND's whole-sample weights
	tagTest   = 0x74657374       // "test": Gibbs test error
	tagPers   = 0x70657273       // "pers": PFL personalisation of a client
	tagPrior  = 0x7072696f72     // "prior": data-free prior means
	tagERM    = 0x65726d         // "erm": the learnt prior's rounds
	tagPBound = 0x70626f756e64   // "pbound": per-client bounds (Alg. 4)
	tagPTest  = 0x7074657374     // "ptest": per-client Gibbs test errors
	tagPredct = 0x70726564696374 // "predict": predictive probabilities
)

func stream(seed, tag uint64, idx ...uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, data.StreamID(tag, idx...)))
}

// selectUsers is S_t: max(round(C·K), 1) distinct users, in increasing
// order, drawn from the stream (seed, "select", round).
func selectUsers(k int, c float64, seed uint64, round int) []int {
	n := min(max(int(math.Round(c*float64(k))), 1), k)
	perm := stream(seed, tagSelect, uint64(round)).Perm(k)[:n]
	// Increasing order: the aggregation sums in a fixed order.
	for i := 1; i < n; i++ {
		for j := i; j > 0 && perm[j] < perm[j-1]; j-- {
			perm[j], perm[j-1] = perm[j-1], perm[j]
		}
	}
	return perm
}

// worker holds one goroutine's buffers: its network and the vectors of a
// local update.
type worker struct {
	net         *net
	mu, rho     []float64
	vm, vr      []float64 // momentum
	w, g, gr    []float64 // weight sample, gradients (μ or weights; ρ)
	nrm         meanfield.Normals
	expBuf      []float64 // e^ρ of one block of prepareSample
	eps         []float64
	sigma, dsig []float64 // softplus(ρ) and sigmoid(ρ)
	xb          []float64
	yb          []int
	perm        []int
}

func newWorker(a Arch, bayes bool) *worker {
	p := a.NumParams()
	w := &worker{net: newNet(a, linalg.NewNative(1)),
		mu: make([]float64, p), vm: make([]float64, p), g: make([]float64, p)}
	if bayes {
		w.rho, w.vr = make([]float64, p), make([]float64, p)
		w.w, w.eps, w.gr = make([]float64, p), make([]float64, p), make([]float64, p)
		w.sigma, w.dsig = make([]float64, p), make([]float64, p)
	}
	return w
}

// batch gathers the rows idx of c into the worker's batch buffers.
func (w *worker) batch(c *Client, idx []int, in int) ([]float64, []int) {
	if cap(w.xb) < len(idx)*in {
		w.xb = make([]float64, len(idx)*in)
	}
	if cap(w.yb) < len(idx) {
		w.yb = make([]int, len(idx))
	}
	xb, yb := w.xb[:len(idx)*in], w.yb[:len(idx)]
	for r, i := range idx {
		copy(xb[r*in:(r+1)*in], c.X[i*in:(i+1)*in])
		yb[r] = c.Y[i]
	}
	return xb, yb
}

// epochs runs fed.LocalEpochs passes over c in mini-batches of fed.Batch
// (a fresh random order each epoch, the last batch possibly smaller),
// calling step on each, and returns the mean of step's values.
func (w *worker) epochs(c *Client, in int, fed *Federation, rng *rand.Rand,
	step func(x []float64, y []int) (float64, error)) (float64, error) {
	m := c.M()
	if cap(w.perm) < m {
		w.perm = make([]int, m)
	}
	perm := w.perm[:m]
	sum, n := 0.0, 0
	for range fed.LocalEpochs {
		for i := range perm {
			perm[i] = i
		}
		rng.Shuffle(m, func(a, b int) { perm[a], perm[b] = perm[b], perm[a] })
		for lo := 0; lo < m; lo += fed.Batch {
			x, y := w.batch(c, perm[lo:min(lo+fed.Batch, m)], in)
			v, err := step(x, y)
			if err != nil {
				return 0, err
			}
			sum += v
			n++
		}
	}
	return sum / float64(n), nil
}

// posteriorStep is one SGD-with-momentum step of userUpdate (Alg. 1 lines
// 16-17) on the batch: fresh noise ε ~ N(0, I), the objective f at w_s =
// μ + σ ⊙ ε, then v ← momentum·v + ∇f, (μ, ρ) ← (μ, ρ) − η v, the gradient
// formed weight by weight inside the update (elemGrad).
func (w *worker) posteriorStep(x []float64, y []int, p *Prior, terms objectiveTerms, pMin float64,
	fed *Federation) (float64, error) {
	f, dR, dKL, err := w.evaluate(x, y, p, terms, pMin, true)
	if err != nil {
		return 0, err
	}
	invS2 := 1 / (p.Sigma * p.Sigma)
	lr, mom := fed.LR, fed.Momentum
	n := len(w.mu)
	mu, rho, vm, vr, pm := w.mu, w.rho[:n], w.vm[:n], w.vr[:n], p.Mu[:n]
	g, eps, sigma, dsig := w.g[:n], w.eps[:n], w.sigma[:n], w.dsig[:n]
	for j := range mu {
		gm, gr := elemGrad(g[j], eps[j], sigma[j], dsig[j], mu[j]-pm[j], dR, dKL, invS2)
		vm[j] = mom*vm[j] + gm
		vr[j] = mom*vr[j] + gr
		mu[j] -= lr * vm[j]
		rho[j] -= lr * vr[j]
	}
	return f, nil
}

// elemGrad is the gradient of f with respect to one weight's μ and ρ, given
// ∂R̂/∂w at the sample (g), its noise ε, σ, σ′ = sigmoid(ρ), μ − μ_P and
// the objective's partials: through the sample (∂w/∂μ = 1, ∂w/∂ρ = ε σ′)
// and KL's closed form (∂KL/∂μ = (μ − μ_P)/σ_P², ∂KL/∂σ = σ/σ_P² − 1/σ).
func elemGrad(g, eps, s, ds, dmu, dR, dKL, invS2 float64) (gm, gr float64) {
	return dR*g + dKL*dmu*invS2, (dR*g*eps + dKL*(s*invS2-1/s)) * ds
}

// objective is f at the sample for the noise in w.eps, with its gradient
// with respect to μ in w.g and with respect to ρ in w.gr (what
// posteriorStep applies; kept apart for the tests).
func (w *worker) objective(x []float64, y []int, p *Prior, terms objectiveTerms, pMin float64) (float64, error) {
	f, dR, dKL, err := w.evaluate(x, y, p, terms, pMin, false)
	if err != nil {
		return 0, err
	}
	invS2 := 1 / (p.Sigma * p.Sigma)
	for j, g := range w.g {
		w.g[j], w.gr[j] = elemGrad(g, w.eps[j], w.sigma[j], w.dsig[j], w.mu[j]-p.Mu[j], dR, dKL, invS2)
	}
	return f, nil
}

// evaluate forms the sample w_s = μ + σ ⊙ ε (drawing ε into w.eps if
// draw), KL(Q‖P), the bounded cross-entropy R̂ of the batch at w_s, and
// returns f(R̂, KL), ∂f/∂R̂ and ∂f/∂KL, leaving ∂R̂/∂w_s in w.g.
func (w *worker) evaluate(x []float64, y []int, p *Prior, terms objectiveTerms, pMin float64,
	draw bool) (f, dR, dKL float64, err error) {
	sumLogSigma, sq := w.prepareSample(p, draw)
	n := float64(len(w.rho))
	kl := math.Max(n*(math.Log(p.Sigma)-0.5)-sumLogSigma+sq/(2*p.Sigma*p.Sigma), 0)
	a := w.net.arch
	logits := w.net.forward(w.w, x, len(y), 0, nil)
	risk, _, err := boundedCE(logits, y, a.Classes, pMin)
	if err != nil {
		return 0, 0, 0, err
	}
	f, dR, dKL = terms.eval(risk, kl)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, 0, 0, fmt.Errorf("genfl: objective is %v (R̂ = %v, KL = %v)", f, risk, kl)
	}
	w.net.backward(w.w, x, logits, w.g)
	return f, dR, dKL, nil
}

// prepareSample sets σ = softplus(ρ), σ′ = sigmoid(ρ), draws ε if draw,
// forms the weight sample w = μ + σ ⊙ ε, and returns Σ ln σ_j and
// Σ (σ_j² + (μ_j − μ_Pj)²), KL's data-dependent sums. It is the hot loop of
// training (once per mini-batch over every weight): e^ρ comes from the SIMD
// exponential in blocks, ln(1 + e^ρ) from log1pPos (σ = ρ for ρ > 30, to
// double precision), the noise from the inline ziggurat, and Σ ln σ from a
// running product renormalised by its binary exponent every 8 factors (one
// logarithm per block instead of one per weight).
func (w *worker) prepareSample(p *Prior, draw bool) (sumLogSigma, sq float64) {
	const blk = 512
	if len(w.expBuf) < blk {
		w.expBuf = make([]float64, blk)
	}
	e := w.expBuf
	expo := 0
	for lo := 0; lo < len(w.rho); lo += blk {
		hi := min(lo+blk, len(w.rho))
		rho := w.rho[lo:hi]
		ex := e[:len(rho)]
		asm.Exp(ex, rho)
		sigma, dsig := w.sigma[lo:hi], w.dsig[lo:hi]
		mu, pm, eps, ws := w.mu[lo:hi], p.Mu[lo:hi], w.eps[lo:hi], w.w[lo:hi]
		if draw {
			for j := range eps {
				eps[j] = w.nrm.Norm()
			}
		}
		prod := 1.0
		for j, r := range rho {
			var s, ds float64
			if r > 30 {
				s, ds = r, 1
			} else {
				s = meanfield.Log1pPos(ex[j])
				ds = ex[j] / (1 + ex[j])
			}
			sigma[j], dsig[j] = s, ds
			ws[j] = mu[j] + s*eps[j]
			d := mu[j] - pm[j]
			sq += s*s + d*d
			prod *= s
			if j&7 == 7 {
				f, k := math.Frexp(prod)
				prod, expo = f, expo+k
			}
		}
		f, k := math.Frexp(prod)
		sumLogSigma += math.Log(f)
		expo += k
	}
	return sumLogSigma + float64(expo)*math.Ln2, sq
}

// userUpdate is Alg. 1's userUpdate(k, w, m): E epochs of posteriorStep on
// the user's data from the posterior (μ, ρ) in state, result in out.
func (w *worker) userUpdate(c *Client, p *Prior, terms objectiveTerms, o *ObjectiveConfig, fed *Federation, state,
	out [][]float64, rng *rand.Rand) (float64, error) {
	copy(w.mu, state[0])
	copy(w.rho, state[1])
	clear(w.vm)
	clear(w.vr)
	w.nrm.Seed(rng)
	in := w.net.arch.In
	v, err := w.epochs(c, in, fed, rng, func(x []float64, y []int) (float64, error) {
		return w.posteriorStep(x, y, p, terms, o.PMin, fed)
	})
	copy(out[0], w.mu)
	copy(out[1], w.rho)
	return v, err
}

// Train is GenFL (Alg. 1): the posterior starts at the prior, w₁ = (μ_P,
// σ_P); each round max(C·K, 1) users run userUpdate — E local epochs of SGD
// with momentum on the objective f with the total sample size m — and the
// server averages their (μ, ρ) weighted by their sizes. It returns Q =
// N(μ_T, softplus(ρ_T)²). The users are in-process RoundClients.
func Train(cs []Client, p *Prior, m int, a Arch, o ObjectiveConfig, fed Federation) (*Posterior, error) {
	if err := checkTraining(cs, p, a, &o, &fed); err != nil {
		return nil, err
	}
	run := &Options{Arch: a, Prior: RandomPriorKind, Objective: o, PosteriorFed: fed}
	clients, sizes := localClients(cs, run, func(c *roundClient, k int) { c.post = cs[k] })
	return trainRounds(clients, sizes, p, m, a, &o, &fed)
}

// localClients are in-process clients of run over cs (set places user k's
// rows) and the users' sizes.
func localClients(cs []Client, run *Options, set func(c *roundClient, k int)) ([]fl.RoundClient, []int) {
	pl := newPools(run.Arch, max(run.PosteriorFed.workers(), run.PriorFed.workers()))
	clients, sizes := make([]fl.RoundClient, len(cs)), make([]int, len(cs))
	for k := range cs {
		c := &roundClient{o: run, index: k, p: run.Arch.NumParams(), pools: pl}
		set(c, k)
		clients[k], sizes[k] = c, cs[k].M()
	}
	return clients, sizes
}

func checkTraining(cs []Client, p *Prior, a Arch, o *ObjectiveConfig, fed *Federation) error {
	if err := a.Validate(); err != nil {
		return err
	}
	if err := p.Validate(a); err != nil {
		return err
	}
	if err := checkClients(cs, a); err != nil {
		return err
	}
	if err := o.validate(); err != nil {
		return err
	}
	return fed.validate()
}

// Personalise is Alg. 3's ClientUpdate(k, w₁, m_k): one user's E epochs
// of the objective with its own sample size m = m_k, from Q = P, on its
// own data; the stream is (seed, "pers", user).
func Personalise(c *Client, user int, p *Prior, a Arch, o ObjectiveConfig, fed Federation) (*Posterior, error) {
	if err := checkTraining([]Client{*c}, p, a, &o, &fed); err != nil {
		return nil, err
	}
	if user < 0 {
		return nil, fmt.Errorf("genfl: user %d", user)
	}
	run := &Options{Arch: a, Prior: RandomPriorKind, Objective: o, PosteriorFed: fed, PersonalEpochs: fed.LocalEpochs}
	rc := &roundClient{o: run, index: user, p: a.NumParams(), post: *c, pools: newPools(a, 1)}
	global := append([]float64{phasePersonalise, p.Sigma}, p.Mu...)
	t := fl.RoundTask{Seed: fed.Seed, Stream: data.StreamID(tagPers, uint64(user))}
	if _, err := rc.Fit(t, global, make([]float64, len(global))); err != nil {
		return nil, err
	}
	return rc.q, nil
}

// LearnPrior learns the prior mean by federated ERM (FedAvg of
// deterministic networks, cross-entropy, dropout, SGD with momentum) from
// the means of init, on data the bound will not use; the prior is
// N(μ_learnt, sigma²). The paper trains it with momentum 0.99 and dropout
// 0.2 for 100 rounds of 5 local epochs. The users are in-process
// RoundClients.
func LearnPrior(cs []Client, init *Prior, sigma float64, a Arch, dropout float64, fed Federation) (*Prior, error) {
	o := DefaultObjective()
	if err := checkTraining(cs, init, a, &o, &fed); err != nil {
		return nil, err
	}
	run := &Options{Arch: a, Prior: LearntPriorKind, PriorFed: fed, Dropout: dropout}
	clients, sizes := localClients(cs, run, func(c *roundClient, k int) { c.erm = cs[k] })
	return learnPrior(clients, sizes, init, sigma, a, dropout, &fed)
}

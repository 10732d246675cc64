package fl

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pacpfl/pacpfl/data"
)

// GP clients' terms of the certificate (docs/math.md §2.18.1): the
// hypothesis is the latent function f, Q_i(P) the GP posterior of f given
// S_i under the prior P (noise σ_φ² inflated to σ_φ²/scale at a
// temperature scale = β/m_i), the loss the clipped squared error of f(x).

// CertEval returns the CertEvalFunc of the clients' training data S_i for
// the loss min((y − f(x))², c)/c.
func (g *GPModel) CertEval(clients []data.ClientData, c float64) CertEvalFunc {
	return func(phi []float64, i int, scale float64) (CertTerms, error) {
		if i < 0 || i >= len(clients) {
			return CertTerms{}, fmt.Errorf("client %d of %d", i, len(clients))
		}
		cl := &clients[i]
		mean, K, sigma := g.priorMoments(phi, cl.X)
		return gpCertTerms(cl.Y, mean, K, sigma*sigma/scale, c)
	}
}

// gpCertTerms are CertTerms of the exact GP posterior of f at the training
// inputs (prior mean, kernel matrix K, noise variance s2).
func gpCertTerms(y, mean, K []float64, s2, c float64) (CertTerms, error) {
	m := len(y)
	post, err := newGPPost(y, mean, K, s2)
	if err != nil {
		return CertTerms{}, err
	}
	var t CertTerms
	// KL(N(μ_f, Σ_f) ‖ N(mean, K)) = ½[ln det(A/s2) − m + s2·tr(A⁻¹) + αᵀKα].
	logDet, trInv := 0.0, 0.0
	for j := 0; j < m; j++ {
		logDet += 2*math.Log(post.L[j*m+j]) - math.Log(s2)
	}
	linv := post.lowerInverse()
	for _, v := range linv {
		trInv += v * v
	}
	quad := 0.0
	for j := 0; j < m; j++ {
		kj := 0.0
		for l := 0; l < m; l++ {
			kj += K[j*m+l] * post.alpha[l]
		}
		quad += post.alpha[j] * kj
		// Posterior of f(x_j): mean + (Kα)_j, variance K_jj − ‖L⁻¹K_{:,j}‖².
		v := K[j*m+j]
		for r := 0; r < m; r++ {
			w := 0.0
			for l := 0; l <= r; l++ {
				w += linv[r*m+l] * K[l*m+j]
			}
			v -= w * w
		}
		t.LossSum += ExpectedClippedSquare(y[j]-mean[j]-kj, math.Max(v, 0), c)
		t.PriorLossSum += ExpectedClippedSquare(y[j]-mean[j], K[j*m+j], c)
	}
	t.KL = math.Max(0.5*(logDet-float64(m)+s2*trInv+quad), 0)
	return t, nil
}

// gpPost holds the Cholesky factor L of A = K + s2·I and α = A⁻¹(y − mean).
type gpPost struct {
	m     int
	L     []float64
	alpha []float64
}

func newGPPost(y, mean, K []float64, s2 float64) (*gpPost, error) {
	m := len(y)
	if len(mean) != m || len(K) != m*m || !(s2 > 0) {
		return nil, errors.New("certify: GP moments of inconsistent sizes or zero noise")
	}
	L := make([]float64, m*m)
	for i := 0; i < m; i++ {
		for j := 0; j <= i; j++ {
			s := K[i*m+j]
			if i == j {
				s += s2
			}
			for l := 0; l < j; l++ {
				s -= L[i*m+l] * L[j*m+l]
			}
			if i == j {
				if !(s > 0) {
					return nil, errors.New("certify: K + σ²I is not positive definite")
				}
				L[i*m+i] = math.Sqrt(s)
			} else {
				L[i*m+j] = s / L[j*m+j]
			}
		}
	}
	p := &gpPost{m: m, L: L}
	r := make([]float64, m)
	for i := range r {
		r[i] = y[i] - mean[i]
	}
	p.alpha = p.solve(r)
	return p, nil
}

// solve returns A⁻¹b.
func (p *gpPost) solve(b []float64) []float64 {
	m, L := p.m, p.L
	x := append([]float64(nil), b...)
	for i := 0; i < m; i++ {
		for l := 0; l < i; l++ {
			x[i] -= L[i*m+l] * x[l]
		}
		x[i] /= L[i*m+i]
	}
	for i := m - 1; i >= 0; i-- {
		for l := i + 1; l < m; l++ {
			x[i] -= L[l*m+i] * x[l]
		}
		x[i] /= L[i*m+i]
	}
	return x
}

// lowerInverse returns L⁻¹ (lower triangular, m×m row-major).
func (p *gpPost) lowerInverse() []float64 {
	m, L := p.m, p.L
	inv := make([]float64, m*m)
	for c := 0; c < m; c++ {
		inv[c*m+c] = 1 / L[c*m+c]
		for i := c + 1; i < m; i++ {
			s := 0.0
			for l := c; l < i; l++ {
				s -= L[i*m+l] * inv[l*m+c]
			}
			inv[i*m+c] = s / L[i*m+i]
		}
	}
	return inv
}

// CertTestLoss is the mean over client c's test points of E_{f∼Q(P)}
// min((y − f(x))², clip)/clip for the posterior Q(P) of CertEval: the
// measured counterpart of the certified loss, for one prior P.
func (g *GPModel) CertTestLoss(phi []float64, c *data.ClientData, scale, clip float64) (float64, error) {
	m, t := len(c.Y), len(c.YTest)
	if t == 0 {
		return 0, errors.New("certify: client without test points")
	}
	X := append(append([]float64(nil), c.X...), c.XTest...)
	mean, K, sigma := g.priorMoments(phi, X)
	n := m + t
	Ktr := make([]float64, m*m)
	for i := 0; i < m; i++ {
		copy(Ktr[i*m:(i+1)*m], K[i*n:i*n+m])
	}
	post, err := newGPPost(c.Y, mean[:m], Ktr, sigma*sigma/scale)
	if err != nil {
		return 0, err
	}
	linv := post.lowerInverse()
	sum := 0.0
	w := make([]float64, m)
	for s := 0; s < t; s++ {
		col := m + s
		mu := mean[col]
		for l := 0; l < m; l++ {
			mu += K[l*n+col] * post.alpha[l]
		}
		v := K[col*n+col]
		for r := 0; r < m; r++ {
			w[r] = 0
			for l := 0; l <= r; l++ {
				w[r] += linv[r*m+l] * K[l*n+col]
			}
			v -= w[r] * w[r]
		}
		sum += ExpectedClippedSquare(c.YTest[s]-mu, math.Max(v, 0), clip)
	}
	return sum / float64(t), nil
}

// GPCertifyOptions configure CertifyGP.
type GPCertifyOptions struct {
	// Clip is c of the loss min((y − ŷ)², c)/c (0: 1, one standard
	// deviation of the standardised targets, squared).
	Clip float64
	// Split of the existing clients (nil: NewSplit(n, Seed)).
	Split *Split
	// Certify holds δ and the grids (empty grids: the defaults).
	Certify CertifyOptions
	// TestDraws is the number of hyper-posterior draws behind the measured
	// test loss of the certified model (0: 40).
	TestDraws int
	// DataFree also computes the certificate over all existing clients
	// against the data-free hyper-prior 𝒩(μ_𝒫, σ_𝒫²I), for comparison.
	DataFree bool
	// PriorModel also certifies the model of the run on A itself (its
	// particles as the hyper-posterior's centres, so KL(𝒬‖𝒫_A) is 0 at
	// equal widths): a certified configuration whose accuracy is
	// measured beside it.
	PriorModel bool
	Seed       uint64
}

// Defaults of the certificate's grids (absolute stds per coordinate of φ,
// and β/m).
var (
	DefaultCertWidths      = []float64{0.001, 0.003, 0.01, 0.03}
	DefaultCertPriorWidths = []float64{0.01, 0.03, 0.1, 0.3, 1}
	DefaultCertScales      = []float64{1, 0.3, 0.1, 0.03}
)

// GPCertificates are the certificates of a trained PAC-PFL GP model with
// the measured losses beside them (docs/math.md §2.18).
type GPCertificates struct {
	Clip  float64 `json:"clip"`
	Split Split   `json:"split"`
	// Existing: the two-level bound for the personalised (randomised)
	// posteriors of the clients in B, hyper-prior learned on A.
	Existing Certificate `json:"existing"`
	// DataFree: the same bound over all existing clients against the
	// data-free hyper-prior (when asked).
	DataFree *Certificate `json:"existing_data_free,omitempty"`
	// ExistingMeasured is the test loss of the certified randomised model
	// on B's test points; ExistingDeployed that of the deployed predictor
	// (the mixture's predictive mean).
	ExistingMeasured float64 `json:"existing_measured"`
	ExistingDeployed float64 `json:"existing_deployed"`
	// TestSet are the test-set certificates of the deployed predictor
	// (TestSetCertificatesGP): over all existing clients' test points, and
	// over new clients.
	TestSet *TestSetCertificates `json:"test_set,omitempty"`
	// PriorModel is the certificate of the run on A's own model on B
	// (when asked), PriorModelMeasured and PriorModelDeployed its measured
	// test losses on B as above, PriorModelNewDeployed on the new clients.
	PriorModel            *Certificate `json:"prior_model,omitempty"`
	PriorModelMeasured    float64      `json:"prior_model_measured,omitempty"`
	PriorModelDeployed    float64      `json:"prior_model_deployed,omitempty"`
	PriorModelNewDeployed float64      `json:"prior_model_new_deployed,omitempty"`
	// PriorParticles are the particles of the run on A.
	PriorParticles []float64 `json:"-"`
	Delta          float64   `json:"delta"`
}

// CertifyGP certifies the PAC-PFL GP model that opt trained on ds (its
// particles, client model g): it trains the hyper-prior's particles on the
// clients of A only (same options and seed, so the same initial particles;
// a round costs what a training round costs) and bounds the clients of B
// with them (docs/math.md §2.18).
func CertifyGP(
	ds *data.Dataset,
	g *GPModel,
	opt PACPFLOptions,
	particles []float64,
	co GPCertifyOptions,
) (*GPCertificates, error) {
	n := len(ds.Existing)
	g = g.Trained(opt)
	clip := co.Clip
	if clip == 0 {
		clip = 1
	}
	if !(clip > 0) || math.IsInf(clip, 0) {
		return nil, fmt.Errorf("certify: clip %v must be positive and finite", clip)
	}
	sp := NewSplit(n, co.Seed)
	if co.Split != nil {
		sp = *co.Split
	}
	if err := sp.Validate(n); err != nil {
		return nil, err
	}
	if len(sp.A) == 0 {
		return nil, errors.New("certify: no client in A to learn the hyper-prior on")
	}
	o := co.Certify
	if o.Delta == 0 {
		o.Delta = 0.05
	}
	if len(o.Widths) == 0 {
		o.Widths = DefaultCertWidths
	}
	if len(o.PriorWidths) == 0 {
		o.PriorWidths = DefaultCertPriorWidths
	}
	if len(o.Scales) == 0 {
		o.Scales = DefaultCertScales
	}
	o.Seed = co.Seed
	k, d := opt.Server.K, g.Dim()
	if len(particles) != k*d {
		return nil, fmt.Errorf("certify: %d particle values for %d particles of dimension %d", len(particles), k, d)
	}
	pick := func(idx []int) []data.ClientData {
		out := make([]data.ClientData, len(idx))
		for j, i := range idx {
			out[j] = ds.Existing[i]
		}
		return out
	}
	A, B := pick(sp.A), pick(sp.B)
	dsA := &data.Dataset{D: ds.D, Existing: A}
	optA := opt
	optA.Server.ClientsPerRound = min(opt.Server.ClientsPerRound, len(A))
	// In-process clients on A, no progress report (a stop request through
	// AfterRound still applies).
	optA.Clients, optA.Server.Progress = nil, nil
	resA, _, err := trainPACPFL(dsA, g, optA)
	if err != nil {
		return nil, fmt.Errorf("certify: hyper-prior run on A: %w", err)
	}
	out := &GPCertificates{Clip: clip, Split: sp, PriorParticles: resA.Particles, Delta: o.Delta}
	q := GaussianMixture{Centers: particles, K: k, Dim: d}
	pA := GaussianMixture{Centers: resA.Particles, K: k, Dim: d}
	mB := sampleCounts(B)
	if out.Existing, err = Certify(q, pA, mB, g.CertEval(B, clip), o); err != nil {
		return nil, err
	}
	if co.DataFree {
		mu := g.Model.HyperPriorMean()
		centres := make([]float64, 0, k*d)
		for range k {
			centres = append(centres, mu...)
		}
		of := o
		of.PriorWidths = []float64{opt.SigmaP}
		c, err := Certify(q, GaussianMixture{Centers: centres, K: k, Dim: d}, sampleCounts(ds.Existing),
			g.CertEval(ds.Existing, clip), of)
		if err != nil {
			return nil, err
		}
		out.DataFree = &c
	}
	if out.ExistingMeasured, err = certMeasured(g, B, q, out.Existing, co); err != nil {
		return nil, err
	}
	lb, err := gpDeployedLosses(g, particles, B, clip)
	if err != nil {
		return nil, err
	}
	out.ExistingDeployed, _ = pooledLoss(lb)
	if out.TestSet, err = TestSetCertificatesGP(ds, g, particles, clip, o.Delta); err != nil {
		return nil, err
	}
	if co.PriorModel {
		if err := out.priorModel(ds, g, pA, B, o, co); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// priorModel certifies the run on A as the deployed model (hyper-posterior
// centres = hyper-prior centres, the same width grid for both).
func (out *GPCertificates) priorModel(ds *data.Dataset, g *GPModel, pA GaussianMixture, B []data.ClientData,
	o CertifyOptions, co GPCertifyOptions) error {
	op := o
	op.PriorWidths = o.Widths
	c, err := Certify(pA, pA, sampleCounts(B), g.CertEval(B, out.Clip), op)
	if err != nil {
		return err
	}
	out.PriorModel = &c
	if out.PriorModelMeasured, err = certMeasured(g, B, pA, c, co); err != nil {
		return err
	}
	lb, err := gpDeployedLosses(g, pA.Centers, B, out.Clip)
	if err != nil {
		return err
	}
	out.PriorModelDeployed, _ = pooledLoss(lb)
	if len(ds.New) > 0 {
		ln, err := gpDeployedLosses(g, pA.Centers, ds.New, out.Clip)
		if err != nil {
			return err
		}
		var s float64
		for _, l := range ln {
			s += l.Sum / float64(l.N)
		}
		out.PriorModelNewDeployed = s / float64(len(ln))
	}
	return nil
}

func sampleCounts(cs []data.ClientData) []int {
	m := make([]int, len(cs))
	for i := range cs {
		m[i] = len(cs[i].Y)
	}
	return m
}

// certMeasured is the Monte Carlo mean over hyper-posterior draws (at the
// certificate's width and temperature) of the test loss of B's randomised
// posteriors, pooled over B's test points.
func certMeasured(
	g *GPModel,
	B []data.ClientData,
	q GaussianMixture,
	c Certificate,
	co GPCertifyOptions,
) (float64, error) {
	T := co.TestDraws
	if T == 0 {
		T = 40
	}
	vals := make([]float64, T)
	err := parallelFor(T, func(j int) error {
		rng := rand.New(rand.NewPCG(co.Seed, data.StreamID(0x74657374, uint64(j))))
		κ := rng.IntN(q.K)
		phi := make([]float64, q.Dim)
		for i := range phi {
			phi[i] = q.Centers[κ*q.Dim+i] + c.Width*rng.NormFloat64()
		}
		s, w := 0.0, 0
		for i := range B {
			v, err := g.CertTestLoss(phi, &B[i], c.Scale, co.clip())
			if err != nil {
				return err
			}
			s += v * float64(len(B[i].YTest))
			w += len(B[i].YTest)
		}
		vals[j] = s / float64(w)
		return nil
	})
	return mean(vals), err
}

func (co GPCertifyOptions) clip() float64 {
	if co.Clip == 0 {
		return 1
	}
	return co.Clip
}

// Sentences says in one sentence per certificate what it covers — which
// model, which loss and range, which probability, which assumptions — with
// the same loss measured beside it (docs/math.md §2.18).
func (c *GPCertificates) Sentences() []string {
	conf := 100 * (1 - c.Delta)
	loss := fmt.Sprintf("squared error (clipped at %g and divided by it: a loss in [0, 1])", c.Clip)
	e := c.Existing
	out := []string{
		fmt.Sprintf("With probability ≥ %g %% over the training samples of the %d existing clients of B "+
			"(i.i.d. within each client, independent across clients), the mean expected %s of their personalised "+
			"GP posteriors, randomised over the trained hyper-posterior, is at most %.3f "+
			"(hyper-prior learned on the other %d clients; measured on B's test data: %.3f, deployed predictor %.3f).",
			conf, e.Clients, loss, e.Bound, len(c.Split.A), c.ExistingMeasured, c.ExistingDeployed),
	}
	if c.TestSet != nil {
		out = append(out, c.TestSet.Sentences()...)
	}
	if p := c.PriorModel; p != nil {
		out = append(out, fmt.Sprintf("With probability ≥ %g %% over the training samples of B, the same loss of "+
			"B's personalised posteriors under the model trained on A alone is at most %.3f (measured: %.3f, "+
			"deployed %.3f; new clients with that model: %.3f).",
			conf, p.Bound, c.PriorModelMeasured, c.PriorModelDeployed, c.PriorModelNewDeployed))
	}
	return out
}

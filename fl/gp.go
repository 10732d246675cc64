package fl

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/internal/workq"
	"github.com/pacpfl/pacpfl/linalg"
	"github.com/pacpfl/pacpfl/lml"
)

// GPModel plugs the GP client model of package lml into the federated loop.
type GPModel struct {
	Model lml.Model
	// LiteralBatch uses the plain LML of a mini-batch instead of the
	// tempered objective ln Z^C_{m_i}(P, S^(b)) (docs/math.md §4.5) when b < m_i.
	LiteralBatch bool
	// FreezeMean keeps the mean network at zero (its gradient is dropped),
	// giving the zero-mean GP of the original pFedGP. Particles must start
	// with zero mean weights (RunPACPFL arranges it).
	FreezeMean bool
	// Beta is the client temperature: training maximises ln Z^C_β and
	// prediction uses the Gibbs posterior at β (the zero value, β = m_i,
	// is the LML and the Bayes posterior).
	Beta Temperature
	// Inference chooses the exact GP or the sparse bound per client (the
	// zero value: auto).
	Inference GPInference

	sparse *sparsePool // workspaces of the sparse clients, made on first use
}

// meanParams is the number of leading entries of φ that belong to the mean
// network (Layout stores the mean network first).
func (g *GPModel) meanParams() int {
	n := 0
	for _, b := range g.Model.Layout() {
		if len(b.Name) >= 5 && b.Name[:5] == "mean." {
			n = max(n, b.Offset+b.Size())
		}
	}
	return n
}

// NewGPModel returns the GP model with the default networks for d inputs.
func NewGPModel(d int) *GPModel { return &GPModel{Model: lml.DefaultModel(d)} }

// NewLinearMeanGPModel is the GP model with a linear mean function (no
// hidden layer) and the default deep kernel: pFedGP's model as the paper's
// cross-validation chose it (docs/math.md §4.1).
func NewLinearMeanGPModel(d int) *GPModel {
	m := lml.DefaultModel(d)
	m.MeanHidden = nil
	return &GPModel{Model: m}
}

// Dim is dφ.
func (g *GPModel) Dim() int { return g.Model.NumParams() }

// gpClient is one existing client's Client_Update (Algorithm 2). Each client
// owns a single-threaded evaluator: the server already runs one client per
// core, so the BLAS under each client must not spawn threads of its own.
type gpClient struct {
	model   *GPModel
	x, y    []float64
	d       int
	ev      *lml.Evaluator
	lmls    []float64
	batches data.RowSampler
	scratch []float64
}

// NewClient returns the training client for S_i (never S̃_i).
func (g *GPModel) NewClient(c *data.ClientData) (Client, error) {
	if err := g.Model.CheckData(c.X, c.Y); err != nil {
		return nil, err
	}
	sparse, M, err := g.Inference.Plan(len(c.Y))
	if err != nil {
		return nil, err
	}
	if sparse {
		return g.newSparseClient(c, M)
	}
	ev, err := lml.NewEvaluator(g.Model, lml.EvaluatorOptions{Threads: 1, Split: lml.SplitParticles})
	if err != nil {
		return nil, err
	}
	return &gpClient{model: g, x: c.X, y: c.Y, d: g.Model.D, ev: ev}, nil
}

func (c *gpClient) Update(particles []float64, k, dphi, batch int, rng *rand.Rand, grad []float64) (float64, error) {
	if dphi != c.model.Dim() {
		return 0, fmt.Errorf("gp client: particles of dimension %d, model has dφ = %d", dphi, c.model.Dim())
	}
	if cap(c.lmls) < k {
		c.lmls = make([]float64, k)
	}
	lmls := c.lmls[:k]
	m := len(c.y)
	var err error
	// ln Z^C_β(P, S) multiplies the log-likelihood of the m samples by β/m
	// (for a batch of b: by β/b, unbiased for the full-data exponent).
	beta := c.model.Beta.For(m)
	if batch <= 0 || batch >= m {
		if scale := beta / float64(m); scale == 1 {
			err = c.ev.Evaluate(lmls, grad, particles, c.x, c.y)
		} else {
			err = c.ev.EvaluateTempered(lmls, grad, particles, c.x, c.y, scale)
		}
	} else {
		var bx, by []float64
		if bx, by, err = c.batches.Sample(c.x, c.y, c.d, batch, rng); err != nil {
			return 0, err
		}
		if c.model.LiteralBatch {
			err = c.ev.Evaluate(lmls, grad, particles, bx, by)
		} else {
			err = c.ev.EvaluateTempered(lmls, grad, particles, bx, by, beta/float64(batch))
		}
	}
	if err != nil {
		return 0, err
	}
	if c.model.FreezeMean {
		nm := c.model.meanParams()
		for r := 0; r < k; r++ {
			clear(grad[r*dphi : r*dphi+nm])
		}
	}
	return Mean(lmls), nil
}

// PredictGroup personalises the k particles on each client's data and
// evaluates the mixture predictive (35–37) on its test set. Existing clients
// condition on S_i ∪ S̃_i, new clients on their own data. Clients are spread
// over the cores, one single-threaded predictor per worker; the result does
// not depend on the number of workers.
func (g *GPModel) PredictGroup(particles []float64, clients []data.ClientData) ([]Prediction, error) {
	return g.predictGroup(particles, clients,
		func(c *data.ClientData) (x, y []float64) { return c.PersonalisationData() })
}

// predictGroup with the conditioning data chosen by condition(c).
func (g *GPModel) predictGroup(particles []float64, clients []data.ClientData,
	condition func(c *data.ClientData) (x, y []float64)) ([]Prediction, error) {
	preds := make([]Prediction, len(clients))
	type worker struct {
		p   *lml.Predictor
		sp  *lml.SparsePredictor // made for the first sparse client
		mix lml.Mixture
	}
	var workers []*worker
	var wmu sync.Mutex
	defer func() {
		for _, w := range workers {
			if w.sp != nil {
				w.sp.Close()
			}
		}
	}()
	errs := workq.Run(len(clients), 0, func() (*worker, error) {
		p, err := lml.NewPredictor(g.Model, linalg.NewNative(1))
		w := &worker{p: p}
		wmu.Lock()
		workers = append(workers, w)
		wmu.Unlock()
		return w, err
	}, func(w *worker, i int) error {
		c := &clients[i]
		x, y := condition(c)
		scale := g.Beta.For(len(y)) / float64(len(y))
		sparse, M, err := g.Inference.Plan(len(y))
		if err != nil {
			return err
		}
		if sparse {
			if w.sp == nil {
				if w.sp, err = lml.NewSparsePredictor(g.Model, lml.SparseOptions{Threads: 1}); err != nil {
					return err
				}
			}
			preds[i], err = g.sparsePredictOne(w.sp, &w.mix, particles, x, y, c.XTest, c.YTest, scale, M)
			return err
		}
		preds[i], err = predictOne(w.p, &w.mix, particles, x, y, c.XTest, c.YTest, scale)
		return err
	})
	if i, err := workq.First(errs); err != nil {
		return nil, fmt.Errorf("predict client %d: %w", i, err)
	}
	return preds, nil
}

func predictOne(p *lml.Predictor, mix *lml.Mixture, particles, x, y, xTest, yTest []float64,
	scale float64) (Prediction, error) {
	if err := p.FitTempered(particles, x, y, scale); err != nil {
		return Prediction{}, err
	}
	if err := p.Predict(xTest, mix); err != nil {
		return Prediction{}, err
	}
	return mixturePrediction(mix, p.Weights(), yTest), nil
}

// mixturePrediction reads the predictive means and the CDF at the targets
// off a filled mixture.
func mixturePrediction(mix *lml.Mixture, weights, yTest []float64) Prediction {
	n := len(yTest)
	pr := Prediction{Mean: make([]float64, n), CDFAtY: make([]float64, n), Weights: slices.Clone(weights)}
	for i := 0; i < n; i++ {
		pr.Mean[i] = mix.Mean(i)
		pr.CDFAtY[i] = math.Max(0, math.Min(1, mix.CDF(i, yTest[i])))
	}
	return pr
}

// priorMoments evaluates the GP prior P_φ at the inputs X (m×D): the mean
// vector m_φ(X), the kernel matrix K_φ(X, X) (m×m) and the noise std. It runs
// the two tanh MLPs straight from Model.Layout, independently of package
// lml's own forward pass (the test checks the two agree through the LML).
func (g *GPModel) priorMoments(phi, X []float64) (mean, K []float64, sigma float64) {
	md := g.Model
	m := len(X) / md.D
	blocks := md.Layout()
	bi := 0
	forward := func(hidden []int, out int) []float64 {
		// Four data rows at a time through all the layers: each unit's four
		// sums advance together in registers, independent chains the core
		// overlaps (a row at a time, each sum waited for its last
		// addition). Every sum is still bias + Σ_j w_j h_j in the order of
		// j: a row-at-a-time pass's values to the bit.
		width := out
		for _, w := range hidden {
			width = max(width, w)
		}
		bufs := [2][]float64{make([]float64, 4*width), make([]float64, 4*width)}
		res := make([]float64, m*out)
		for r0 := 0; r0 < m; r0 += 4 {
			nb := min(4, m-r0)
			H := X[r0*md.D : (r0+nb)*md.D] // the layer's input, in values per row
			for l := 0; l <= len(hidden); l++ {
				wb, bb := blocks[bi+2*l], blocks[bi+2*l+1]
				o, in := wb.Shape[0], wb.Shape[1]
				A := bufs[l%2][:nb*o]
				for i := 0; i < o; i++ {
					w := phi[wb.Offset+i*in : wb.Offset+i*in+in]
					bias := phi[bb.Offset+i]
					var acc [4]float64
					if nb == 4 {
						h0, h1, h2, h3 := H[:in], H[in:2*in], H[2*in:3*in], H[3*in:4*in]
						s0, s1, s2, s3 := bias, bias, bias, bias
						for j, wv := range w {
							s0 += wv * h0[j]
							s1 += wv * h1[j]
							s2 += wv * h2[j]
							s3 += wv * h3[j]
						}
						acc = [4]float64{s0, s1, s2, s3}
					} else {
						for r := 0; r < nb; r++ {
							hr := H[r*in : r*in+in]
							s := bias
							for j, wv := range w {
								s += wv * hr[j]
							}
							acc[r] = s
						}
					}
					for r, v := range acc[:nb] {
						if l < len(hidden) {
							v = math.Tanh(v)
						}
						A[r*o+i] = v
					}
				}
				H = A
			}
			copy(res[r0*out:], H[:nb*out])
		}
		bi += 2 * (len(hidden) + 1)
		return res
	}
	mean = forward(md.MeanHidden, 1)
	F := forward(md.KernelHidden, md.DF)
	return mean, seKernel(F, m, md.DF), lml.NoiseStd(phi[len(phi)-1])
}

// seKernel is the m×m matrix exp(−½‖f_i − f_j‖²) of the features F (m×df).
func seKernel(F []float64, m, df int) []float64 {
	K := make([]float64, m*m)
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			s := 0.0
			for c := 0; c < df; c++ {
				d := F[i*df+c] - F[j*df+c]
				s += d * d
			}
			K[i*m+j] = math.Exp(-0.5 * s)
		}
	}
	return K
}

// ClippedLogZ returns a LogZCFunc for the existing clients of ds: ln Z^C_β of
// the Gaussian NLL clipped to [a, b], by Monte Carlo over nSamples functions
// drawn from the GP prior at S_i (see ClippedGaussianLogZ).
func (g *GPModel) ClippedLogZ(clients []data.ClientData, beta, a, b float64, nSamples int) LogZCFunc {
	return func(phi []float64, i int, rng *rand.Rand) (float64, error) {
		c := &clients[i]
		mean, K, sigma := g.priorMoments(phi, c.X)
		m := len(c.Y)
		chol, err := cholJitter(K, m)
		if err != nil {
			return 0, err
		}
		return ClippedGaussianLogZ(c.Y, mean, chol, sigma, beta, a, b, nSamples, rng)
	}
}

// cholJitter returns the lower Cholesky factor (m×m row-major) of K + εI for
// the smallest ε in {0, 1e-10, …, 1e-4} that factorises: the deep-kernel
// matrix of a prior sample is often numerically singular.
func cholJitter(K []float64, m int) ([]float64, error) {
	for eps := 0.0; eps <= 1e-4; {
		s := mat.NewSymDense(m, nil)
		for i := 0; i < m; i++ {
			for j := i; j < m; j++ {
				s.SetSym(i, j, K[i*m+j])
			}
			s.SetSym(i, i, K[i*m+i]+eps)
		}
		var ch mat.Cholesky
		if ch.Factorize(s) {
			var l mat.TriDense
			ch.LTo(&l)
			out := make([]float64, m*m)
			for i := 0; i < m; i++ {
				for j := 0; j <= i; j++ {
					out[i*m+j] = l.At(i, j)
				}
			}
			return out, nil
		}
		if eps == 0 {
			eps = 1e-10
		} else {
			eps *= 10
		}
	}
	return nil, errors.New("prior kernel matrix not positive definite even with jitter 1e-4")
}

// Trained is the client model as a PAC-PFL run with opt trains and
// personalises it (its temperature opt.Beta; the mean frozen with
// opt.ZeroMean): the model whose predictions the run reports, and that
// the certificates of a trained model evaluate.
func (g *GPModel) Trained(opt PACPFLOptions) *GPModel {
	return &GPModel{Model: g.Model, LiteralBatch: g.LiteralBatch, FreezeMean: g.FreezeMean || opt.ZeroMean,
		Beta: opt.Beta, Inference: g.Inference}
}

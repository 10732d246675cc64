package fedvi

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/pacpfl/pacpfl/conv"
	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/internal/fedrun"
)

// evalChunk is how many images go through E at once in evaluation (the
// activations of a chunk, not of a client's whole set, are held).
const evalChunk = 256

// Personalise builds client k's local posterior without training: the
// support set is its whole training set, whose global features E(x)^g
// (dropout off) are mean-pooled and passed through P (with
// Arch.PoolOutputs: passed through P one by one, P's outputs averaged). This is how both
// participating and non-participating clients get their local classifier
// for evaluation.
func (m *Model) Personalise(theta, support []float64) error {
	if err := m.Set(theta); err != nil {
		return err
	}
	m.setTrain(false, nil)
	a := m.A
	D := a.InChannels * a.InH * a.InW
	n := len(support) / D
	if n < 1 || len(support) != n*D {
		return fmt.Errorf("fedvi: %d support inputs are not images of %d pixels (at least one)", len(support), D)
	}
	d, dg := a.Embed, a.Global
	if a.PoolOutputs {
		return m.personaliseOutputs(support, n)
	}
	sum := make([]float64, dg)
	err := m.embedChunks(a, &m.img, support, func(_, b int, R *conv.Tensor) error {
		for i := 0; i < b; i++ {
			for j, v := range R.Data[i*d : i*d+dg] {
				sum[j] += v
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	shape(&m.pooled, 1, dg, 1, 1)
	for j, v := range sum {
		m.pooled.Data[j] = v / float64(n)
	}
	return m.constructPosterior()
}

// personaliseOutputs is Personalise with Arch.PoolOutputs: P runs on
// every support image's global features and its outputs are averaged
// over the n images.
func (m *Model) personaliseOutputs(support []float64, n int) error {
	a := m.A
	d, dg := a.Embed, a.Global
	w := (2*a.Local() + 1) * a.Classes
	sum := make([]float64, w)
	err := m.embedChunks(a, &m.img, support, func(_, b int, R *conv.Tensor) error {
		shape(&m.pooled, b, dg, 1, 1)
		for i := 0; i < b; i++ {
			copy(m.pooled.Data[i*dg:(i+1)*dg], R.Data[i*d:i*d+dg])
		}
		h, err := m.runP()
		if err != nil {
			return err
		}
		for i := 0; i < b; i++ {
			for j, v := range h.Data[i*w : (i+1)*w] {
				sum[j] += v
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for j := range sum {
		sum[j] /= float64(n)
	}
	m.setPosterior(sum, 1)
	return nil
}

// Predict returns the class probabilities (rows of |Y|) of the images x
// under the last Personalise: the mean over draws samples β ~ N(μ, σ²)
// of softmax(G(R^g) + R^l βᵀ + b), R = E(x) with dropout off; the same
// draws for every image. draws = 0 uses β = μ.
func (m *Model) Predict(x []float64, draws int, rng *rand.Rand) ([]float64, error) {
	a := m.A
	D := a.InChannels * a.InH * a.InW
	n := len(x) / D
	if len(x) != n*D || draws < 0 {
		return nil, fmt.Errorf("fedvi: %d inputs are not images of %d pixels, or %d draws < 0", len(x), D, draws)
	}
	m.setTrain(false, nil)
	d, dg, dl, C := a.Embed, a.Global, a.Local(), a.Classes
	p := &m.post
	k := dl * C
	betas := make([]float64, max(draws, 1)*k)
	if draws == 0 {
		copy(betas, p.mu)
	}
	for s := 0; s < draws; s++ {
		for i := range p.eps {
			p.eps[i] = rng.NormFloat64()
		}
		p.sampleBeta(p.eps)
		copy(betas[s*k:], p.beta)
	}
	probs := make([]float64, n*C)
	logits := make([]float64, evalChunk*C)
	err := m.embedChunks(a, &m.img, x, func(lo, b int, R *conv.Tensor) error {
		shape(&m.qg, b, dg, 1, 1)
		m.ql = grow(m.ql, b*dl)
		for i := 0; i < b; i++ {
			copy(m.qg.Data[i*dg:(i+1)*dg], R.Data[i*d:i*d+dg])
			copy(m.ql[i*dl:(i+1)*dl], R.Data[i*d+dg:(i+1)*d])
		}
		og, err := m.g.Forward(&m.qg)
		if err != nil {
			return err
		}
		for s := 0; s < max(draws, 1); s++ {
			lg := logits[:b*C]
			copy(lg, og.Data)
			m.localLogits(lg, m.ql, betas[s*k:(s+1)*k], b)
			for i := 0; i < b; i++ {
				z := lg[i*C : (i+1)*C]
				mx := z[0]
				for _, v := range z[1:] {
					mx = math.Max(mx, v)
				}
				sum := 0.0
				for c, v := range z {
					z[c] = math.Exp(v - mx)
					sum += z[c]
				}
				dst := probs[(lo+i)*C : (lo+i+1)*C]
				for c, v := range z {
					dst[c] += v / sum / float64(max(draws, 1))
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i := 0; i < n; i++ {
		if row := probs[i*C : (i+1)*C]; math.IsNaN(row[0]) {
			return nil, fmt.Errorf("fedvi: NaN class probabilities for image %d: the weights are not finite", i)
		}
	}
	return probs, nil
}

// GroupEval is one group's evaluation: per-client accuracy and calibration
// error (fl.EvaluateClassification), and the accuracy weighted by the
// clients' local test-set sizes (FedVI's aggregation: the fraction of the
// group's test images classified correctly).
type GroupEval struct {
	fl.ClassGroupMetrics
	Weighted float64 `json:"accuracy_weighted"`
}

// Evaluate personalises every client of the group through P (no training)
// and scores its test set; pool supplies one Model per concurrent worker.
func Evaluate(pool *Pool, theta []float64, clients []data.ClientData, classes, draws int, seed,
	tag uint64) (GroupEval, error) {
	preds := make([]fl.ClassPrediction, len(clients))
	err := fedrun.ForEach(len(clients), func(k int) error {
		m, err := pool.get()
		if err != nil {
			return err
		}
		defer pool.put(m)
		rng := rand.New(rand.NewPCG(seed, data.StreamID(tag, uint64(k))))
		pr, err := m.predictClient(theta, &clients[k], draws, rng)
		if err != nil {
			return fmt.Errorf("client %d: %w", k, err)
		}
		preds[k] = fl.ClassPrediction{Probs: pr}
		return nil
	})
	if err != nil {
		return GroupEval{}, err
	}
	return groupEval(preds, clients, classes)
}

// Pool hands out Models of one architecture, one per concurrent worker,
// creating them on demand.
type Pool struct {
	A    Arch
	mu   sync.Mutex
	free []*Model
}

func (p *Pool) get() (*Model, error) {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		m := p.free[n-1]
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return m, nil
	}
	p.mu.Unlock()
	return NewModel(p.A, nil)
}

func (p *Pool) put(m *Model) {
	p.mu.Lock()
	p.free = append(p.free, m)
	p.mu.Unlock()
}

package fl

import (
	"fmt"
	"math/rand/v2"
	"sync"

	"gonum.org/v1/gonum/blas"

	"github.com/pacpfl/pacpfl/conv"
	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/internal/workq"
	"github.com/pacpfl/pacpfl/linalg"
	"github.com/pacpfl/pacpfl/lml"
)

// BNNModel plugs the BNN client model of package lml (docs/math.md §5) into the
// federated loop: a client update is the gradient of the LML estimate (38)
// for each of the k prior particles on a mini-batch, with β = m_i.
type BNNModel struct {
	Model   lml.BNN
	Samples int // L weight samples of (38) in training (0: lml.DefaultBNNSamples)
	// Threads is the number of cores one client update or one client's
	// posterior inference uses (0 or 1: one, with single-threaded BLASes —
	// the federated loop already runs one client per core, and the results
	// then do not depend on GOMAXPROCS). More threads split the batch of each
	// layer over workers: for a lone update (pacpfl bench bnn).
	Threads   int
	Posterior lml.BNNPosteriorOptions

	mu   sync.Mutex
	free []*lml.BNNEstimator // estimators not in use, shared by the clients
}

// NewBNNModel returns the model with the default L and posterior inference.
func NewBNNModel(m lml.BNN) *BNNModel {
	return &BNNModel{Model: m.WithDefaults(), Posterior: lml.DefaultBNNPosteriorOptions()}
}

// Validate reports a network that cannot be built (lml.BNN.Validate) or
// posterior inference options that cannot run
// (lml.BNNPosteriorOptions.Validate).
func (b *BNNModel) Validate() error {
	if err := b.Model.Validate(); err != nil {
		return err
	}
	return b.Posterior.Validate()
}

// Dim is dφ = 2|θ|.
func (b *BNNModel) Dim() int { return b.Model.NumParams() }

func (b *BNNModel) samples() int {
	if b.Samples > 0 {
		return b.Samples
	}
	return lml.DefaultBNNSamples
}

// convOptions are the network options of one client's work.
func (b *BNNModel) convOptions() conv.Options {
	if b.Threads > 1 {
		return conv.Options{Workers: b.Threads}
	}
	one := func() blas.Float64 { return linalg.NewNative(1) }
	return conv.Options{BLAS: one(), WorkerBLAS: one, Workers: 1}
}

// estimator takes an estimator from the shared free list (or makes one):
// clients hold their data only, so memory grows with the number of
// concurrent updates, not with the number of clients.
func (b *BNNModel) estimator() (*lml.BNNEstimator, error) {
	b.mu.Lock()
	if n := len(b.free); n > 0 {
		e := b.free[n-1]
		b.free = b.free[:n-1]
		b.mu.Unlock()
		return e, nil
	}
	b.mu.Unlock()
	return lml.NewBNNEstimator(b.Model, b.samples(), b.convOptions())
}

func (b *BNNModel) release(e *lml.BNNEstimator) {
	b.mu.Lock()
	b.free = append(b.free, e)
	b.mu.Unlock()
}

// bnnClient is one existing client's Client_Update (Algorithm 2) with the
// BNN model: S_i only, never S̃_i.
type bnnClient struct {
	model *BNNModel
	x, y  []float64
	rows  data.RowSampler
	lmls  []float64
}

// NewClient returns the training client for S_i (never S̃_i).
func (b *BNNModel) NewClient(c *data.ClientData) (Client, error) {
	if err := b.Model.CheckData(c.X, c.Y); err != nil {
		return nil, err
	}
	return &bnnClient{model: b, x: c.X, y: c.Y}, nil
}

func (c *bnnClient) Update(particles []float64, k, dphi, batch int, rng *rand.Rand, grad []float64) (float64, error) {
	if dphi != c.model.Dim() {
		return 0, fmt.Errorf("bnn client: particles of dimension %d, model has dφ = %d", dphi, c.model.Dim())
	}
	if len(particles) != k*dphi || len(grad) != k*dphi {
		return 0, fmt.Errorf("bnn client: %d particle and %d gradient values for k×dφ = %d×%d", len(particles),
			len(grad), k, dphi)
	}
	e, err := c.model.estimator()
	if err != nil {
		return 0, err
	}
	defer c.model.release(e)
	m := len(c.y)
	bx, by := c.x, c.y
	if batch > 0 && batch < m {
		if bx, by, err = c.rows.Sample(c.x, c.y, c.model.Model.D(), batch, rng); err != nil {
			return 0, err
		}
	}
	scale := float64(m) / float64(len(by)) // β = m_i on the batch
	sum := 0.0
	for r := 0; r < k; r++ {
		v, err := e.LML(particles[r*dphi:(r+1)*dphi], bx, by, scale, rng, grad[r*dphi:(r+1)*dphi])
		if err != nil {
			return 0, fmt.Errorf("particle %d: %w", r, err)
		}
		sum += v
	}
	return sum / float64(k), nil
}

// Random-stream tag of the BNN posterior inference ("bnnpost").
const tagBNNPosterior = 0x626e6e706f7374

// PredictGroup personalises the k particles (k×dφ) on each client's data
// and returns its class probabilities on its test set (docs/math.md §5.3): existing
// clients condition on S_i ∪ S̃_i, new clients on their own data. Client i's
// inference draws from the stream (seed, "bnnpost", group, i), and clients
// are spread over the cores with one single-threaded predictor per worker,
// so the result depends on neither the number of workers nor GOMAXPROCS.
func (b *BNNModel) PredictGroup(particles []float64, clients []data.ClientData, seed uint64,
	group uint64) ([]ClassPrediction, error) {
	return b.predictGroup(particles, clients, seed, group, personalisationData, nil)
}

// personalisationData conditions a client on S_i ∪ S̃_i.
func personalisationData(c *data.ClientData) (x, y []float64) { return c.PersonalisationData() }

// predictGroup with the conditioning data chosen by condition(c); done, if
// set, is called after each client (from the workers, concurrently).
func (b *BNNModel) predictGroup(particles []float64, clients []data.ClientData, seed, group uint64,
	condition func(c *data.ClientData) (x, y []float64), done func()) ([]ClassPrediction, error) {
	preds := make([]ClassPrediction, len(clients))
	workers := 0 // GOMAXPROCS
	if b.Threads > 1 {
		workers = 1
	}
	errs := workq.Run(len(clients), workers, func() (*lml.BNNPredictor, error) {
		return lml.NewBNNPredictor(b.Model, b.Posterior, b.convOptions())
	}, func(p *lml.BNNPredictor, i int) error {
		c := &clients[i]
		x, y := condition(c)
		rng := rand.New(rand.NewPCG(seed, data.StreamID(tagBNNPosterior, group, uint64(i))))
		if err := p.Fit(particles, x, y, rng); err != nil {
			return err
		}
		probs := make([]float64, len(c.YTest)*b.Model.Classes)
		preds[i] = ClassPrediction{Probs: probs}
		if err := p.Predict(c.XTest, probs); err != nil {
			return err
		}
		if done != nil {
			done()
		}
		return nil
	})
	if i, err := workq.First(errs); err != nil {
		return nil, fmt.Errorf("predict client %d: %w", i, err)
	}
	return preds, nil
}

// TrainingBytes is a lower bound on the memory, in bytes, of a PAC-PFL
// run with this model: images input images held as float64, and the k
// prior particles of the server with its optimiser's state and of each of
// clientsPerRound concurrent client updates (at least one), each update
// running a network of the L weight samples (Samples).
func (b *BNNModel) TrainingBytes(images, k, clientsPerRound int) float64 {
	nw := float64(b.Model.NumWeights())
	return 8 * (float64(images)*float64(b.Model.D()) + float64(k)*2*nw*(3+float64(max(clientsPerRound, 1))) +
		2*float64(b.samples())*nw)
}

package fl

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/lml"
	"github.com/pacpfl/pacpfl/option"
)

// GP inference modes (GPInference.Mode).
const (
	InferenceExact  = "exact"
	InferenceSparse = "sparse"
	InferenceAuto   = "auto"
)

// DefaultInducing is the number of inducing inputs M of a sparse client
// when GPInference.Inducing is 0.
const DefaultInducing = 512

// AutoExactMaxRows is the largest client, in rows, that the auto mode
// evaluates with the exact GP. The exact GP costs about m³ flop and 3·m²
// doubles per particle and evaluation: at 4,096 rows about a second on two
// cores and 400 MB; the sparse bound costs about 4·m·M² flop and O(M²)
// memory besides the data, 16 times less at that size with M = 512, and is
// a lower bound, not the exact ln Z^C. Below the threshold the exact value
// is cheap enough to keep.
const AutoExactMaxRows = 4096

// GPInference says how a GP client evaluates ln Z^C and predicts: the
// exact GP (a dense Cholesky of the m×m kernel matrix), or the collapsed
// sparse bound of Titsias (2009) with M inducing inputs chosen from the
// client's own inputs (lml.SparseWorkspace; docs/math.md, "Sparse GP").
// The zero value is the auto mode with DefaultInducing.
type GPInference struct {
	// Mode is InferenceExact, InferenceSparse or InferenceAuto ("": auto:
	// exact up to AutoExactMaxRows rows, sparse above).
	Mode string
	// Inducing is M (0: DefaultInducing, lowered to m for a client with
	// fewer rows). An M above a sparse client's rows is an error.
	Inducing int
	// Seed, with a hash of a client's inputs, seeds the choice of its
	// inducing inputs (lml.SelectInducing): the same data and seed give
	// the same Z in every process.
	Seed uint64
}

// Validate reports an unusable mode or M.
func (gi GPInference) Validate() error {
	switch gi.Mode {
	case "", InferenceExact, InferenceSparse, InferenceAuto:
	default:
		return fmt.Errorf("GP inference %q: want exact, sparse or auto", gi.Mode)
	}
	if gi.Inducing < 0 {
		return fmt.Errorf("GP inference: %d inducing inputs; want at least 1 (0: the default %d)", gi.Inducing,
			DefaultInducing)
	}
	return nil
}

// String is the mode and M, as recorded in reports and model files.
func (gi GPInference) String() string {
	switch gi.mode() {
	case InferenceExact:
		return InferenceExact
	case InferenceSparse:
		return fmt.Sprintf("sparse, M = %d", gi.inducing())
	}
	return fmt.Sprintf("auto (exact up to %d rows, sparse with M = %d above)", AutoExactMaxRows, gi.inducing())
}

func (gi GPInference) mode() string {
	if gi.Mode == "" {
		return InferenceAuto
	}
	return gi.Mode
}

func (gi GPInference) inducing() int {
	if gi.Inducing == 0 {
		return DefaultInducing
	}
	return gi.Inducing
}

// ErrTooManyInducing is wrapped by the error of a sparse client asked for
// more inducing inputs than it has rows: a setting the caller chose, not a
// failure of the computation.
var ErrTooManyInducing = errors.New("more inducing inputs than rows")

type tooManyInducing struct{ M, rows int }

func (e tooManyInducing) Error() string { return e.field().Error() }

// Unwrap is the error as an *option.FieldError naming GPInference's
// Inducing.
func (e tooManyInducing) Unwrap() error { return e.field() }

func (e tooManyInducing) field() *option.FieldError {
	return option.Format("", []string{"Inducing"}, "%[2]d inducing inputs but the client has only %[3]d rows "+
		"(lower %[1]s)", e.M, e.rows)
}

func (e tooManyInducing) Is(target error) bool { return target == ErrTooManyInducing }

// Plan returns whether a client with m rows is evaluated with the sparse
// bound and with how many inducing inputs (0 for the exact GP).
func (gi GPInference) Plan(m int) (sparse bool, M int, err error) {
	if err := gi.Validate(); err != nil {
		return false, 0, err
	}
	switch gi.mode() {
	case InferenceExact:
		return false, 0, nil
	case InferenceAuto:
		if m <= AutoExactMaxRows {
			return false, 0, nil
		}
	}
	if gi.Inducing == 0 {
		return true, min(DefaultInducing, m), nil
	}
	if gi.Inducing > m {
		return false, 0, tooManyInducing{gi.Inducing, m}
	}
	return true, gi.Inducing, nil
}

// inducingFor chooses the M inducing inputs of a client with inputs X
// (m×d): k-means++ seeding in input space, seeded with gi.Seed and a hash
// of X, so that it depends on the client's own data alone.
func (gi GPInference) inducingFor(X []float64, d, M int) ([]float64, error) {
	h := fnv.New64a()
	var b [8]byte
	for _, v := range X {
		u := math.Float64bits(v)
		for i := range b {
			b[i] = byte(u >> (8 * i))
		}
		h.Write(b[:])
	}
	return lml.SelectInducing(X, d, M, gi.Seed^h.Sum64())
}

// sparsePool lends SparseWorkspaces to concurrent client updates: a
// workspace holds O(M²) buffers per row block, so clients share as many as
// run at once instead of holding one each. Which workspace an update gets
// does not change its result.
type sparsePool struct {
	model lml.Model
	mu    sync.Mutex
	free  []*lml.SparseWorkspace
}

func (p *sparsePool) get() (*lml.SparseWorkspace, error) {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		ws := p.free[n-1]
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return ws, nil
	}
	p.mu.Unlock()
	// One thread: the server already runs one client per core.
	return lml.NewSparseWorkspace(p.model, lml.SparseOptions{Threads: 1})
}

func (p *sparsePool) put(ws *lml.SparseWorkspace) {
	p.mu.Lock()
	p.free = append(p.free, ws)
	p.mu.Unlock()
}

// sparseClient is Client_Update (Algorithm 2) with the sparse bound in
// place of ln Z^C: the same tempering and mini-batches, the inducing inputs
// Z fixed for the whole run.
type sparseClient struct {
	model   *GPModel
	pool    *sparsePool
	x, y, z []float64
	d       int
	bounds  []float64
	batches data.RowSampler
}

// poolMu guards the lazy creation of GPModel's workspace pool.
var poolMu sync.Mutex

func (g *GPModel) pool() *sparsePool {
	poolMu.Lock()
	defer poolMu.Unlock()
	if g.sparse == nil || g.sparse.model.NumParams() != g.Model.NumParams() {
		g.sparse = &sparsePool{model: g.Model}
	}
	return g.sparse
}

func (g *GPModel) newSparseClient(c *data.ClientData, M int) (Client, error) {
	z, err := g.Inference.inducingFor(c.X, g.Model.D, M)
	if err != nil {
		return nil, err
	}
	return &sparseClient{model: g, pool: g.pool(), x: c.X, y: c.Y, z: z, d: g.Model.D}, nil
}

func (c *sparseClient) Update(particles []float64, k, dphi, batch int, rng *rand.Rand,
	grad []float64) (float64, error) {
	if dphi != c.model.Dim() {
		return 0, fmt.Errorf("gp client: particles of dimension %d, model has dφ = %d", dphi, c.model.Dim())
	}
	if len(particles) != k*dphi || len(grad) != k*dphi {
		return 0, fmt.Errorf("gp client: %d particle values and %d gradient values for k×dφ = %d×%d", len(particles),
			len(grad), k, dphi)
	}
	if cap(c.bounds) < k {
		c.bounds = make([]float64, k)
	}
	bounds := c.bounds[:k]
	m := len(c.y)
	beta := c.model.Beta.For(m)
	x, y, scale := c.x, c.y, beta/float64(m)
	if batch > 0 && batch < m {
		var err error
		if x, y, err = c.batches.Sample(c.x, c.y, c.d, batch, rng); err != nil {
			return 0, err
		}
		scale = beta / float64(batch)
		if c.model.LiteralBatch {
			scale = 1
		}
	}
	ws, err := c.pool.get()
	if err != nil {
		return 0, err
	}
	defer c.pool.put(ws)
	for r := 0; r < k; r++ {
		phi, g := particles[r*dphi:(r+1)*dphi], grad[r*dphi:(r+1)*dphi]
		if scale == 1 {
			bounds[r], err = ws.Bound(phi, x, y, c.z, g)
		} else {
			bounds[r], err = ws.TemperedBound(phi, x, y, c.z, scale, g)
		}
		if err != nil {
			return 0, fmt.Errorf("particle %d: %w", r, err)
		}
	}
	if c.model.FreezeMean {
		nm := c.model.meanParams()
		for r := 0; r < k; r++ {
			clear(grad[r*dphi : r*dphi+nm])
		}
	}
	return Mean(bounds), nil
}

// sparsePredictOne personalises the particles on (x, y) through inducing
// inputs chosen from x and fills pr with the mixture's predictions at
// xTest.
func (g *GPModel) sparsePredictOne(sp *lml.SparsePredictor, mix *lml.Mixture, particles, x, y, xTest, yTest []float64,
	scale float64, M int) (Prediction, error) {
	z, err := g.Inference.inducingFor(x, g.Model.D, M)
	if err != nil {
		return Prediction{}, err
	}
	if err := sp.FitTempered(particles, x, y, z, scale); err != nil {
		return Prediction{}, err
	}
	if err := sp.Predict(xTest, mix); err != nil {
		return Prediction{}, err
	}
	return mixturePrediction(mix, sp.Weights(), yTest), nil
}

// anySparse reports the first existing client evaluated with the sparse
// bound ("" if none is).
func (g *GPModel) anySparse(clients []data.ClientData) string {
	for i := range clients {
		if sparse, M, err := g.Inference.Plan(clients[i].M()); err == nil && sparse {
			return fmt.Sprintf("client %d: %d rows, sparse bound with M = %d", i, clients[i].M(), M)
		}
	}
	return ""
}

// MinGaussianNLL is the smallest value the Gaussian NLL of one target can
// take with the GP's noise floor: ½ ln(2π σ_min²), σ_min = lml.MinNoiseStd.
// A loss range [a, b] with a ≤ MinGaussianNLL clips the NLL from above
// only.
var MinGaussianNLL = 0.5 * math.Log(2*math.Pi*lml.MinNoiseStd*lml.MinNoiseStd)

// sparseBoundsWhy says why the bound at 𝒬* cannot be computed for sparse
// clients with the loss range [a, b] ("" if it can), and why the bound for
// the trained hyper-posterior never can (docs/math.md, "What the bounds
// certify with sparse clients").
func sparseBoundsWhy(client string, a float64) (qstar, trained string) {
	trained = client + ": the bound for the trained hyper-posterior averages each draw's −F/β, which is not confined " +
		"to [a, b] (its KL part is unbounded), so Hoeffding's inequality does not apply"
	if a > MinGaussianNLL {
		qstar = fmt.Sprintf("%s: with sparse clients the bounds certify the clipped NLL of the sparse posterior "+
			"through the Titsias bound F, which bounds the loss only if clipping never raises it: the loss range "+
			"must start at or below the smallest Gaussian NLL, ½ ln(2π·%g²) = %.4f (e.g. --loss-range=-6,2); it "+
			"starts at %g", client, lml.MinNoiseStd, MinGaussianNLL, a)
	}
	return qstar, trained
}

// DropUnavailableBounds turns off in o the bounds that cannot be computed
// because some of clients are evaluated with the sparse bound, and returns
// why: qstar for the bounds at 𝒬* (when the loss range starts above
// MinGaussianNLL), learned for the bound of the trained hyper-posterior
// (always, with a sparse client). Both are "" when every client is exact or
// the bound was not asked for.
func (g *GPModel) DropUnavailableBounds(clients []data.ClientData, o *BoundOptions) (qstar, learned string) {
	client := g.anySparse(clients)
	if client == "" {
		return "", ""
	}
	q, t := sparseBoundsWhy(client, o.A)
	if q != "" && o.PriorSamples > 0 {
		qstar, o.PriorSamples = q, 0
	}
	if o.Learned != nil {
		learned, o.Learned = t, nil
	}
	return qstar, learned
}

// BoundLogZ returns the LogZCFunc of the bounds for the existing clients:
// for a client evaluated exactly, ln Z^C_β of the NLL clipped to [a, b] by
// Monte Carlo (ClippedLogZ); for a sparse client, the tempered Titsias
// bound F_β(P_φ, S_i) = −[β L̂(q) + KL(q‖P_φ)] of its sparse variational
// posterior q, which is at most ln Z^C_β of the clipped loss when a ≤
// MinGaussianNLL (the caller checks).
func (g *GPModel) BoundLogZ(clients []data.ClientData, beta, a, b float64, nSamples int) (LogZCFunc, error) {
	exact := g.ClippedLogZ(clients, beta, a, b, nSamples)
	zs := make([][]float64, len(clients))
	for i := range clients {
		sparse, M, err := g.Inference.Plan(clients[i].M())
		if err != nil {
			return nil, fmt.Errorf("client %d: %w", i, err)
		}
		if sparse {
			if zs[i], err = g.Inference.inducingFor(clients[i].X, g.Model.D, M); err != nil {
				return nil, fmt.Errorf("client %d: %w", i, err)
			}
		}
	}
	pool := g.pool()
	return func(phi []float64, i int, rng *rand.Rand) (float64, error) {
		if zs[i] == nil {
			return exact(phi, i, rng)
		}
		c := &clients[i]
		ws, err := pool.get()
		if err != nil {
			return 0, err
		}
		defer pool.put(ws)
		return ws.TemperedBound(phi, c.X, c.Y, zs[i], beta/float64(c.M()), nil)
	}, nil
}

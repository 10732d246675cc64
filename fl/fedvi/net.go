package fedvi

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"

	"github.com/pacpfl/pacpfl/conv"
	"github.com/pacpfl/pacpfl/linalg"
)

// Model is one worker's copy of the network: the embedding E, the
// posterior constructor P and the global classifier G, whose weights are
// the global parameters θ = θ' ∪ θ” ∪ θ”' (flattened by Get and Set in
// a fixed order), plus the buffers of one client update. A Model is not
// safe for concurrent use; every layer is single-threaded, so results do
// not depend on how many run at once.
type Model struct {
	A Arch
	embedding
	// P and G
	p1, p2, p3 *conv.Dense
	prelu1     *conv.ReLU
	prelu2     *conv.ReLU
	g          *conv.Dense
	params     []conv.Param
	n          int // len(θ)
	priorVar   float64
	pooled, qg conv.Tensor // P's input (1×d_g) and G's (n_q×d_g)
	dR         conv.Tensor // gradient with respect to E's output
	dOut       conv.Tensor // gradient with respect to P's output
	dLogits    conv.Tensor
	post       posterior
	logits, ql []float64 // n_q×C logits, n_q×d_l local features
	img        conv.Tensor
	labels     []int
	order      []int
}

// embedding is E_θ' and its input buffer.
type embedding struct {
	conv1, conv2        *conv.Conv2D
	pool                *conv.MaxPool2D
	relu1, relu2, relu3 *conv.ReLU
	drop1, drop2        *conv.Dropout
	flat                *conv.Flatten
	dense               *conv.Dense
	emb                 []conv.Layer
}

// newEmbedding builds E for a (defaults filled).
func newEmbedding(a Arch, o conv.Options) (embedding, error) {
	var e embedding
	h1, w1, _, _, hp, wp := a.sizes()
	var err error
	if e.conv1, err = conv.NewConv2D(
		conv.Conv2DConfig{Name: "E.conv1", InChannels: a.InChannels, InH: a.InH, InW: a.InW,
			OutChannels: a.Conv1, KernelH: a.Kernel, KernelW: a.Kernel, SkipInputGrad: true, Options: o}); err != nil {
		return e, err
	}
	if e.conv2, err = conv.NewConv2D(conv.Conv2DConfig{Name: "E.conv2", InChannels: a.Conv1, InH: h1, InW: w1,
		OutChannels: a.Conv2, KernelH: a.Kernel, KernelW: a.Kernel, Options: o}); err != nil {
		return e, err
	}
	if e.pool, err = conv.NewMaxPool2D("E.pool", 2, 2, 2, o); err != nil {
		return e, err
	}
	// Every stream is replaced by the client's before use.
	rng := rand.New(rand.NewPCG(0, 0))
	if e.drop1, err = conv.NewDropout("E.drop1", a.Drop1, rng); err != nil {
		return e, err
	}
	if e.drop2, err = conv.NewDropout("E.drop2", a.Drop2, rng); err != nil {
		return e, err
	}
	if e.dense, err = conv.NewDense(
		conv.DenseConfig{Name: "E.dense", In: a.Conv2 * hp * wp, Out: a.Embed, Options: o}); err != nil {
		return e, err
	}
	e.relu1, e.relu2, e.relu3 = conv.NewReLU("E.relu1"), conv.NewReLU("E.relu2"), conv.NewReLU("E.relu3")
	e.flat = conv.NewFlatten("E.flatten")
	// ReLU is monotone, so pooling before it computes conv → ReLU → pool
	// on a quarter of the elements (as conv.NewBCNN does).
	e.emb = []conv.Layer{e.conv1, e.relu1, e.conv2, e.pool, e.relu2, e.drop1, e.flat, e.dense}
	if a.EmbedReLU {
		e.emb = append(e.emb, e.relu3)
	}
	e.emb = append(e.emb, e.drop2)
	return e, nil
}

// glorot fills w with Glorot-uniform values U(±√(6/(fan_in + fan_out))).
func glorot(w []float64, fanIn, fanOut int, rng *rand.Rand) {
	lim := math.Sqrt(6 / float64(fanIn+fanOut))
	for i := range w {
		w[i] = lim * (2*rng.Float64() - 1)
	}
}

// init draws E's weights (Glorot uniform) and zeroes its biases.
func (e *embedding) init(a Arch, rng *rand.Rand) {
	k := a.Kernel * a.Kernel
	glorot(e.conv1.Weight, a.InChannels*k, a.Conv1*k, rng)
	glorot(e.conv2.Weight, a.Conv1*k, a.Conv2*k, rng)
	glorot(e.dense.Weight, e.dense.In, e.dense.Out, rng)
	clear(e.conv1.Bias)
	clear(e.conv2.Bias)
	clear(e.dense.Bias)
}

// setTrain switches dropout on (training) or off (evaluation) and gives
// the dropout layers the stream of the current client update.
func (e *embedding) setTrain(train bool, rng *rand.Rand) {
	for _, d := range []*conv.Dropout{e.drop1, e.drop2} {
		d.Train = train
		if rng != nil {
			d.SetRand(rng)
		}
	}
}

// embedChunks runs E over the images of x (rows of a.InChannels·a.InH·a.InW
// pixels) evalChunk at a time through buf, so that only one chunk's
// activations are held, and hands visit each chunk's first image lo, its
// size b and its features R (b×d, owned by E's last layer until the next
// chunk).
func (e *embedding) embedChunks(a Arch, buf *conv.Tensor, x []float64,
	visit func(lo, b int, R *conv.Tensor) error) error {
	D := a.InChannels * a.InH * a.InW
	n := len(x) / D
	for lo := 0; lo < n; lo += evalChunk {
		b := min(evalChunk, n-lo)
		shape(buf, b, a.InChannels, a.InH, a.InW)
		copy(buf.Data, x[lo*D:(lo+b)*D])
		R, err := e.embed(buf)
		if err != nil {
			return err
		}
		if err := visit(lo, b, R); err != nil {
			return err
		}
	}
	return nil
}

// embed runs E on x; the result (N×d) is owned by the last layer.
func (e *embedding) embed(x *conv.Tensor) (*conv.Tensor, error) {
	for _, l := range e.emb {
		var err error
		if x, err = l.Forward(x); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// backward takes the gradient with respect to E's last output and sets
// E's parameter gradients.
func (e *embedding) backward(dR *conv.Tensor) error {
	t := dR
	var err error
	for i := len(e.emb) - 1; i >= 0 && t != nil; i-- {
		if t, err = e.emb[i].Backward(t); err != nil {
			return err
		}
	}
	return nil
}

// posterior is q(β_k | θ, D_k,s) = N(μ, diag σ²) over the d_l×C local
// weights (row c holds class c's weights) and the deterministic bias b.
type posterior struct {
	mu, rho, sigma, bias []float64
	eps, beta            []float64
}

// singleThreaded is every layer's BLAS: clients (not layers) run in
// parallel, and a layer's sums then never depend on GOMAXPROCS.
func singleThreaded() conv.Options {
	return conv.Options{BLAS: linalg.NewNative(1), WorkerBLAS: func() blas.Float64 { return linalg.NewNative(1) },
		Workers: 1}
}

// NewModel builds the network of a (defaults filled) with zero weights;
// opt sets the layers' BLAS (the zero value: single-threaded native).
func NewModel(a Arch, opt *conv.Options) (*Model, error) {
	a = a.withDefaults()
	if err := a.Validate(); err != nil {
		return nil, err
	}
	o := singleThreaded()
	if opt != nil {
		o = *opt
	}
	m := &Model{A: a}
	var err error
	if m.embedding, err = newEmbedding(a, o); err != nil {
		return nil, err
	}
	dl, C := a.Local(), a.Classes
	if m.p1, err = conv.NewDense(
		conv.DenseConfig{Name: "P.dense1", In: a.Global, Out: a.PHidden, Options: o}); err != nil {
		return nil, err
	}
	if m.p2, err = conv.NewDense(
		conv.DenseConfig{Name: "P.dense2", In: a.PHidden, Out: a.PHidden, Options: o}); err != nil {
		return nil, err
	}
	if m.p3, err = conv.NewDense(
		conv.DenseConfig{Name: "P.dense3", In: a.PHidden, Out: (2*dl + 1) * C, Options: o}); err != nil {
		return nil, err
	}
	m.prelu1, m.prelu2 = conv.NewReLU("P.relu1"), conv.NewReLU("P.relu2")
	if m.g, err = conv.NewDense(conv.DenseConfig{Name: "G.dense", In: a.Global, Out: C, Options: o}); err != nil {
		return nil, err
	}
	for _, l := range m.emb {
		m.params = append(m.params, l.Params()...)
	}
	for _, l := range []conv.Layer{m.p1, m.p2, m.p3, m.g} {
		m.params = append(m.params, l.Params()...)
	}
	for _, p := range m.params {
		m.n += len(p.Value)
	}
	// r = N(0, σ_r²) with the variance of the Glorot initialisation of a
	// dense d_l → |Y| layer (docs/math.md §9: the init scheme's variance).
	m.priorVar = 2 / float64(dl+C)
	k := dl * C
	m.post = posterior{mu: make([]float64, k), rho: make([]float64, k), sigma: make([]float64, k),
		bias: make([]float64, C),
		eps:  make([]float64, k), beta: make([]float64, k)}
	return m, nil
}

// NumParams is len(θ).
func (m *Model) NumParams() int { return m.n }

// PriorStd is σ_r, the standard deviation of the prior r over β.
func (m *Model) PriorStd() float64 { return math.Sqrt(m.priorVar) }

// Get copies θ into dst (len NumParams).
func (m *Model) Get(dst []float64) {
	off := 0
	for _, p := range m.params {
		off += copy(dst[off:], p.Value)
	}
}

// Set loads θ from src (len NumParams).
func (m *Model) Set(src []float64) error {
	if len(src) != m.n {
		return fmt.Errorf("fedvi: %d parameters for a network of %d", len(src), m.n)
	}
	off := 0
	for _, p := range m.params {
		off += copy(p.Value, src[off:])
	}
	return nil
}

// Grad copies the gradient of the last LossGrad into dst (len NumParams).
func (m *Model) Grad(dst []float64) {
	off := 0
	for _, p := range m.params {
		off += copy(dst[off:], p.Grad)
	}
}

// Init writes θ⁽⁰⁾ into theta: Glorot-uniform weights (Keras's default,
// the paper's TensorFlow code), zero biases, except that the bias of P's
// scale outputs is Rho0, so that the local posterior starts narrow,
// σ = softplus(−5) ≈ 0.0067, rather than at the prior's scale σ_r (our choice): with
// σ = σ_r the draws of β are noise on the local features' logits, and
// training switches the local features off (docs/math.md).
func (m *Model) Init(theta []float64, rng *rand.Rand) error {
	if len(theta) != m.n {
		return fmt.Errorf("fedvi: %d parameters for a network of %d", len(theta), m.n)
	}
	m.embedding.init(m.A, rng)
	for _, d := range []*conv.Dense{m.p1, m.p2, m.p3, m.g} {
		glorot(d.Weight, d.In, d.Out, rng)
		clear(d.Bias)
	}
	k2 := m.A.Local() * m.A.Classes
	rho0 := Rho0
	for i := k2; i < 2*k2; i++ {
		m.p3.Bias[i] = rho0
	}
	m.Get(theta)
	return nil
}

// Rho0 is the initial bias of P's scale outputs ρ (σ = softplus(ρ)).
const Rho0 = -5.0

// softplus is ln(1 + eˣ) without overflow.
func softplus(x float64) float64 {
	if x > 30 {
		return x + math.Exp(-x)
	}
	return math.Log1p(math.Exp(x))
}

// logSoftplus is ln softplus(x), accurate where softplus underflows.
func logSoftplus(x float64) float64 {
	if x < -30 {
		return x // softplus(x) = eˣ(1 − eˣ/2 + …)
	}
	return math.Log(softplus(x))
}

// sigmoid is softplus'.
func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// invSoftplus is softplus⁻¹(y) = ln(eʸ − 1) for y > 0.
func invSoftplus(y float64) float64 {
	if y > 30 {
		return y
	}
	return math.Log(math.Expm1(y))
}

package fedvi

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/pacpfl/pacpfl/conv"
	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/internal/fedrun"
)

// The comparison rows of FedVI's Table 1 on the same network: FedAvg
// trains E followed by one dense layer on all d features (E + G without
// the split, P and β — the CNN of Reddi et al. that FedVI's E is cut
// from); FedAvg+FT then fine-tunes the global model on each client's
// training data before testing it.
const (
	MethodFedAvgCNN   = "fedavg-cnn"
	MethodFedAvgCNNFT = "fedavg-cnn-ft"
)

// Plain is one worker's copy of the FedAvg network E → dense |Y|.
type Plain struct {
	A Arch
	embedding
	head   *conv.Dense
	ce     *conv.SoftmaxCrossEntropy
	params []conv.Param
	n      int
	img    conv.Tensor
	labels []int
	order  []int
}

// NewPlain builds the FedAvg network of a with zero weights (E → dense
// |Y|; the CLI's fedvi-fedavg sets a.EmbedReLU: Reddi et al.'s CNN).
func NewPlain(a Arch) (*Plain, error) {
	a = a.withDefaults()
	if err := a.Validate(); err != nil {
		return nil, err
	}
	o := singleThreaded()
	p := &Plain{A: a}
	var err error
	if p.embedding, err = newEmbedding(a, o); err != nil {
		return nil, err
	}
	if p.head, err = conv.NewDense(conv.DenseConfig{Name: "head", In: a.Embed, Out: a.Classes, Options: o}); err != nil {
		return nil, err
	}
	if p.ce, err = conv.NewSoftmaxCrossEntropy("ce", a.Classes, 1); err != nil {
		return nil, err
	}
	for _, l := range append(append([]conv.Layer(nil), p.emb...), p.head) {
		p.params = append(p.params, l.Params()...)
	}
	for _, q := range p.params {
		p.n += len(q.Value)
	}
	return p, nil
}

// NumParams is the length of the weight vector.
func (p *Plain) NumParams() int { return p.n }

// Get copies the weights into dst.
func (p *Plain) Get(dst []float64) {
	off := 0
	for _, q := range p.params {
		off += copy(dst[off:], q.Value)
	}
}

// Set loads the weights from src.
func (p *Plain) Set(src []float64) error {
	if len(src) != p.n {
		return fmt.Errorf("fedvi: %d parameters for a network of %d", len(src), p.n)
	}
	off := 0
	for _, q := range p.params {
		off += copy(q.Value, src[off:])
	}
	return nil
}

// Init writes Glorot-uniform weights and zero biases into w.
func (p *Plain) Init(w []float64, rng *rand.Rand) {
	p.embedding.init(p.A, rng)
	glorot(p.head.Weight, p.head.In, p.head.Out, rng)
	clear(p.head.Bias)
	p.Get(w)
}

// Update runs epochs passes of mini-batch SGD (step lr, batches of b in a
// random order from rng, dropout on) on the mean cross-entropy of (x, y)
// from w, and writes the result into out.
func (p *Plain) Update(w, out, x, y []float64, epochs, b int, lr float64, rng *rand.Rand) error {
	a := p.A
	D := a.InChannels * a.InH * a.InW
	n := len(y)
	if n < 1 || len(x) != n*D {
		return fmt.Errorf("fedvi: %d inputs are not %d images of %d pixels (at least one)", len(x), n, D)
	}
	if err := p.Set(w); err != nil {
		return err
	}
	p.setTrain(true, rng)
	if cap(p.order) < n {
		p.order = make([]int, n)
	}
	p.order = p.order[:n]
	for e := 0; e < epochs; e++ {
		for i := range p.order {
			p.order[i] = i
		}
		rng.Shuffle(n, func(i, j int) { p.order[i], p.order[j] = p.order[j], p.order[i] })
		for lo := 0; lo < n; lo += b {
			idx := p.order[lo:min(lo+b, n)]
			shape(&p.img, len(idx), a.InChannels, a.InH, a.InW)
			if cap(p.labels) < len(idx) {
				p.labels = make([]int, len(idx))
			}
			p.labels = p.labels[:len(idx)]
			for r, i := range idx {
				copy(p.img.Data[r*D:(r+1)*D], x[i*D:(i+1)*D])
				p.labels[r] = int(y[i])
			}
			R, err := p.embed(&p.img)
			if err != nil {
				return err
			}
			z, err := p.head.Forward(R)
			if err != nil {
				return err
			}
			loss, err := p.ce.Forward(z, p.labels)
			if err != nil {
				return fmt.Errorf("%w (learning rate %g)", err, lr)
			}
			if math.IsNaN(loss) || math.IsInf(loss, 0) {
				return fmt.Errorf("fedvi: FedAvg's loss is %v: the weights diverged (learning rate %g)", loss, lr)
			}
			g, _ := p.ce.Backward()
			if g, err = p.head.Backward(g); err != nil {
				return err
			}
			if err := p.backward(g); err != nil {
				return err
			}
			for _, q := range p.params {
				for j, v := range q.Grad {
					q.Value[j] -= lr * v
				}
			}
		}
	}
	p.Get(out)
	return nil
}

// Predict returns softmax(head(E(x))) with dropout off, rows of |Y|.
func (p *Plain) Predict(w, x []float64) ([]float64, error) {
	a := p.A
	D := a.InChannels * a.InH * a.InW
	n := len(x) / D
	if len(x) != n*D {
		return nil, fmt.Errorf("fedvi: %d inputs are not images of %d pixels", len(x), D)
	}
	if err := p.Set(w); err != nil {
		return nil, err
	}
	p.setTrain(false, nil)
	C := a.Classes
	probs := make([]float64, n*C)
	err := p.embedChunks(a, &p.img, x, func(lo, b int, R *conv.Tensor) error {
		z, err := p.head.Forward(R)
		if err != nil {
			return err
		}
		for i := 0; i < b; i++ {
			row := z.Data[i*C : (i+1)*C]
			mx := row[0]
			for _, v := range row[1:] {
				mx = math.Max(mx, v)
			}
			if math.IsNaN(mx) || math.IsInf(mx, 0) {
				return fmt.Errorf("fedvi: FedAvg's logits of image %d are not finite", lo+i)
			}
			s := 0.0
			dst := probs[(lo+i)*C : (lo+i+1)*C]
			for c, v := range row {
				dst[c] = math.Exp(v - mx)
				s += dst[c]
			}
			for c := range dst {
				dst[c] /= s
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return probs, nil
}

// plainPool hands out Plain networks, one per concurrent worker.
type plainPool struct {
	a    Arch
	free chan *Plain
}

func newPlainPool(a Arch, workers int) *plainPool {
	return &plainPool{a: a, free: make(chan *Plain, workers)}
}

func (pp *plainPool) get() (*Plain, error) {
	select {
	case p := <-pp.free:
		return p, nil
	default:
		return NewPlain(pp.a)
	}
}

func (pp *plainPool) put(p *Plain) {
	select {
	case pp.free <- p:
	default:
	}
}

// evaluatePlain scores the group's test sets under the weights w, each
// client's own weights if ft > 0: w fine-tuned for ft epochs on its
// training data (batches of ftBatch, step lr).
func evaluatePlain(pp *plainPool, w []float64, clients []data.ClientData, classes int, ft, ftBatch int, lr float64, seed, tag uint64) (GroupEval, error) {
	preds := make([]fl.ClassPrediction, len(clients))
	err := fedrun.ForEach(len(clients), func(k int) error {
		p, err := pp.get()
		if err != nil {
			return err
		}
		defer pp.put(p)
		wk := w
		if ft > 0 {
			wk = make([]float64, len(w))
			rng := rand.New(rand.NewPCG(seed, data.StreamID(tag, uint64(k))))
			if err := p.Update(w, wk, clients[k].X, clients[k].Y, ft, ftBatch, lr, rng); err != nil {
				return fmt.Errorf("client %d, fine-tuning: %w", k, err)
			}
		}
		pr, err := p.Predict(wk, clients[k].XTest)
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

// groupEval turns the predictions of a group into its metrics.
func groupEval(preds []fl.ClassPrediction, clients []data.ClientData, classes int) (GroupEval, error) {
	g, err := fl.EvaluateClassification(preds, clients, classes)
	if err != nil {
		return GroupEval{}, err
	}
	w, err := fl.WeightedAccuracy(g, clients)
	if err != nil {
		return GroupEval{}, err
	}
	return GroupEval{ClassGroupMetrics: g, Weighted: w}, nil
}

// FineTune configures FedAvg+FT's local fine-tuning.
type FineTune struct {
	Epochs, Batch int
	LR            float64
}

// DefaultFineTune is 5 epochs of SGD in mini-batches of 32 at FedVI's
// client step 0.02 [O] (the papers leave it open).
func DefaultFineTune() FineTune { return FineTune{Epochs: 5, Batch: 32, LR: 0.02} }

// TrainFedAvg runs FedAvg on ds's participating clients with o's rounds,
// clients per round, mini-batch, local epochs, client step and server
// optimiser (SGD with momentum on the size-weighted mean update, so that
// FedVI and FedAvg differ only in the model; momentum 0 and server step 1
// is McMahan et al.'s FedAvg), evaluating both groups after each of the
// last o.EvalLast rounds. If ft.Epochs > 0 it also returns FedAvg+FT: the
// final global model fine-tuned on every client's training data (both
// groups), evaluated once.
func TrainFedAvg(ds *data.Dataset, o Options, ft FineTune) (plain, tuned *Result, err error) {
	start := time.Now()
	o.Arch = o.Arch.withDefaults()
	if err := o.Validate(); err != nil {
		return nil, nil, err
	}
	if ft.Epochs < 0 || (ft.Epochs > 0 && (ft.Batch < 1 || !(ft.LR > 0) || math.IsInf(ft.LR, 0))) {
		return nil, nil, fmt.Errorf("fedvi: fine-tuning %d epochs, batch %d, step %v: want epochs ≥ 0, batch ≥ 1, a finite step > 0", ft.Epochs, ft.Batch, ft.LR)
	}
	a := o.Arch
	if ds.D != a.InChannels*a.InH*a.InW || ds.Classes != a.Classes {
		return nil, nil, fmt.Errorf("fedvi: data set %s has %d features and %d classes, the network takes %d×%d×%d images and %d classes",
			ds.Name, ds.D, ds.Classes, a.InChannels, a.InH, a.InW, a.Classes)
	}
	n := len(ds.Existing)
	if n < 1 {
		return nil, nil, fmt.Errorf("fedvi: data set %s has no participating clients", ds.Name)
	}
	weights := make([]float64, n)
	for k := range ds.Existing {
		if weights[k] = float64(ds.Existing[k].M()); weights[k] < 1 {
			return nil, nil, fmt.Errorf("fedvi: participating client %d has no training examples", k)
		}
	}
	pp := newPlainPool(a, 64)
	p0, err := pp.get()
	if err != nil {
		return nil, nil, err
	}
	w := make([]float64, p0.NumParams())
	p0.Init(w, rand.New(rand.NewPCG(o.Seed, tagAvgInit)))
	pp.put(p0)
	vel := make([]float64, len(w))
	plain = &Result{}
	local := func(k, _ int, global, out []float64, rng *rand.Rand) error {
		p, err := pp.get()
		if err != nil {
			return err
		}
		defer pp.put(p)
		c := &ds.Existing[k]
		return p.Update(global, out, c.X, c.Y, o.LocalEpochs, o.Batch, o.ClientLR, rng)
	}
	server := func(_ int, global, mean []float64) {
		for j, th := range global {
			vel[j] = o.Momentum*vel[j] + o.ServerLR*(mean[j]-th)
			global[j] = th + vel[j]
		}
	}
	eval := func(t int, ftEpochs int) (RoundEval, error) {
		for _, v := range w {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return RoundEval{}, fmt.Errorf("fedvi: FedAvg's global weights diverged (server learning rate %g, momentum %g, client learning rate %g)", o.ServerLR, o.Momentum, o.ClientLR)
			}
		}
		r := RoundEval{Round: t + 1, ExistingWeighted: math.NaN(), NewWeighted: math.NaN()}
		var err error
		if r.Existing, err = evaluatePlain(pp, w, ds.Existing, ds.Classes, ftEpochs, ft.Batch, ft.LR, o.Seed, data.StreamID(tagAvgFT, 0)); err != nil {
			return r, fmt.Errorf("participating clients: %w", err)
		}
		r.ExistingWeighted = r.Existing.Weighted
		if len(ds.New) > 0 {
			if r.New, err = evaluatePlain(pp, w, ds.New, ds.Classes, ftEpochs, ft.Batch, ft.LR, o.Seed, data.StreamID(tagAvgFT, 1)); err != nil {
				return r, fmt.Errorf("non-participating clients: %w", err)
			}
			r.NewWeighted = r.New.Weighted
		}
		return r, nil
	}
	after := func(t int) error {
		if t >= o.Rounds-o.EvalLast {
			r, err := eval(t, 0)
			if err != nil {
				return err
			}
			plain.History = append(plain.History, r)
		}
		if o.Progress != nil {
			o.Progress(t+1, o.Rounds)
		}
		if o.Stop != nil {
			return o.Stop()
		}
		return nil
	}
	if err := fedrun.RunHooks(n, o.ClientsPerRound, o.Rounds, weights, w, o.Seed, tagAvgRound, local,
		fedrun.Hooks{Server: server, AfterRound: after}); err != nil {
		return nil, nil, err
	}
	if o.Rounds == 0 && o.EvalLast > 0 {
		r, err := eval(-1, 0)
		if err != nil {
			return nil, nil, err
		}
		plain.History = append(plain.History, r)
	}
	plain.finish(w, start)
	if ft.Epochs == 0 {
		return plain, nil, nil
	}
	ftStart := time.Now()
	r, err := eval(o.Rounds-1, ft.Epochs)
	if err != nil {
		return nil, nil, fmt.Errorf("fine-tuning: %w", err)
	}
	tuned = &Result{History: []RoundEval{r}}
	tuned.finish(w, ftStart)
	// FedAvg+FT's time includes the FedAvg training it starts from.
	tuned.Seconds += plain.Seconds
	return plain, tuned, nil
}

// finish sets θ, the means over the evaluated rounds and the time.
func (r *Result) finish(theta []float64, start time.Time) {
	ex, nw := make([]float64, len(r.History)), make([]float64, len(r.History))
	for i, h := range r.History {
		ex[i], nw[i] = h.ExistingWeighted, h.NewWeighted
	}
	r.LastExisting, r.LastNew = fl.Mean(ex), fl.Mean(nw)
	r.Theta = theta
	r.Seconds = time.Since(start).Seconds()
}

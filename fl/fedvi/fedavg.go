package fedvi

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/pacpfl/pacpfl/conv"
	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/fedavg"
	"github.com/pacpfl/pacpfl/fl/internal/fedrun"
)

// Plain is one worker's copy of the FedAvg network of FedVI's Table 1:
// E followed by one dense layer on all d features (E + G without the
// split, P and β — the CNN of Reddi et al. that FedVI's E is cut from),
// as a fedavg.Model.
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
	if p.head, err = conv.NewDense(
		conv.DenseConfig{Name: "head", In: a.Embed, Out: a.Classes, Options: o}); err != nil {
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
	_, err := p.update(w, out, x, y, epochs, b, lr, rng)
	return err
}

// Train is fedavg.Model's local training: s.Steps epochs of Update on the
// client's training data; it returns the mean minibatch loss. FedProx's
// term is not implemented (s.Mu must be 0).
func (p *Plain) Train(c *data.ClientData, start, out []float64, s fedavg.Schedule, rng *rand.Rand) (float64, error) {
	if s.Mu != 0 {
		return 0, fmt.Errorf("fedvi: FedAvg's CNN has no proximal term (μ = %v)", s.Mu)
	}
	return p.update(start, out, c.X, c.Y, s.Steps, s.Batch, s.LR, rng)
}

// update is Update returning the mean minibatch loss.
func (p *Plain) update(w, out, x, y []float64, epochs, b int, lr float64, rng *rand.Rand) (float64, error) {
	a := p.A
	D := a.InChannels * a.InH * a.InW
	n := len(y)
	if n < 1 || len(x) != n*D {
		return 0, fmt.Errorf("fedvi: %d inputs are not %d images of %d pixels (at least one)", len(x), n, D)
	}
	if err := p.Set(w); err != nil {
		return 0, err
	}
	p.setTrain(true, rng)
	if cap(p.order) < n {
		p.order = make([]int, n)
	}
	p.order = p.order[:n]
	sum, steps := 0.0, 0
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
				return 0, err
			}
			z, err := p.head.Forward(R)
			if err != nil {
				return 0, err
			}
			loss, err := p.ce.Forward(z, p.labels)
			if err != nil {
				return 0, fmt.Errorf("%w (learning rate %g)", err, lr)
			}
			if math.IsNaN(loss) || math.IsInf(loss, 0) {
				return 0, fmt.Errorf("fedvi: FedAvg's loss is %v: the weights diverged (learning rate %g)", loss, lr)
			}
			sum += loss
			steps++
			g, _ := p.ce.Backward()
			if g, err = p.head.Backward(g); err != nil {
				return 0, err
			}
			if err := p.backward(g); err != nil {
				return 0, err
			}
			for _, q := range p.params {
				for j, v := range q.Grad {
					q.Value[j] -= lr * v
				}
			}
		}
	}
	p.Get(out)
	return sum / float64(max(steps, 1)), nil
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

// groupEval turns the predictions of a group into its metrics.
func groupEval(preds []fl.ClassPrediction, clients []data.ClientData, classes int) (GroupEval, error) {
	g, err := fl.EvaluateClassification(preds, clients, classes)
	if err != nil {
		return GroupEval{}, err
	}
	return withWeighted(g, clients)
}

// withWeighted adds the group's weighted accuracy to its metrics.
func withWeighted(g fl.ClassGroupMetrics, clients []data.ClientData) (GroupEval, error) {
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

// validate checks the fine-tuning (Epochs 0: none).
func (ft FineTune) validate() error {
	if ft.Epochs < 0 || (ft.Epochs > 0 && (ft.Batch < 1 || !(ft.LR > 0) || math.IsInf(ft.LR, 0))) {
		return fmt.Errorf("fedvi: fine-tuning %d epochs, batch %d, step %v: want epochs ≥ 0, batch ≥ 1, a "+
			"finite step > 0", ft.Epochs, ft.Batch, ft.LR)
	}
	return nil
}

// DefaultFineTune is 5 epochs of SGD in mini-batches of 32 at FedVI's
// client step 0.02 (our choice; the papers leave it open).
func DefaultFineTune() FineTune { return FineTune{Epochs: 5, Batch: 32, LR: 0.02} }

// TrainFedAvg runs FedAvg on the network Plain on ds's participating
// clients with o's rounds, clients per round, mini-batch, local epochs,
// client step and server optimiser (SGD with momentum on the size-weighted
// mean update, so that FedVI and FedAvg differ only in the model; momentum
// 0 and server step 1 is McMahan et al.'s FedAvg), evaluating both groups'
// ModelGlobal after each of the last o.EvalLast rounds:
//
//	w⁽⁰⁾ ← init;  v ← 0
//	for t = 1..T:  S⁽ᵗ⁾ ← c clients at random
//	    w_k ← Fit(k, w⁽ᵗ⁾) in parallel;  n ← Σ n_k  (n_k = |D_k|)
//	    v ← μ·v + α_s·(Σ_k (n_k/n) w_k − w⁽ᵗ⁾);  w⁽ᵗ⁺¹⁾ ← w⁽ᵗ⁾ + v
//
// If ft.Epochs > 0 it also returns FedAvg+FT: every client's
// ModelFineTuned (the final global model fine-tuned on its training
// data, both groups), evaluated once. The clients are NewFedAvgClient's
// (or o.Clients'); o.Drops and o.Checkpoint work as in Train (the
// checkpoint's Server is v).
func TrainFedAvg(ds *data.Dataset, o Options, ft FineTune) (plain, tuned *Result, err error) {
	start := time.Now()
	o.Arch = o.Arch.withDefaults()
	if err := o.Validate(); err != nil {
		return nil, nil, err
	}
	if err := ft.validate(); err != nil {
		return nil, nil, err
	}
	a := o.Arch
	if ds.D != a.InChannels*a.InH*a.InW || ds.Classes != a.Classes {
		return nil, nil, fmt.Errorf(
			"fedvi: data set %s has %d features and %d classes, the network takes %d×%d×%d images and %d classes",
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
	pool := fedrun.NewPool(64, func() (*Plain, error) { return NewPlain(a) })
	p0, err := NewPlain(a)
	if err != nil {
		return nil, nil, err
	}
	ex, nw, err := roundClients(ds, o.Clients, func(c *data.ClientData, group, index int) (fl.RoundClient, error) {
		return newAvgClient(c, &o, ft, pool, group, index)
	})
	if err != nil {
		return nil, nil, err
	}
	w := make([]float64, p0.NumParams())
	p0.Init(w, rand.New(rand.NewPCG(o.Seed, tagAvgInit)))
	vel := make([]float64, len(w))
	eval := func(round, model int) (evaluation, error) {
		for _, v := range w {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return evaluation{}, fmt.Errorf("fedvi: FedAvg's global weights diverged "+
					"(server learning rate %g, momentum %g, client learning rate %g)", o.ServerLR, o.Momentum,
					o.ClientLR)
			}
		}
		return evaluateGroups(ex, nw, fl.EvalTask{Round: round, Model: model}, w)
	}
	plain = &Result{}
	s := &server{o: &o, clients: ex, weights: weights, global: w, vel: vel, tag: tagAvgRound, res: plain,
		step: func(_ int, global, mean []float64) {
			for j, th := range global {
				vel[j] = o.Momentum*vel[j] + o.ServerLR*(mean[j]-th)
				global[j] = th + vel[j]
			}
		},
		eval: func(round int) (evaluation, error) { return eval(round, ModelGlobal) }}
	if err := s.resume(); err != nil {
		return nil, nil, err
	}
	if err := s.run(); err != nil {
		return nil, nil, err
	}
	plain.finish(w, start)
	if ft.Epochs == 0 {
		return plain, nil, nil
	}
	ftStart := time.Now()
	tuned = &Result{}
	if err := tuned.add(eval(o.Rounds, ModelFineTuned)); err != nil {
		return nil, nil, fmt.Errorf("fine-tuning: %w", err)
	}
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

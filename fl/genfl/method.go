package genfl

import (
	"fmt"
	"math"
	"time"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/internal/fedround"
)

// MethodGenFL is GenFL's name among the methods of a comparison.
const MethodGenFL = "genfl"

// PredictProbs returns the predictive class probabilities of the
// stochastic classifier Q on the rows of x (n×In): for every row the mean
// of softmax(f_W(x)) over draws independent weight draws W ∼ Q, each drawn
// exactly for its row by the pair evaluator. Rows sum to 1.
func PredictProbs(q *Posterior, a Arch, x []float64, draws int, seed uint64) ([]float64, error) {
	if draws < 1 {
		return nil, fmt.Errorf("genfl: %d weight draws per prediction, want ≥ 1", draws)
	}
	if len(x)%a.In != 0 {
		return nil, fmt.Errorf("genfl: %d inputs are not rows of %d features", len(x), a.In)
	}
	n := len(x) / a.In
	C := a.Classes
	probs := make([]float64, n*C)
	m := newMoments(q)
	e := newPairEval(a)
	rows := max(1, pairBlock/draws)
	rep := make([]float64, 0, rows*draws*a.In)
	rng := stream(seed, tagPredct)
	for lo := 0; lo < n; lo += rows {
		hi := min(lo+rows, n)
		rep = rep[:0]
		for i := lo; i < hi; i++ {
			for range draws {
				rep = append(rep, x[i*a.In:(i+1)*a.In]...)
			}
		}
		y := make([]int, (hi-lo)*draws)
		e.errors(m, rep, y, rng.NormFloat64)
		logits := e.net.acts[len(e.net.acts)-1]
		for r := range y {
			z := logits[r*C : (r+1)*C]
			mx := z[0]
			for _, v := range z[1:] {
				mx = math.Max(mx, v)
			}
			s := 0.0
			for _, v := range z {
				s += math.Exp(v - mx)
			}
			dst := probs[(lo+r/draws)*C : (lo+r/draws+1)*C]
			for c, v := range z {
				dst[c] += math.Exp(v-mx) / s / float64(draws)
			}
		}
	}
	return probs, nil
}

// RunMethod runs GenFL's PFL variant (Alg. 3) as a method of a
// personalised-classification comparison on ds: the prior learnt on the
// first half of every existing client's training data (or data-free),
// each client's personalised posterior Q_k from its second half (kept by
// its client), and its predictive on its test set (draws weight draws per
// image) for accuracy and the calibration error (42) (Evaluate
// ModelPredict). New clients get no figures (GenFL has no protocol for
// clients that did not take part). Per-client bounds are not computed here
// (experiment genfl does). With o.Clients set, ds gives the sizes of the
// existing clients' training and test rows only.
func RunMethod(ds *data.Dataset, o Options, draws int) (*fl.MethodResult, error) {
	start := time.Now()
	if ds.Classes < 2 {
		return nil, fmt.Errorf("genfl: %s is not a classification data set", ds.Name)
	}
	if err := o.Arch.Validate(); err != nil {
		return nil, err
	}
	if ds.D != o.Arch.In || ds.Classes != o.Arch.Classes {
		return nil, fmt.Errorf("genfl: data set %s has %d features and %d classes, the network %s", ds.Name, ds.D,
			ds.Classes, o.Arch)
	}
	if draws < 1 {
		return nil, fmt.Errorf("genfl: %d weight draws per prediction, want ≥ 1", draws)
	}
	u, err := o.users(len(ds.Existing), func(i int) int { return len(ds.Existing[i].Y) },
		func(i int) int { return len(ds.Existing[i].YTest) },
		func(i int, pl *pools) (*roundClient, error) {
			c := &ds.Existing[i]
			train, err := NewClient(c.X, c.Y, ds.D, ds.Classes)
			if err != nil {
				return nil, fmt.Errorf("client %d: %w", i, err)
			}
			test, err := NewClient(c.XTest, c.YTest, ds.D, ds.Classes)
			if err != nil {
				return nil, fmt.Errorf("client %d, test rows: %w", i, err)
			}
			return newRoundClient(train, test, &o, i, pl)
		})
	if err != nil {
		return nil, err
	}
	p, err := o.prior(u)
	if err != nil {
		return nil, err
	}
	fed := o.PosteriorFed
	fed.LocalEpochs = o.PersonalEpochs
	if err := personalise(u.clients, p, o.Arch, &o.Objective, &fed, max(1, fed.workers()), func() {}); err != nil {
		return nil, err
	}
	evals, err := fedround.Evaluate(u.clients, fl.EvalTask{Model: ModelPredict}, []float64{float64(draws)})
	if err != nil {
		return nil, err
	}
	e := fl.GroupClassMetrics(evals)
	out := &fl.MethodResult{Method: MethodGenFL, ExistingClass: &e, Elapsed: time.Since(start)}
	out.Seconds = out.Elapsed.Seconds()
	return out, nil
}

package fl

import (
	"fmt"
	"math"

	"github.com/pacpfl/pacpfl/data"
)

// Test-set certificates (docs/math.md §2.18.4): a bound on the expected
// loss of the deployed predictor from the test data it is evaluated on,
// which training never sees. They need no second training run, so train
// prints them by default; the PAC-Bayes certificate of CertifyGP needs one.

// TestSetTerms are every term of one test-set certificate: N independent
// losses in [0, 1] with mean Mean; with probability ≥ 1 − Delta over them
// the mean of their expectations is at most Bound = kl⁻¹(Mean, ln(1/δ)/N)
// (TestSetBound).
type TestSetTerms struct {
	N     int     `json:"n"`
	Mean  float64 `json:"mean"`
	Delta float64 `json:"delta"`
	Bound float64 `json:"bound"`
}

// newTestSetTerms is the certificate of n losses of mean mean.
func newTestSetTerms(mean float64, n int, delta float64) (TestSetTerms, error) {
	b, err := TestSetBound(mean, n, delta)
	return TestSetTerms{N: n, Mean: mean, Delta: delta, Bound: b}, err
}

// ClientLoss is a client's loss on its test points: their Sum and number N.
type ClientLoss struct {
	Sum float64
	N   int
}

// TestSetCertificates are the test-set certificates of a deployed predictor
// (docs/math.md §2.18.4), each holding with probability ≥ 1 − Delta on its
// own.
type TestSetCertificates struct {
	// Loss names the loss in [0, 1]: "clipped_square" (min((y − ŷ)², Clip)/
	// Clip of the predictive mean ŷ) or "zero_one" (the error of the
	// predicted class).
	Loss  string  `json:"loss"`
	Clip  float64 `json:"clip,omitempty"`
	Delta float64 `json:"delta"`
	// Existing pools the test points of all existing clients: it bounds
	// the mean of their expected losses weighted by their test points
	// (test points i.i.d. within a client, independent across clients).
	Existing TestSetTerms `json:"existing"`
	// New has one mean test loss per new client: it bounds the expected
	// loss of the predictor personalised on a new client drawn from the
	// environment (new clients i.i.d.). NewPooled pools the new clients'
	// test points: a bound on these new clients' mean risk only. Both nil
	// without new clients with test points.
	New       *TestSetTerms `json:"new,omitempty"`
	NewPooled *TestSetTerms `json:"new_pooled,omitempty"`
}

// NewTestSetCertificates are the test-set certificates of the existing and
// the new clients' losses on their test points (clients without any are
// left out: they have nothing to measure).
func NewTestSetCertificates(existing, new []ClientLoss, delta float64) (*TestSetCertificates, error) {
	for _, l := range append(append([]ClientLoss(nil), existing...), new...) {
		if l.N < 0 || !(l.Sum >= 0 && l.Sum <= float64(l.N)) {
			return nil, fmt.Errorf("%w: a client's test losses sum to %v over %d points, outside [0, n]",
				ErrKLDomain, l.Sum, l.N)
		}
	}
	out := &TestSetCertificates{Delta: delta}
	var err error
	m, n := pooledLoss(existing)
	if out.Existing, err = newTestSetTerms(m, n, delta); err != nil {
		return nil, fmt.Errorf("existing clients' test-set bound: %w", err)
	}
	var means []float64
	for _, l := range new {
		if l.N > 0 {
			means = append(means, l.Sum/float64(l.N))
		}
	}
	if len(means) == 0 {
		return out, nil
	}
	t, err := newTestSetTerms(mean(means), len(means), delta)
	if err != nil {
		return nil, fmt.Errorf("new clients' test-set bound: %w", err)
	}
	out.New = &t
	m, n = pooledLoss(new)
	p, err := newTestSetTerms(m, n, delta)
	if err != nil {
		return nil, fmt.Errorf("new clients' pooled test-set bound: %w", err)
	}
	out.NewPooled = &p
	return out, nil
}

// TestSetCertificatesGP are the test-set certificates of the deployed GP
// predictor of the trained particles (PredictGroup's predictive mean, each
// client personalised on its own data) on the loss min((y − ŷ)², clip)/clip;
// g is the client model as the run trained it (GPModel.Trained).
func TestSetCertificatesGP(ds *data.Dataset, g *GPModel, particles []float64, clip,
	delta float64) (*TestSetCertificates, error) {
	if !(clip > 0) || math.IsInf(clip, 0) {
		return nil, fmt.Errorf("certify: clip %v must be positive and finite", clip)
	}
	le, err := gpDeployedLosses(g, particles, ds.Existing, clip)
	if err != nil {
		return nil, err
	}
	ln, err := gpDeployedLosses(g, particles, ds.New, clip)
	if err != nil {
		return nil, err
	}
	out, err := NewTestSetCertificates(le, ln, delta)
	if err != nil {
		return nil, err
	}
	out.Loss, out.Clip = "clipped_square", clip
	return out, nil
}

// gpDeployedLosses are the clients' clipped squared errors of the deployed
// predictor (the predictive mean) on their test points.
func gpDeployedLosses(g *GPModel, particles []float64, clients []data.ClientData, clip float64) ([]ClientLoss, error) {
	if len(clients) == 0 {
		return nil, nil
	}
	preds, err := g.PredictGroup(particles, clients)
	if err != nil {
		return nil, err
	}
	out := make([]ClientLoss, len(clients))
	for i := range clients {
		for j, y := range clients[i].YTest {
			out[i].Sum += ClippedSquare(y, preds[i].Mean[j], clip)
		}
		out[i].N = len(clients[i].YTest)
	}
	return out, nil
}

// pooledLoss is the mean loss over all the clients' test points, and
// their number.
func pooledLoss(ls []ClientLoss) (float64, int) {
	s, n := 0.0, 0
	for _, l := range ls {
		s += l.Sum
		n += l.N
	}
	return s / float64(n), n
}

// TestSetCertificatesZeroOne are the test-set certificates of classifiers
// on the 0–1 error, from the clients' accuracies in percent on their test
// sets (NaN: no test points), as ClassificationMetrics computes them.
func TestSetCertificatesZeroOne(existing, new []data.ClientData, accExisting, accNew []float64,
	delta float64) (*TestSetCertificates, error) {
	losses := func(cs []data.ClientData, acc []float64) ([]ClientLoss, error) {
		if len(acc) != len(cs) {
			return nil, fmt.Errorf("certify: %d accuracies for %d clients", len(acc), len(cs))
		}
		out := make([]ClientLoss, len(cs))
		for i := range cs {
			n := len(cs[i].YTest)
			if n == 0 || math.IsNaN(acc[i]) {
				continue
			}
			// The accuracy is 100·correct/n: round back to the count of errors.
			out[i] = ClientLoss{Sum: math.Round(float64(n) * (1 - acc[i]/100)), N: n}
		}
		return out, nil
	}
	le, err := losses(existing, accExisting)
	if err != nil {
		return nil, err
	}
	ln, err := losses(new, accNew)
	if err != nil {
		return nil, err
	}
	out, err := NewTestSetCertificates(le, ln, delta)
	if err != nil {
		return nil, err
	}
	out.Loss = "zero_one"
	return out, nil
}

// LossName is the loss of the certificates in words, with its range.
func (c *TestSetCertificates) LossName() string {
	if c.Loss == "zero_one" {
		return "0–1 error (of the predicted class: a loss in [0, 1])"
	}
	return fmt.Sprintf("squared error (clipped at %g and divided by it: a loss in [0, 1])", c.Clip)
}

// Sentences says in one sentence per certificate what it covers — which
// predictor, which loss and range, which probability, which assumptions —
// with the same loss measured beside it.
func (c *TestSetCertificates) Sentences() []string {
	conf := 100 * (1 - c.Delta)
	out := []string{fmt.Sprintf("With probability ≥ %g %% over the test data (independent of the trained model; "+
		"test points i.i.d. within each client, independent across clients), the mean expected %s of the "+
		"deployed predictors of the existing clients, weighted by their test points, is at most %.3f "+
		"(from the test data: %d points, measured %.3f).", conf, c.LossName(), c.Existing.Bound, c.Existing.N,
		c.Existing.Mean)}
	if t := c.New; t != nil {
		out = append(out, fmt.Sprintf("With probability ≥ %g %% over the new clients (drawn i.i.d. from the "+
			"environment) and their data, the expected %s of a new client's deployed predictor, personalised on "+
			"its own data, is at most %.3f (from the test data of %d new client(s), one mean loss each: measured "+
			"%.3f; these clients' pooled test points give %.3f for them alone).", conf, c.LossName(), t.Bound, t.N,
			t.Mean, c.NewPooled.Bound))
	}
	return out
}

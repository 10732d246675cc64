package fedvi

import (
	"fmt"
	"math/rand/v2"
)

// Batches returns the sizes of the mini-batches of one pass over n
// examples: full batches of b, then the rest; a rest of one example is
// merged into the batch before it (a batch needs one support and one query
// example). n must be at least 2.
func Batches(n, b int) []int {
	var out []int
	for lo := 0; lo < n; lo += b {
		out = append(out, min(b, n-lo))
	}
	if k := len(out); k > 1 && out[k-1] == 1 {
		out[k-2]++
		out = out[:k-1]
	}
	return out
}

// Split is the data split function S(·) on one mini-batch of size b: the
// first half (⌊b/2⌋ examples) is the support set, the rest the query set.
func Split(b int) (support, query int) { return b / 2, b - b/2 }

// QueryCount is n_k, the query examples of epochs passes over n examples
// in mini-batches of b: what ClientUpdate returns and the server weighs by.
func QueryCount(n, b, epochs int) int {
	q := 0
	for _, s := range Batches(n, b) {
		_, nq := Split(s)
		q += nq
	}
	return epochs * q
}

// ClientUpdate is Algorithm 1's ClientUpdate on one client's data (x: rows
// of D pixels, y: labels) from the global parameters theta: o.LocalEpochs
// passes over the data in a random order (from rng), each in mini-batches
// of o.Batch split into support and query halves, one client-SGD step
// θ ← θ − o.ClientLR·∇loss per mini-batch, β_k drawn afresh for each. It
// writes θ_k into out and returns n_k = |D_{k,q}| summed over the
// mini-batches (the server forms Δ_k = θ_k − θ).
func (m *Model) ClientUpdate(theta, out, x, y []float64, o *Options, rng *rand.Rand) (int, error) {
	D := m.A.InChannels * m.A.InH * m.A.InW
	n := len(y)
	switch {
	case n < 2:
		return 0, fmt.Errorf("fedvi: a client needs at least 2 training examples (one support, one query), has %d", n)
	case len(x) != n*D:
		return 0, fmt.Errorf("fedvi: %d inputs are not %d images of %d pixels", len(x), n, D)
	}
	if err := m.Set(theta); err != nil {
		return 0, err
	}
	m.setTrain(true, rng)
	if cap(m.order) < n {
		m.order = make([]int, n)
	}
	m.order = m.order[:n]
	eps := make([]float64, len(m.post.eps))
	nq := 0
	for e := 0; e < o.LocalEpochs; e++ {
		for i := range m.order {
			m.order[i] = i
		}
		rng.Shuffle(n, func(a, b int) { m.order[a], m.order[b] = m.order[b], m.order[a] })
		lo := 0
		for _, b := range Batches(n, o.Batch) {
			idx := m.order[lo : lo+b]
			lo += b
			shape(&m.img, b, m.A.InChannels, m.A.InH, m.A.InW)
			if cap(m.labels) < b {
				m.labels = make([]int, b)
			}
			m.labels = m.labels[:b]
			for r, i := range idx {
				copy(m.img.Data[r*D:(r+1)*D], x[i*D:(i+1)*D])
				m.labels[r] = int(y[i])
			}
			for i := range eps {
				eps[i] = rng.NormFloat64()
			}
			ns, q := Split(b)
			if _, err := m.LossGrad(&m.img, m.labels, ns, eps, o.Tau); err != nil {
				return 0, fmt.Errorf("%w (client learning rate %g)", err, o.ClientLR)
			}
			for _, p := range m.params {
				for j, g := range p.Grad {
					p.Value[j] -= o.ClientLR * g
				}
			}
			nq += q
		}
	}
	m.Get(out)
	return nq, nil
}

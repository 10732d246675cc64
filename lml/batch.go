package lml

import (
	"fmt"
	"math/rand/v2"
)

// Batcher draws the mini-batches of Algorithm 2 (line 1): b rows of a
// client's data, uniformly without replacement, copied into buffers it
// reuses. Not safe for concurrent use.
type Batcher struct {
	rng  *rand.Rand
	perm []int
	x, y []float64
}

// NewBatcher returns a batcher drawing from rng.
func NewBatcher(rng *rand.Rand) *Batcher { return &Batcher{rng: rng} }

// Sample returns a batch of b of the m = len(y) rows of (X m×d, y) and the
// tempering scale m/b for TemperedLML. With b ≥ m it returns X and y
// themselves (scale 1): the full-data LML. The returned slices are owned by
// the batcher until the next call.
func (bt *Batcher) Sample(X, y []float64, d, b int) (bx, by []float64, scale float64, err error) {
	m := len(y)
	if d < 1 || len(X) != m*d {
		return nil, nil, 0, fmt.Errorf("lml: batch source X has %d values, want m×d = %d×%d", len(X), m, d)
	}
	if b < 1 {
		return nil, nil, 0, fmt.Errorf("lml: batch size %d must be ≥ 1", b)
	}
	if b >= m {
		return X, y, 1, nil
	}
	if len(bt.perm) != m {
		bt.perm = make([]int, m)
		for i := range bt.perm {
			bt.perm[i] = i
		}
	}
	if cap(bt.x) < b*d {
		bt.x = make([]float64, b*d)
	}
	if cap(bt.y) < b {
		bt.y = make([]float64, b)
	}
	bx, by = bt.x[:b*d], bt.y[:b]
	// Partial Fisher–Yates: the first b entries of perm become a uniform
	// random b-subset whatever order perm was left in by the last call.
	for i := 0; i < b; i++ {
		j := i + bt.rng.IntN(m-i)
		bt.perm[i], bt.perm[j] = bt.perm[j], bt.perm[i]
		r := bt.perm[i]
		copy(bx[i*d:i*d+d], X[r*d:r*d+d])
		by[i] = y[r]
	}
	return bx, by, float64(m) / float64(b), nil
}

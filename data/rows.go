package data

import (
	"fmt"
	"math/rand/v2"
)

// RowSampler draws mini-batches: b of the m rows of a client's data,
// uniformly without replacement, copied into buffers it reuses (PAC-PFL's
// Algorithm 2, line 1, and the local batches of every other method). The
// draw is a partial Fisher–Yates shuffle started from the identity each
// time, so a batch depends only on the random stream, never on earlier
// batches. The zero value is ready to use; a RowSampler is not safe for
// concurrent use, and allocates only when the data grow.
type RowSampler struct {
	perm   []int
	bx, by []float64
}

// Sample returns b of the m = len(y) rows of (x, m×d row-major; y). With
// b ≥ m it returns x and y themselves. The returned slices are owned by the
// sampler until its next call.
func (s *RowSampler) Sample(x, y []float64, d, b int, rng *rand.Rand) (bx, by []float64, err error) {
	m := len(y)
	switch {
	case d < 1 || len(x) != m*d:
		return nil, nil, fmt.Errorf("data: batch source has %d inputs for %d rows of dimension %d", len(x), m, d)
	case b < 1:
		return nil, nil, fmt.Errorf("data: batch size %d must be ≥ 1", b)
	case b >= m:
		return x, y, nil
	}
	if len(s.perm) != m {
		s.perm = make([]int, m)
	}
	if cap(s.by) < b || cap(s.bx) < b*d {
		s.bx = make([]float64, b*d)
		s.by = make([]float64, b)
	}
	bx, by = s.bx[:b*d], s.by[:b]
	for i := range s.perm {
		s.perm[i] = i
	}
	for i := 0; i < b; i++ {
		j := i + rng.IntN(m-i)
		s.perm[i], s.perm[j] = s.perm[j], s.perm[i]
		r := s.perm[i]
		copy(bx[i*d:(i+1)*d], x[r*d:(r+1)*d])
		by[i] = y[r]
	}
	return bx, by, nil
}

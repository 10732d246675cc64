package lml

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
)

// inducingStream is the PCG stream SelectInducing draws from (the seed is
// the PCG state), so that its draws never coincide with another use of the
// same seed in the project.
const inducingStream = 0x5a5a_1d_0c_1ae7

// inducingBlock is the number of rows whose D² sum SelectInducing keeps, so
// that a draw costs O(m/inducingBlock + inducingBlock) instead of O(m).
const inducingBlock = 4096

// SelectInducing chooses M of the m rows of X (m×d, row-major) as inducing
// inputs by k-means++ seeding (D²-sampling) in input space: the first row
// uniformly at random, each next row with probability proportional to its
// squared Euclidean distance to the nearest row already chosen. The draws
// come from a PCG stream seeded with seed, so the same X, M and seed give
// the same Z (M×d, rows in the order chosen) on every machine.
//
// Why: the bound of SparseWorkspace is one objective for the whole run only
// if Z is fixed, and D²-sampling in input space depends on X alone — not on
// φ, which moves every round — while spreading the rows over the data
// (rows far from the chosen ones are likely; exact duplicates never chosen
// twice), which is what keeps Q = K_fu K_uu⁻¹ K_uf close to K for any
// smooth kernel. Distances are on the raw inputs: standardise them first
// if their scales differ.
//
// Cost O(m·M·d) time at most, O(m) memory; the triangle inequality skips
// most of the distance computations (see the loop). M < 1, M > m, X of the wrong shape or
// with NaN or infinite entries, and X with fewer than M distinct rows are
// errors.
func SelectInducing(X []float64, d, M int, seed uint64) ([]float64, error) {
	if d < 1 {
		return nil, fmt.Errorf("lml: SelectInducing: input dimension D = %d must be ≥ 1", d)
	}
	if len(X) == 0 || len(X)%d != 0 {
		return nil, fmt.Errorf("lml: SelectInducing: X has %d values, not a positive multiple of D = %d", len(X), d)
	}
	m := len(X) / d
	if M < 1 {
		return nil, fmt.Errorf("lml: SelectInducing: M = %d inducing inputs; want at least 1", M)
	}
	if M > m {
		return nil, fmt.Errorf("lml: SelectInducing: M = %d inducing inputs but X has only m = %d rows", M, m)
	}
	for i, v := range X {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("lml: SelectInducing: X[%d][%d] = %v is not finite", i/d, i%d, v)
		}
	}
	rng := rand.New(rand.NewPCG(seed, inducingStream))
	Z := make([]float64, M*d)
	d2 := make([]float64, m)  // squared distance to the nearest chosen row
	near := make([]int32, m)  // which chosen row that is
	dcz := make([]float64, M) // squared distances from the newest to the others
	nb := (m + inducingBlock - 1) / inducingBlock
	bsum := make([]float64, nb) // Σ d2 per block of rows

	// The rows are updated in blocks on GOMAXPROCS goroutines; every block
	// is the same computation whichever goroutine does it, so Z does not
	// depend on their number.
	threads := min(runtime.GOMAXPROCS(0), nb)
	var next atomic.Int64
	parallel := func(f func(b, i0, i1 int)) {
		next.Store(0)
		var wg sync.WaitGroup
		for range threads {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					b := int(next.Add(1)) - 1
					if b >= nb {
						return
					}
					f(b, b*inducingBlock, min((b+1)*inducingBlock, m))
				}
			}()
		}
		wg.Wait()
	}

	i := rng.IntN(m)
	copy(Z[:d], X[i*d:i*d+d])
	parallel(func(b, i0, i1 int) {
		var s float64
		for j := i0; j < i1; j++ {
			d2[j] = sqDistRow(X[j*d:j*d+d], Z[:d])
			s += d2[j]
		}
		bsum[b] = s
	})
	for k := 1; k < M; k++ {
		var total float64
		for _, s := range bsum {
			total += s
		}
		if !(total > 0) {
			return nil,
				fmt.Errorf("lml: SelectInducing: X has only %d distinct rows, fewer than M = %d inducing inputs", k, M)
		}
		i = drawD2(d2, bsum, rng.Float64()*total)
		z := Z[k*d : k*d+d]
		copy(z, X[i*d:i*d+d])
		// Lower d2 to the distance to z. By the triangle inequality a row
		// x whose nearest chosen row c has ‖x − c‖ ≤ ‖z − c‖/2 is at least
		// as close to c as to z: skip it without reading x (on clustered
		// data most rows are skipped late in the draw; on 15-dimensional
		// Gaussian noise, where all distances are alike, few are).
		for c := 0; c < k; c++ {
			dcz[c] = sqDistRow(Z[c*d:c*d+d], z)
		}
		parallel(func(b, i0, i1 int) {
			changed := false
			for j := i0; j < i1; j++ {
				if 4*d2[j] <= dcz[near[j]] {
					continue
				}
				if v := sqDistRow(X[j*d:j*d+d], z); v < d2[j] {
					d2[j], near[j] = v, int32(k)
					changed = true
				}
			}
			if changed {
				var s float64
				for _, v := range d2[i0:i1] {
					s += v
				}
				bsum[b] = s
			}
		})
	}
	return Z, nil
}

// sqDistRow returns ‖a − b‖².
func sqDistRow(a, b []float64) float64 {
	b = b[:len(a)]
	var s float64
	for k, v := range a {
		t := v - b[k]
		s += t * t
	}
	return s
}

// drawD2 returns the row i with Σ_{j<i} d2_j ≤ u < Σ_{j≤i} d2_j, walking the
// block sums first. Rows with d2 = 0 are never returned; if rounding carries
// u past the end, the last row with d2 > 0 is.
func drawD2(d2, bsum []float64, u float64) int {
	m, nb := len(d2), len(bsum)
	b := 0
	for ; b < nb-1; b++ {
		if u < bsum[b] {
			break
		}
		u -= bsum[b]
	}
	i0, i1 := b*inducingBlock, min((b+1)*inducingBlock, m)
	for i := i0; i < i1; i++ {
		if v := d2[i]; v > 0 {
			if u < v {
				return i
			}
			u -= v
		}
	}
	for i := i1 - 1; i >= 0; i-- {
		if d2[i] > 0 {
			return i
		}
	}
	return 0 // not reached: the caller checked that some d2 > 0
}

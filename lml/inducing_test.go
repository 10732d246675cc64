package lml

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// randomRows returns n rows of d standard normal inputs.
func randomRows(rng *rand.Rand, n, d int) []float64 {
	z := make([]float64, n*d)
	for i := range z {
		z[i] = rng.NormFloat64()
	}
	return z
}

func TestSelectInducing(t *testing.T) {
	rng := rand.New(rand.NewPCG(40, 40))
	const m, d = 5000, 3
	X := randomRows(rng, m, d)
	Z, err := SelectInducing(X, d, 64, 7)
	require.NoError(t, err)
	require.Len(t, Z, 64*d)
	// Deterministic in the seed, different for another seed.
	Z2, _ := SelectInducing(X, d, 64, 7)
	assert.Equal(t, Z, Z2)
	Z3, _ := SelectInducing(X, d, 64, 8)
	assert.NotEqual(t, Z, Z3)
	// The triangle-inequality skip changes nothing: the same draw as a
	// plain D²-sampling that updates every row.
	for _, seed := range []uint64{1, 2, 3} {
		n := 2*inducingBlock + 321
		Xr := randomRows(rng, n, d)
		for i := 0; i < n*d; i += 7 * d { // some clustering too
			Xr[i] *= 0.01
		}
		got, err := SelectInducing(Xr, d, 150, seed)
		require.NoError(t, err)
		assert.Equal(t, refSelectInducing(Xr, d, 150, seed), got, "seed %d", seed)
	}
	// … and not on the number of goroutines (blocks of 4096 rows).
	big := randomRows(rng, 3*inducingBlock+100, d)
	Zb, err := SelectInducing(big, d, 40, 9)
	require.NoError(t, err)
	for _, procs := range []int{1, 3} {
		old := runtime.GOMAXPROCS(procs)
		Zp, err := SelectInducing(big, d, 40, 9)
		runtime.GOMAXPROCS(old)
		require.NoError(t, err)
		assert.Equal(t, Zb, Zp, "GOMAXPROCS %d", procs)
	}
	// Every row of Z is a distinct row of X.
	rows := map[[d]float64]int{}
	for i := 0; i < m; i++ {
		rows[[d]float64(X[i*d:i*d+d])] = i
	}
	seen := map[int]bool{}
	for j := 0; j < 64; j++ {
		i, ok := rows[[d]float64(Z[j*d:j*d+d])]
		require.True(t, ok, "Z[%d] is not a row of X", j)
		require.False(t, seen[i], "row %d chosen twice", i)
		seen[i] = true
	}
	// M = m takes every row; the first M rows of a larger draw are the
	// draw of M (the sequence does not depend on M).
	all, err := SelectInducing(X[:50*d], d, 50, 3)
	require.NoError(t, err)
	assert.ElementsMatch(t, chunkRows(X[:50*d], d), chunkRows(all, d))
	some, _ := SelectInducing(X[:50*d], d, 20, 3)
	assert.Equal(t, all[:20*d], some)

	// D²-sampling spreads the points: ten tight, far-apart clusters get an
	// inducing input each (uniform sampling of 10 rows would leave a
	// cluster empty with probability ≈ 1 − 10!/10¹⁰ ≈ 0.9996).
	const per = 300
	C := make([]float64, 10*per*d)
	for c := 0; c < 10; c++ {
		for i := 0; i < per; i++ {
			for k := 0; k < d; k++ {
				C[(c*per+i)*d+k] = 100*float64(c) + 0.01*rng.NormFloat64()
			}
		}
	}
	for seed := uint64(0); seed < 20; seed++ {
		Zc, err := SelectInducing(C, d, 10, seed)
		require.NoError(t, err)
		hit := map[int]bool{}
		for j := 0; j < 10; j++ {
			hit[int(math.Round(Zc[j*d]/100))] = true
		}
		assert.Len(t, hit, 10, "seed %d", seed)
	}

	// Refusals, by name.
	_, err = SelectInducing(X, d, 0, 1)
	assert.ErrorContains(t, err, "M = 0")
	_, err = SelectInducing(X[:10*d], d, 11, 1)
	assert.ErrorContains(t, err, "M = 11 inducing inputs but X has only m = 10 rows")
	_, err = SelectInducing(X[:10], d, 2, 1)
	assert.ErrorContains(t, err, "not a positive multiple of D = 3")
	_, err = SelectInducing(X, 0, 2, 1)
	assert.ErrorContains(t, err, "D = 0")
	bad := append([]float64(nil), X[:30]...)
	bad[13] = math.NaN()
	_, err = SelectInducing(bad, d, 2, 1)
	assert.ErrorContains(t, err, "X[4][1]")
	dup := make([]float64, 0, 40*d)
	for i := 0; i < 40; i++ {
		dup = append(dup, X[(i%4)*d:(i%4)*d+d]...)
	}
	_, err = SelectInducing(dup, d, 5, 1)
	assert.ErrorContains(t, err, "only 4 distinct rows")
	z4, err := SelectInducing(dup, d, 4, 1)
	require.NoError(t, err)
	assert.ElementsMatch(t, chunkRows(X[:4*d], d), chunkRows(z4, d))
}

func chunkRows(x []float64, d int) [][]float64 {
	var out [][]float64
	for i := 0; i+d <= len(x); i += d {
		out = append(out, x[i:i+d])
	}
	return out
}

// refSelectInducing is D²-sampling without the triangle-inequality skip
// and without goroutines: every row's distance to every new point is
// computed. (The block sums and the draw are SelectInducing's, so that the
// random numbers meet the same totals.)
func refSelectInducing(X []float64, d, M int, seed uint64) []float64 {
	m := len(X) / d
	rng := rand.New(rand.NewPCG(seed, inducingStream))
	Z := make([]float64, M*d)
	d2 := make([]float64, m)
	nb := (m + inducingBlock - 1) / inducingBlock
	bsum := make([]float64, nb)
	sums := func() {
		for b := range bsum {
			var s float64
			for _, v := range d2[b*inducingBlock : min((b+1)*inducingBlock, m)] {
				s += v
			}
			bsum[b] = s
		}
	}
	i := rng.IntN(m)
	copy(Z, X[i*d:i*d+d])
	for j := 0; j < m; j++ {
		d2[j] = sqDistRow(X[j*d:j*d+d], Z[:d])
	}
	sums()
	for k := 1; k < M; k++ {
		var total float64
		for _, s := range bsum {
			total += s
		}
		i = drawD2(d2, bsum, rng.Float64()*total)
		z := Z[k*d : k*d+d]
		copy(z, X[i*d:i*d+d])
		for j := 0; j < m; j++ {
			d2[j] = math.Min(d2[j], sqDistRow(X[j*d:j*d+d], z))
		}
		sums()
	}
	return Z
}

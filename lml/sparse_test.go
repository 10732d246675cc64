package lml

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/pacpfl/pacpfl/cholesky"
	"github.com/pacpfl/pacpfl/internal/emulated"
)

// wellConditioned scales the kernel network's output layer of phi by 2, 4,
// … until K(X, X) has a condition number of at most maxCond, so that the
// identities that hold for Z = X in exact arithmetic can be checked to a
// tight tolerance in floating point.
func wellConditioned(t *testing.T, md Model, phi, X []float64, maxCond float64) {
	t.Helper()
	var out Block
	for _, b := range md.Layout() {
		if b.Name == fmt.Sprintf("kernel.W%d", len(md.KernelHidden)) {
			out = b
		}
	}
	for range 20 {
		_, F, _ := refForward(md, phi, X)
		var svd mat.SVD
		require.True(t, svd.Factorize(refCross(F, F), mat.SVDNone))
		if svd.Cond() <= maxCond {
			return
		}
		for i := 0; i < out.Size(); i++ {
			phi[out.Offset+i] *= 2
		}
	}
	t.Fatal("could not make K(X, X) well conditioned")
}

// (a) With Z = X, Q = K and the bound is the exact LML, its gradient the
// exact gradient (the features of Z move with φ exactly as those of X).
func TestSparseZEqualsXIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 31))
	for mi, md := range append(testModels, DefaultModel(15)) {
		np := md.NumParams()
		const m = 40
		phi, X, y := testProblem(rng, md, m, 0.5)
		wellConditioned(t, md, phi, X, 1e4)
		ex, err := NewWorkspace(md, nil)
		require.NoError(t, err)
		for _, tile := range []int{256, 8} {
			withTile(t, tile)
			sw, err := NewSparseWorkspace(md, SparseOptions{Threads: 2, Chunk: 16})
			require.NoError(t, err)
			for _, scale := range []float64{1, 2.5, 0.4} {
				want := make([]float64, np)
				got := make([]float64, np)
				lml, err := ex.TemperedLML(phi, X, y, scale, want)
				require.NoError(t, err)
				f, err := sw.TemperedBound(phi, X, y, X, scale, got)
				require.NoError(t, err)
				require.Equal(t, 0.0, sw.Jitter())
				assert.InEpsilon(t, lml, f, 1e-8, "model %d tile %d scale %v", mi, tile, scale)
				e := relErr(got, want)
				assert.LessOrEqual(t, e, 1e-8, "model %d tile %d scale %v: gradient relative error %.3g", mi, tile,
					scale, e)
				assert.InEpsilon(t, want[np-1], got[np-1], 1e-8, "noise entry")
			}
			sw.Close()
		}
	}
}

// (b) The bound is below the exact LML, for priors drawn from the
// hyper-prior shape, several M < m and inducing inputs anywhere; and it is
// the dense textbook expression.
func TestSparseBoundBelowExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(32, 32))
	withTile(t, 16)
	n := 0
	for trial := 0; trial < 40; trial++ {
		md := testModels[trial%len(testModels)]
		const m = 70
		phi, X, y := testProblem(rng, md, m, 0.5)
		ex, _ := NewWorkspace(md, nil)
		sw, err := NewSparseWorkspace(md, SparseOptions{Threads: 2})
		require.NoError(t, err)
		for _, M := range []int{1, 3, 12, 40, 69} {
			var Z []float64
			if trial%2 == 0 {
				Z = randomRows(rng, M, md.D)
			} else {
				Z, err = SelectInducing(X, md.D, M, uint64(trial))
				require.NoError(t, err)
			}
			scale := 1.0
			if trial%4 == 3 {
				scale = 3
			}
			lml, err := ex.TemperedLML(phi, X, y, scale, nil)
			require.NoError(t, err)
			f, err := sw.TemperedBound(phi, X, y, Z, scale, nil)
			require.NoError(t, err)
			assert.LessOrEqual(t, f, lml+1e-9*math.Abs(lml), "trial %d M=%d", trial, M)
			ref := refSparseBound(md, phi, X, y, Z, scale, sw.Jitter())
			assert.InEpsilon(t, ref, f, 1e-9, "trial %d M=%d jitter %g", trial, M, sw.Jitter())
			n++
		}
		sw.Close()
	}
	t.Logf("%d bounds checked", n)
}

func checkSparseGradient(t *testing.T, md Model, opt SparseOptions, m, M int, scale float64, seed uint64,
	coords []int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 33))
	phi, X, y := testProblem(rng, md, m, 0.5)
	Z := randomRows(rng, M, md.D)
	sw, err := NewSparseWorkspace(md, opt)
	require.NoError(t, err)
	defer sw.Close()
	g := make([]float64, md.NumParams())
	f0, err := sw.TemperedBound(phi, X, y, Z, scale, g)
	require.NoError(t, err)
	jit := sw.Jitter()
	f := func(p []float64) float64 {
		v, err := sw.TemperedBound(p, X, y, Z, scale, nil)
		require.NoError(t, err)
		require.Equal(t, jit, sw.Jitter(), "the jitter changed under the finite difference")
		return v
	}
	// The value with the gradient requested is the value without.
	require.Equal(t, f0, f(phi))
	if coords == nil {
		for i := range phi {
			coords = append(coords, i)
		}
	}
	var got, fd []float64
	for _, i := range coords {
		got = append(got, g[i])
		fd = append(fd, fdGradStep(f, phi, i, 2e-4))
	}
	e := relErr(got, fd)
	assert.LessOrEqual(t, e, 1e-6, "m=%d M=%d chunk=%d scale=%v: relative gradient error %.3g", m, M, sw.Chunk(), scale,
		e)
	ni := md.NoiseIndex()
	assert.InDelta(t, fdGradStep(f, phi, ni, 2e-4), g[ni], 1e-6*math.Max(1, math.Abs(g[ni])), "noise gradient")
}

// fdGradStep is fdGrad with the step h·max(1, |φ_i|). The bound has more
// curvature than the exact LML where K_uu is nearly singular (clustered
// features of the inducing inputs): for one case of the test below the
// five-point difference is off by 1.4e-5 (relative) at fdGrad's h = 1e-3
// and converges to the analytic gradient as h shrinks (2.6e-9 at h = 1e-5).
func fdGradStep(f func([]float64) float64, phi []float64, i int, h float64) float64 {
	h *= math.Max(1, math.Abs(phi[i]))
	p := append([]float64(nil), phi...)
	at := func(d float64) float64 {
		p[i] = phi[i] + d
		return f(p)
	}
	return (-at(2*h) + 8*at(h) - 8*at(-h) + at(-2*h)) / (12 * h)
}

// (c) The gradient against central differences for every entry of φ:
// several M, chunks that do not divide m, m below one chunk, tempered.
func TestSparseGradientFiniteDifferences(t *testing.T) {
	withTile(t, 8)
	for mi, md := range testModels {
		for _, c := range []struct {
			m, M, chunk int
			scale       float64
		}{
			{5, 1, 8, 1},     // one partial tile, M = 1
			{37, 6, 4096, 1}, // m below one chunk
			{100, 9, 24, 1},  // 3-tile chunks; 100 = 12.5 tiles
			{203, 25, 16, 1}, // 26 tiles in 16 blocks
			{61, 13, 8, 3.7}, // tempered: a mini-batch
			{61, 80, 8, 0.4}, // M > m, a temperature below 1
		} {
			checkSparseGradient(t, md, SparseOptions{Chunk: c.chunk, Threads: 2}, c.m, c.M, c.scale, uint64(100*mi+c.m),
				nil)
		}
	}
}

func TestSparseGradientDefaultModelSampled(t *testing.T) {
	md := DefaultModel(15)
	var coords []int
	for _, b := range md.Layout() {
		for _, j := range []int{0, b.Size() / 2, b.Size() - 1} {
			coords = append(coords, b.Offset+j)
		}
	}
	m := 300
	if testing.Short() {
		m = 60
	}
	checkSparseGradient(t, md, SparseOptions{}, m, 30, 1, 99, coords)
	withTile(t, 32)
	checkSparseGradient(t, md, SparseOptions{Chunk: 64, Threads: 3}, m, 30, 2, 98, coords)
}

// (d) Neither the chunk size, nor the number of threads, nor GOMAXPROCS
// changes a bit of the value or of the gradient.
func TestSparseBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 34))
	for _, c := range []struct {
		md        Model
		tile      int
		m, M      int
		chunks    []int
		threadSet []int
	}{
		{testModels[0], 8, 613, 37, []int{8, 24, 40, 1000}, []int{1, 2, 3, 7}},
		{DefaultModel(15), 256, 5000, 64, []int{256, 768, 2048}, []int{1, 2, 3}},
		// M ≥ 256: the multi-threaded paths of the M×M work (look-ahead
		// Cholesky, the inverse's concurrent halves, parallel solves).
		{testModels[3], 256, 1200, 400, []int{256, 1024}, []int{1, 2, 3}},
	} {
		if c.m > 2000 && emulated.Is() {
			// Its 27 evaluations at m = 5,000 take minutes under qemu; the
			// other two cases reach the same parallel paths.
			continue
		}
		withTile(t, c.tile)
		phi, X, y := testProblem(rng, c.md, c.m, 0.5)
		Z := randomRows(rng, c.M, c.md.D)
		np := c.md.NumParams()
		var f0 float64
		var g0 []float64
		procsSet, threadSet := []int{1, 2, 4}, c.threadSet
		if emulated.Is() {
			// The extremes only under qemu: one thread everywhere against
			// the most of each.
			procsSet, threadSet = []int{1, 4}, []int{threadSet[0], threadSet[len(threadSet)-1]}
		}
		for _, procs := range procsSet {
			old := runtime.GOMAXPROCS(procs)
			for _, chunk := range c.chunks {
				for _, th := range threadSet {
					sw, err := NewSparseWorkspace(c.md, SparseOptions{Chunk: chunk, Threads: th})
					require.NoError(t, err)
					g := make([]float64, np)
					f, err := sw.TemperedBound(phi, X, y, Z, 1.5, g)
					require.NoError(t, err)
					sw.Close()
					if g0 == nil {
						f0, g0 = f, g
						continue
					}
					require.Equal(t, math.Float64bits(f0), math.Float64bits(f),
						"value: GOMAXPROCS %d chunk %d threads %d", procs, chunk, th)
					for i := range g {
						require.Equal(t, math.Float64bits(g0[i]), math.Float64bits(g[i]),
							"gradient[%d]: GOMAXPROCS %d chunk %d threads %d", i, procs, chunk, th)
					}
				}
			}
			runtime.GOMAXPROCS(old)
		}
	}
}

// (e) No allocation in steady state.
func TestSparseNoAllocations(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 35))
	withTile(t, 16)
	md := testModels[0]
	phi, X, y := testProblem(rng, md, 300, 0.5)
	Z := randomRows(rng, 20, md.D)
	g := make([]float64, md.NumParams())
	for _, th := range []int{1, 2} {
		sw, err := NewSparseWorkspace(md, SparseOptions{Threads: th, Chunk: 48})
		require.NoError(t, err)
		_, err = sw.Bound(phi, X, y, Z, g)
		require.NoError(t, err)
		assert.Equal(t, 0.0, testing.AllocsPerRun(5, func() { _, _ = sw.Bound(phi, X, y, Z, g) }), "Bound, threads %d",
			th)
		assert.Equal(t, 0.0, testing.AllocsPerRun(5, func() { _, _ = sw.TemperedBound(phi, X, y, Z, 2, g) }),
			"TemperedBound, threads %d", th)
		assert.Equal(t, 0.0, testing.AllocsPerRun(5, func() { _, _ = sw.Bound(phi, X, y, Z, nil) }),
			"Bound without gradient, threads %d", th)
		// Fewer rows and inducing inputs reuse the buffers too.
		assert.Equal(t, 0.0, testing.AllocsPerRun(5,
			func() { _, _ = sw.Bound(phi, X[:50*md.D], y[:50], Z[:7*md.D], g) }), "smaller call")
		sw.Close()
	}
}

// (f) Bad input is refused by name, never a panic.
func TestSparseErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 36))
	md := testModels[0]
	phi, X, y := testProblem(rng, md, 20, 0.5)
	Z := randomRows(rng, 5, md.D)
	sw, err := NewSparseWorkspace(md, SparseOptions{Threads: 2})
	require.NoError(t, err)
	g := make([]float64, md.NumParams())

	_, err = sw.Bound(phi[:len(phi)-1], X, y, Z, g)
	assert.ErrorContains(t, err, "φ has")
	_, err = sw.Bound(phi, X, y, Z, g[:4])
	assert.ErrorContains(t, err, "gradient buffer")
	_, err = sw.Bound(phi, X[1:], y, Z, g)
	assert.ErrorContains(t, err, "X has")
	_, err = sw.Bound(phi, X, nil, Z, g)
	assert.ErrorContains(t, err, "no data")
	_, err = sw.Bound(phi, X, y, Z[1:], g)
	assert.ErrorContains(t, err, "inducing inputs Z have 14 values")
	_, err = sw.Bound(phi, X, y, nil, g)
	assert.ErrorContains(t, err, "inducing inputs Z have 0 values")
	badZ := append([]float64(nil), Z...)
	badZ[7] = math.NaN()
	_, err = sw.Bound(phi, X, y, badZ, g)
	assert.ErrorContains(t, err, "Z[2][1]")
	badX := append([]float64(nil), X...)
	badX[4] = math.Inf(-1)
	_, err = sw.Bound(phi, badX, y, Z, g)
	assert.ErrorContains(t, err, "X[1][1]")
	badY := append([]float64(nil), y...)
	badY[3] = math.NaN()
	_, err = sw.Bound(phi, X, badY, Z, g)
	assert.ErrorContains(t, err, "y[3]")
	badPhi := append([]float64(nil), phi...)
	badPhi[md.NoiseIndex()] = math.Inf(1)
	v, err := sw.Bound(badPhi, X, y, Z, g)
	assert.ErrorContains(t, err, "noise.s[0]")
	assert.True(t, math.IsNaN(v))
	for _, s := range []float64{0, -1, math.Inf(1), math.NaN()} {
		_, err = sw.TemperedBound(phi, X, y, Z, s, g)
		assert.ErrorContains(t, err, "scale")
	}

	// Duplicate inducing inputs: K_uu is singular, the jitter ladder
	// rescues it and the bound stays below the exact LML.
	dup := append(append([]float64(nil), Z...), Z[:md.D]...)
	f, err := sw.Bound(phi, X, y, dup, g)
	require.NoError(t, err)
	assert.Greater(t, sw.Jitter(), 0.0)
	ex, _ := NewWorkspace(md, nil)
	lml, _ := ex.LML(phi, X, y, nil)
	assert.Less(t, f, lml)
	assert.InEpsilon(t, refSparseBound(md, phi, X, y, dup, 1, sw.Jitter()), f, 1e-8)
	// A ladder too small to help: the typed error, naming M and σ.
	sw.SetJitterLadder([]float64{1e-300})
	_, err = sw.Bound(phi, X, y, dup, g)
	require.Error(t, err)
	assert.True(t, errors.Is(err, cholesky.ErrNotPositiveDefinite))
	assert.ErrorContains(t, err, "K_uu (M=6, σ=")
	sw.SetJitterLadder(nil)
	_, err = sw.Bound(phi, X, y, dup, g)
	require.NoError(t, err)

	// Finite φ whose features overflow: an error, not a NaN.
	huge := append([]float64(nil), phi...)
	for _, b := range md.Layout() {
		if b.Name == "kernel.W1" {
			for i := 0; i < b.Size(); i++ {
				huge[b.Offset+i] = 1e308
			}
		}
	}
	v, err = sw.Bound(huge, X, y, Z, g)
	assert.Error(t, err)
	assert.True(t, math.IsNaN(v))

	sw.Close()
	sw.Close() // idempotent
	_, err = sw.Bound(phi, X, y, Z, g)
	assert.ErrorContains(t, err, "closed")
	_, err = NewSparseWorkspace(Model{}, SparseOptions{})
	assert.Error(t, err)
}

// M > m is allowed (a mini-batch smaller than the inducing set): the bound
// is then still a lower bound, and the exact LML when K_uu is exact.
func TestSparseMoreInducingThanRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 37))
	md := testModels[3]
	phi, X, y := testProblem(rng, md, 6, 0.5)
	Z := randomRows(rng, 15, md.D)
	sw, _ := NewSparseWorkspace(md, SparseOptions{})
	f, err := sw.Bound(phi, X, y, Z, nil)
	require.NoError(t, err)
	ex, _ := NewWorkspace(md, nil)
	lml, _ := ex.LML(phi, X, y, nil)
	assert.LessOrEqual(t, f, lml)
	assert.InEpsilon(t, refSparseBound(md, phi, X, y, Z, 1, sw.Jitter()), f, 1e-8)
}

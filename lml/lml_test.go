package lml

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacpfl/pacpfl/cholesky"
	"github.com/pacpfl/pacpfl/linalg"
)

func TestLayout(t *testing.T) {
	md := DefaultModel(15)
	blocks := md.Layout()
	names := []string{
		"mean.W0", "mean.b0", "mean.W1", "mean.b1", "mean.W2", "mean.b2",
		"kernel.W0", "kernel.b0", "kernel.W1", "kernel.b1", "kernel.W2", "kernel.b2",
		"noise.s",
	}
	shapes := [][]int{
		{32, 15}, {32}, {32, 32}, {32}, {1, 32}, {1},
		{32, 15}, {32}, {32, 32}, {32}, {2, 32}, {2},
		{1},
	}
	require.Len(t, blocks, len(names))
	off := 0
	for i, b := range blocks {
		assert.Equal(t, names[i], b.Name)
		assert.Equal(t, shapes[i], b.Shape)
		assert.Equal(t, off, b.Offset, b.Name)
		off += b.Size()
	}
	assert.Equal(t, off, md.NumParams())
	// 15·32+32 + 32·32+32 + 32+1 = 1601 for the mean, 1634 for the kernel.
	assert.Equal(t, 1601+1634+1, md.NumParams())
	assert.Equal(t, md.NumParams()-1, md.NoiseIndex())

	lin := Model{D: 3, DF: 1}
	assert.Equal(t, 4+4+1, lin.NumParams())
	assert.Equal(t, []Block{
		{"mean.W0", []int{1, 3}, 0}, {"mean.b0", []int{1}, 3},
		{"kernel.W0", []int{1, 3}, 4}, {"kernel.b0", []int{1}, 7},
		{"noise.s", []int{1}, 8},
	}, lin.Layout())

	mu := md.HyperPriorMean()
	assert.InDelta(t, 0.4, softplus(mu[len(mu)-1]), 1e-15)
	for _, v := range mu[:len(mu)-1] {
		assert.Equal(t, 0.0, v)
	}

	for _, bad := range []Model{{D: 0, DF: 2}, {D: 2, DF: 0}, {D: 2, DF: 2, MeanHidden: []int{0}},
		{D: 2, DF: 2, KernelHidden: []int{3, -1}}} {
		assert.Error(t, bad.Validate())
		_, err := NewWorkspace(bad, nil)
		assert.Error(t, err)
	}
}

func TestSoftplusSigmoid(t *testing.T) {
	for _, x := range []float64{-800, -40, -1, 0, 0.3, 5, 40, 800} {
		want := math.Log1p(math.Exp(x))
		if x > 30 {
			want = x
		}
		assert.InDelta(t, want, softplus(x), 1e-14*math.Max(1, math.Abs(want)))
		assert.InDelta(t, 1/(1+math.Exp(-x)), sigmoid(x), 1e-16)
		assert.False(t, math.IsNaN(sigmoid(x)) || math.IsNaN(softplus(x)))
	}
	assert.Equal(t, MinNoiseStd, NoiseStd(-1000))
}

var testModels = []Model{
	{D: 3, DF: 2, MeanHidden: []int{5, 4}, KernelHidden: []int{6}},
	{D: 1, DF: 1}, // linear networks
	{D: 4, DF: 3, KernelHidden: []int{3, 3, 2}}, // linear mean, deep kernel
	{D: 2, DF: 2, MeanHidden: []int{7}, KernelHidden: nil},
}

func TestLMLMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for mi, md := range append(testModels, DefaultModel(15)) {
		ws, err := NewWorkspace(md, nil)
		require.NoError(t, err)
		for _, m := range []int{1, 2, 5, 37, 100} {
			phi, X, y := testProblem(rng, md, m, 0.5)
			got, err := ws.LML(phi, X, y, nil)
			require.NoError(t, err)
			want := refLML(md, phi, X, y, 1)
			assert.InEpsilon(t, want, got, 1e-10, "model %d m=%d", mi, m)
			// With the gradient requested the value is the same.
			g := make([]float64, md.NumParams())
			got2, err := ws.LML(phi, X, y, g)
			require.NoError(t, err)
			assert.Equal(t, got, got2)

			for _, sc := range []float64{1.5, 4} {
				got, err := ws.TemperedLML(phi, X, y, sc, nil)
				require.NoError(t, err)
				assert.InEpsilon(t, refLML(md, phi, X, y, sc), got, 1e-10, "tempered model %d m=%d", mi, m)
			}
		}
	}
}

func checkGradient(t *testing.T, md Model, m int, scale float64, seed uint64, coords []int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	ws, err := NewWorkspace(md, nil)
	require.NoError(t, err)
	phi, X, y := testProblem(rng, md, m, 0.5)
	g := make([]float64, md.NumParams())
	_, err = ws.TemperedLML(phi, X, y, scale, g)
	require.NoError(t, err)
	f := func(p []float64) float64 {
		v, err := ws.TemperedLML(p, X, y, scale, nil)
		require.NoError(t, err)
		return v
	}
	if coords == nil {
		for i := range phi {
			coords = append(coords, i)
		}
	}
	var got, fd []float64
	for _, i := range coords {
		got = append(got, g[i])
		fd = append(fd, fdGrad(t, f, phi, i))
	}
	e := relErr(got, fd)
	assert.LessOrEqual(t, e, 1e-6, "m=%d scale=%v: relative gradient error %.3g", m, scale, e)
	// The noise entry is always checked and must be non-trivial for the
	// test to mean something.
	ni := md.NoiseIndex()
	assert.InDelta(t, fdGrad(t, f, phi, ni), g[ni], 1e-6*math.Max(1, math.Abs(g[ni])), "noise gradient")
}

func TestGradientFiniteDifferences(t *testing.T) {
	for _, m := range []int{1, 5, 37, 100} {
		for mi, md := range testModels {
			checkGradient(t, md, m, 1, uint64(10*m+mi), nil)
		}
	}
}

func TestTemperedGradientFiniteDifferences(t *testing.T) {
	for _, m := range []int{1, 5, 37, 100} {
		checkGradient(t, testModels[0], m, 3.7, uint64(m), nil)
		checkGradient(t, testModels[2], m, 1.25, uint64(m+1), nil)
	}
}

func TestGradientDefaultModelSampled(t *testing.T) {
	// The full-size model: a spread of coordinates from every block.
	md := DefaultModel(15)
	var coords []int
	for _, b := range md.Layout() {
		for _, j := range []int{0, b.Size() / 2, b.Size() - 1} {
			coords = append(coords, b.Offset+j)
		}
	}
	m := 60
	if testing.Short() {
		m = 20
	}
	checkGradient(t, md, m, 1, 99, coords)
}

// Widths whose parameter count overflows an int make NewWorkspace and
// NewEvaluator return an error, not panic in makeslice.
func TestModelTooLarge(t *testing.T) {
	huge := Model{D: 1, DF: 1, MeanHidden: []int{1 << 40, 1 << 40}, KernelHidden: []int{1}}
	assert.ErrorContains(t, huge.Validate(), "too many")
	assert.NotPanics(t, func() {
		_, err := NewWorkspace(huge, nil)
		assert.Error(t, err)
		_, err = NewEvaluator(huge, EvaluatorOptions{Threads: 1})
		assert.Error(t, err)
	})
	assert.NoError(t, DefaultModel(15).Validate())
}

func TestDataAndParamErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	md := testModels[0]
	ws, _ := NewWorkspace(md, nil)
	phi, X, y := testProblem(rng, md, 6, 0.5)
	g := make([]float64, md.NumParams())

	_, err := ws.LML(phi[:len(phi)-1], X, y, nil)
	assert.ErrorContains(t, err, "φ has")
	_, err = ws.LML(phi, X[:len(X)-1], y, nil)
	assert.ErrorContains(t, err, "X has")
	_, err = ws.LML(phi, X, nil, nil)
	assert.ErrorContains(t, err, "no data")
	_, err = ws.LML(phi, X, y, g[:3])
	assert.ErrorContains(t, err, "gradient buffer")

	bad := append([]float64(nil), X...)
	bad[7] = math.Inf(1)
	_, err = ws.LML(phi, bad, y, nil)
	assert.ErrorContains(t, err, "X[2][1]")
	badY := append([]float64(nil), y...)
	badY[4] = math.NaN()
	_, err = ws.LML(phi, X, badY, nil)
	assert.ErrorContains(t, err, "y[4]")
	badPhi := append([]float64(nil), phi...)
	badPhi[md.NoiseIndex()] = math.NaN()
	v, err := ws.LML(badPhi, X, y, g)
	assert.ErrorContains(t, err, "noise.s[0]")
	assert.True(t, math.IsNaN(v))
	badPhi = append([]float64(nil), phi...)
	badPhi[16] = math.NaN()
	_, err = ws.LML(badPhi, X, y, g)
	assert.ErrorContains(t, err, "mean.b0[1]")

	_, err = ws.TemperedLML(phi, X, y, 0, nil)
	assert.ErrorContains(t, err, "scale")
	_, err = ws.TemperedLML(phi, X, y, math.Inf(1), nil)
	assert.ErrorContains(t, err, "scale")

	// Finite φ whose kernel features overflow: an error, not a NaN.
	huge := append([]float64(nil), phi...)
	for _, b := range md.Layout() {
		if strings.HasPrefix(b.Name, "kernel.W1") {
			for i := 0; i < b.Size(); i++ {
				huge[b.Offset+i] = 1e308
			}
		}
	}
	v, err = ws.LML(huge, X, y, g)
	assert.Error(t, err)
	assert.True(t, math.IsNaN(v))
	t.Log(err)
}

func TestIllConditionedHandled(t *testing.T) {
	// Every input row duplicated, σ at its floor: K + σ²I is nearly
	// singular but must still give finite values that agree with gonum.
	rng := rand.New(rand.NewPCG(4, 4))
	md := testModels[0]
	ws, _ := NewWorkspace(md, nil)
	phi, X, y := testProblem(rng, md, 20, 0.5)
	for j := 1; j < 20; j += 2 {
		copy(X[j*md.D:(j+1)*md.D], X[(j-1)*md.D:j*md.D])
	}
	phi[md.NoiseIndex()] = -40 // σ = 1e-3 + 4e-18
	g := make([]float64, md.NumParams())
	v, err := ws.LML(phi, X, y, g)
	require.NoError(t, err)
	assert.False(t, math.IsNaN(v) || math.IsInf(v, 0))
	for _, x := range g {
		require.False(t, math.IsNaN(x) || math.IsInf(x, 0))
	}
	assert.InEpsilon(t, refLML(md, phi, X, y, 1), v, 1e-6)
}

func TestJitterLadder(t *testing.T) {
	// Duplicate features and no noise: K is exactly singular, so the plain
	// factorization fails and the jitter ladder must rescue it.
	md := Model{D: 1, DF: 1}
	ws, _ := NewWorkspace(md, nil)
	ws.ensure(4)
	F := []float64{0.3, 0.3, -1, 0.3}
	require.NoError(t, ws.factor(F, 4, 0, 0))
	assert.Greater(t, ws.Jitter(), 0.0)
	// A ladder too small to help: the typed error, saying what failed.
	ws.SetJitterLadder([]float64{1e-300})
	err := ws.factor(F, 4, 0, 0)
	require.Error(t, err)
	assert.True(t, errors.Is(err, cholesky.ErrNotPositiveDefinite))
	var npd *cholesky.NotPDError
	require.True(t, errors.As(err, &npd))
	assert.Contains(t, err.Error(), "not positive definite even with jitter")
	ws.SetJitterLadder(nil) // back to the default
	require.NoError(t, ws.factor(F, 4, 0, 0))
}

func TestEvaluatorMatchesWorkspace(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	md := testModels[0]
	np := md.NumParams()
	ws, _ := NewWorkspace(md, nil)
	for _, split := range []Split{SplitAuto, SplitParticles, SplitBLAS} {
		for _, threads := range []int{1, 2, 3} {
			ev, err := NewEvaluator(md, EvaluatorOptions{Threads: threads, Split: split, Crossover: 8})
			require.NoError(t, err)
			for _, k := range []int{1, 2, 3, 5} {
				for _, m := range []int{3, 40} {
					_, X, y := testProblem(rng, md, m, 0.5)
					phis := make([]float64, k*np)
					for κ := 0; κ < k; κ++ {
						p, _, _ := testProblem(rng, md, 1, 0.5)
						copy(phis[κ*np:], p)
					}
					lmls := make([]float64, k)
					grads := make([]float64, k*np)
					require.NoError(t, ev.Evaluate(lmls, grads, phis, X, y))
					lmls2 := make([]float64, k)
					require.NoError(t, ev.EvaluateTempered(lmls2, nil, phis, X, y, 2))
					g := make([]float64, np)
					for κ := 0; κ < k; κ++ {
						want, err := ws.LML(phis[κ*np:(κ+1)*np], X, y, g)
						require.NoError(t, err)
						assert.InEpsilon(t, want, lmls[κ], 1e-12, "split %v threads %d k %d", split, threads, k)
						assert.LessOrEqual(t, relErr(grads[κ*np:(κ+1)*np], g), 1e-11)
						wt, _ := ws.TemperedLML(phis[κ*np:(κ+1)*np], X, y, 2, nil)
						assert.InEpsilon(t, wt, lmls2[κ], 1e-12)
					}
				}
			}
		}
	}
}

func TestEvaluatorErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	md := testModels[0]
	np := md.NumParams()
	ev, err := NewEvaluator(md, EvaluatorOptions{Threads: 2})
	require.NoError(t, err)
	_, X, y := testProblem(rng, md, 5, 0.5)
	phis := make([]float64, 3*np)
	for κ := 0; κ < 3; κ++ {
		p, _, _ := testProblem(rng, md, 1, 0.5)
		copy(phis[κ*np:], p)
	}
	lmls := make([]float64, 3)
	assert.ErrorContains(t, ev.Evaluate(nil, nil, phis, X, y), "no particles")
	assert.ErrorContains(t, ev.Evaluate(lmls, nil, phis[1:], X, y), "particle matrix")
	assert.ErrorContains(t, ev.Evaluate(lmls, make([]float64, 2), phis, X, y), "gradient matrix")
	assert.ErrorContains(t, ev.Evaluate(lmls, nil, phis, X[1:], y), "X has")
	assert.ErrorContains(t, ev.EvaluateTempered(lmls, nil, phis, X, y, -1), "scale")
	phis[2*np+4] = math.NaN()
	err = ev.Evaluate(lmls, nil, phis, X, y)
	assert.ErrorContains(t, err, "particle 2")
	ev.Close()
	ev.Close() // idempotent
	assert.ErrorContains(t, ev.Evaluate(lmls, nil, phis, X, y), "closed")
	fresh, _ := NewEvaluator(md, EvaluatorOptions{Threads: 2})
	fresh.Close() // before any worker started
	assert.Error(t, fresh.Evaluate(lmls, nil, phis, X, y))

	_, err = NewEvaluator(md, EvaluatorOptions{Split: Split(9)})
	assert.Error(t, err)
	_, err = NewEvaluator(Model{}, EvaluatorOptions{})
	assert.Error(t, err)

	s, err := ParseSplit("blas")
	assert.NoError(t, err)
	assert.Equal(t, SplitBLAS, s)
	_, err = ParseSplit("nope")
	assert.Error(t, err)
}

func TestNoAllocationsInSteadyState(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	md := testModels[0]
	np := md.NumParams()
	ws, _ := NewWorkspace(md, linalg.NewNative(1))
	phi, X, y := testProblem(rng, md, 50, 0.5)
	g := make([]float64, np)
	_, err := ws.LML(phi, X, y, g)
	require.NoError(t, err)
	assert.Equal(t, 0.0, testing.AllocsPerRun(5, func() { _, _ = ws.LML(phi, X, y, g) }), "Workspace.LML")
	assert.Equal(t, 0.0, testing.AllocsPerRun(5, func() { _, _ = ws.TemperedLML(phi, X, y, 2, g) }),
		"Workspace.TemperedLML")

	const k = 4
	phis := make([]float64, k*np)
	for κ := 0; κ < k; κ++ {
		copy(phis[κ*np:], phi)
		phis[κ*np] += float64(κ) * 0.1
	}
	lmls := make([]float64, k)
	grads := make([]float64, k*np)
	for _, split := range []Split{SplitAuto, SplitParticles, SplitBLAS} {
		ev, _ := NewEvaluator(md, EvaluatorOptions{Threads: 2, Split: split})
		require.NoError(t, ev.Evaluate(lmls, grads, phis, X, y))
		assert.Equal(t, 0.0, testing.AllocsPerRun(5, func() { _ = ev.Evaluate(lmls, grads, phis, X, y) }),
			"Evaluator %v", split)
	}
}

func TestAutoSplitThreads(t *testing.T) {
	p := &pool{threads: 2, split: SplitAuto, crossover: 100}
	set := func(k, m int) {
		p.lmls = make([]float64, k)
		p.y = make([]float64, m)
		p.nw = min(k, p.threads)
	}
	set(3, 100) // particles 0, 1 together; 2 alone with both cores
	assert.Equal(t, []int{1, 1, 2}, []int{p.threadsFor(0), p.threadsFor(1), p.threadsFor(2)})
	set(1, 500)
	assert.Equal(t, 2, p.threadsFor(0))
	set(1, 99) // below the crossover threads do not pay
	assert.Equal(t, 1, p.threadsFor(0))
	set(4, 5000)
	for κ := 0; κ < 4; κ++ {
		assert.Equal(t, 1, p.threadsFor(κ))
	}
	p.split = SplitBLAS
	assert.Equal(t, 2, p.threadsFor(3))
	p.split = SplitParticles
	set(1, 5000)
	assert.Equal(t, 1, p.threadsFor(0))
}

package lml

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPredictorMatchesTextbook(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 21))
	for mi, md := range testModels {
		np := md.NumParams()
		const k, m, n = 3, 30, 7
		_, X, y := testProblem(rng, md, m, 0.5)
		_, Xs, _ := testProblem(rng, md, n, 0.5)
		phis := make([]float64, k*np)
		for κ := 0; κ < k; κ++ {
			p, _, _ := testProblem(rng, md, 1, 0.5)
			copy(phis[κ*np:], p)
		}
		pr, err := NewPredictor(md, nil)
		require.NoError(t, err)
		var mix Mixture
		assert.ErrorContains(t, pr.Predict(Xs, &mix), "before a successful Fit")
		require.NoError(t, pr.Fit(phis, X, y))

		refL := make([]float64, k)
		for κ := 0; κ < k; κ++ {
			refL[κ] = refLML(md, phis[κ*np:(κ+1)*np], X, y, 1)
			assert.InEpsilon(t, refL[κ], pr.LMLs()[κ], 1e-10)
		}
		// α = softmax(LML), summing to 1.
		var mx, sum, wsum float64 = math.Inf(-1), 0, 0
		for _, v := range refL {
			mx = math.Max(mx, v)
		}
		for _, v := range refL {
			sum += math.Exp(v - mx)
		}
		for κ, a := range pr.Weights() {
			assert.InDelta(t, math.Exp(refL[κ]-mx)/sum, a, 1e-10)
			wsum += a
		}
		assert.InDelta(t, 1, wsum, 1e-14)

		require.NoError(t, pr.Predict(Xs, &mix))
		require.Equal(t, n, mix.N)
		require.Equal(t, k, mix.K)
		for κ := 0; κ < k; κ++ {
			mu, va := refPredict(md, phis[κ*np:(κ+1)*np], X, y, Xs)
			for i := 0; i < n; i++ {
				assert.InDelta(t, mu[i], mix.Means[i*k+κ], 1e-9*(1+math.Abs(mu[i])), "model %d mean", mi)
				assert.InDelta(t, va[i], mix.Vars[i*k+κ], 1e-9*(1+va[i]), "model %d var", mi)
			}
		}
		for i := 0; i < n; i++ {
			var mean, second float64
			for κ, a := range mix.Weights {
				mu, v := mix.Means[i*k+κ], mix.Vars[i*k+κ]
				mean += a * mu
				second += a * (v + mu*mu)
			}
			assert.InDelta(t, mean, mix.Mean(i), 1e-12*(1+math.Abs(mean)))
			assert.InDelta(t, second-mean*mean, mix.Variance(i), 1e-10*(1+second))
		}
		// Refit with other data reuses the buffers and changes the answer.
		_, X2, y2 := testProblem(rng, md, m, 0.5)
		require.NoError(t, pr.Fit(phis, X2, y2))
		before := append([]float64(nil), mix.Means...)
		require.NoError(t, pr.Predict(Xs, &mix))
		assert.NotEqual(t, before, mix.Means)
	}
}

// The tempered fit: weights from the tempered LML of the training objective
// (Workspace.TemperedLML), the posterior under noise σ²/scale, predictions
// with the untempered observation noise; scale 1 is Fit exactly.
func TestPredictorTempered(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 23))
	md := testModels[0]
	np := md.NumParams()
	const k, m, n = 2, 12, 5
	_, X, y := testProblem(rng, md, m, 0.5)
	_, Xs, _ := testProblem(rng, md, n, 0.5)
	phis := make([]float64, k*np)
	for κ := 0; κ < k; κ++ {
		p, _, _ := testProblem(rng, md, 1, 0.5)
		copy(phis[κ*np:], p)
	}
	pr, err := NewPredictor(md, nil)
	require.NoError(t, err)
	ws, err := NewWorkspace(md, nil)
	require.NoError(t, err)
	var mix Mixture
	for _, scale := range []float64{0.3, 1, 2.5} {
		require.NoError(t, pr.FitTempered(phis, X, y, scale))
		require.NoError(t, pr.Predict(Xs, &mix))
		for κ := 0; κ < k; κ++ {
			phi := phis[κ*np : (κ+1)*np]
			want, err := ws.TemperedLML(phi, X, y, scale, nil)
			require.NoError(t, err)
			assert.InEpsilon(t, want, pr.LMLs()[κ], 1e-10, "scale %v", scale)
			assert.InEpsilon(t, refLML(md, phi, X, y, scale), pr.LMLs()[κ], 1e-10, "scale %v", scale)
			mu, va := refPredictTempered(md, phi, X, y, Xs, scale)
			for i := 0; i < n; i++ {
				assert.InDelta(t, mu[i], mix.Means[i*k+κ], 1e-9*(1+math.Abs(mu[i])), "scale %v mean", scale)
				assert.InDelta(t, va[i], mix.Vars[i*k+κ], 1e-9*(1+va[i]), "scale %v var", scale)
			}
		}
	}
	assert.Error(t, pr.FitTempered(phis, X, y, 0))
	assert.Error(t, pr.FitTempered(phis, X, y, math.NaN()))
}

func TestMixtureCDF(t *testing.T) {
	mix := Mixture{N: 1, K: 3,
		Weights: []float64{0.2, 0.5, 0.3},
		Means:   []float64{-2, 0.5, 3},
		Vars:    []float64{0.25, 1, 0.04},
	}
	prev := -1.0
	for y := -12.0; y <= 12; y += 0.01 {
		c := mix.CDF(0, y)
		require.GreaterOrEqual(t, c, prev, "CDF decreasing at %v", y)
		require.GreaterOrEqual(t, c, 0.0)
		require.LessOrEqual(t, c, 1.0)
		prev = c
		// dCDF/dy = density.
		const h = 1e-5
		d := (mix.CDF(0, y+h) - mix.CDF(0, y-h)) / (2 * h)
		require.InDelta(t, math.Exp(mix.LogPDF(0, y)), d, 1e-6)
	}
	assert.InDelta(t, 0, mix.CDF(0, -50), 1e-15)
	assert.Equal(t, 1.0, mix.CDF(0, 50))
	// At each component's own mean with a single component: 1/2.
	one := Mixture{N: 1, K: 1, Weights: []float64{1}, Means: []float64{1.5}, Vars: []float64{4}}
	assert.InDelta(t, 0.5, one.CDF(0, 1.5), 1e-16)
	assert.InDelta(t, -0.5*math.Log(2*math.Pi*4), one.LogPDF(0, 1.5), 1e-14)
	assert.InDelta(t, 4, one.Variance(0), 1e-15)
}

func TestMixtureWeights(t *testing.T) {
	w := make([]float64, 3)
	require.NoError(t, MixtureWeights(w, []float64{-1000, -1001, math.Inf(-1)}))
	e := math.Exp(-1)
	assert.InDelta(t, 1/(1+e), w[0], 1e-15)
	assert.InDelta(t, e/(1+e), w[1], 1e-15)
	assert.Equal(t, 0.0, w[2])
	// Huge LMLs do not overflow.
	require.NoError(t, MixtureWeights(w, []float64{1e5, 1e5, 1e5}))
	for _, v := range w {
		assert.InDelta(t, 1.0/3, v, 1e-15)
	}
	assert.Error(t, MixtureWeights(w, []float64{0, math.NaN(), 1}))
	assert.Error(t, MixtureWeights(w, []float64{0, math.Inf(1), 1}))
	assert.Error(t, MixtureWeights(w, []float64{math.Inf(-1), math.Inf(-1)}))
	assert.Error(t, MixtureWeights(w[:1], []float64{0, 1}))
}

func TestPredictorErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 22))
	md := testModels[0]
	np := md.NumParams()
	pr, _ := NewPredictor(md, nil)
	phi, X, y := testProblem(rng, md, 5, 0.5)
	assert.ErrorContains(t, pr.Fit(phi[1:], X, y), "particle matrix")
	assert.Error(t, pr.Fit(phi, X[1:], y))
	two := append(append([]float64(nil), phi...), phi...)
	two[np+3] = math.Inf(-1)
	assert.ErrorContains(t, pr.Fit(two, X, y), "particle 1")
	require.NoError(t, pr.Fit(phi, X, y))
	var mix Mixture
	assert.ErrorContains(t, pr.Predict(X[1:], &mix), "multiple of D")
	bad := append([]float64(nil), X...)
	bad[2] = math.NaN()
	assert.ErrorContains(t, pr.Predict(bad, &mix), "X[0][2]")
	_, err := NewPredictor(Model{}, nil)
	assert.Error(t, err)
}

func TestPredictChunksAndReuse(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 23))
	md := testModels[0]
	np := md.NumParams()
	const k, m, n = 2, 25, 3*predictChunk + 17
	_, X, y := testProblem(rng, md, m, 0.5)
	_, Xs, _ := testProblem(rng, md, n, 0.5)
	phis := make([]float64, k*np)
	for κ := 0; κ < k; κ++ {
		p, _, _ := testProblem(rng, md, 1, 0.5)
		copy(phis[κ*np:], p)
	}
	pr, _ := NewPredictor(md, nil)
	require.NoError(t, pr.Fit(phis, X, y))
	var all, one Mixture
	require.NoError(t, pr.Predict(Xs, &all))
	for _, i := range []int{0, predictChunk - 1, predictChunk, 2*predictChunk + 5, n - 1} {
		require.NoError(t, pr.Predict(Xs[i*md.D:(i+1)*md.D], &one))
		for κ := 0; κ < k; κ++ {
			assert.InDelta(t, one.Means[κ], all.Means[i*k+κ], 1e-12, "point %d", i)
			assert.InDelta(t, one.Vars[κ], all.Vars[i*k+κ], 1e-12, "point %d", i)
		}
		mu, va := refPredict(md, phis[:np], X, y, Xs[i*md.D:(i+1)*md.D])
		assert.InDelta(t, mu[0], all.Means[i*k], 1e-9)
		assert.InDelta(t, va[0], all.Vars[i*k], 1e-9)
	}
	require.NoError(t, pr.Predict(Xs, &all))
	assert.Equal(t, 0.0, testing.AllocsPerRun(3, func() { _ = pr.Predict(Xs, &all) }), "Predict")
}

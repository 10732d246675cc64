package lml

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// (g) The sparse predictive: with Z = X the exact GP's (Predictor),
// otherwise the dense SGPR formulas; weights from the bounds.
func TestSparsePredictor(t *testing.T) {
	rng := rand.New(rand.NewPCG(38, 38))
	withTile(t, 8)
	for mi, md := range testModels {
		np := md.NumParams()
		const k, m, n = 3, 40, 29
		_, X, y := testProblem(rng, md, m, 0.5)
		Xs := randomRows(rng, n, md.D)
		phis := make([]float64, k*np)
		for κ := 0; κ < k; κ++ {
			p, _, _ := testProblem(rng, md, 1, 0.5)
			wellConditioned(t, md, p, X, 1e4)
			copy(phis[κ*np:], p)
		}
		sp, err := NewSparsePredictor(md, SparseOptions{Threads: 2, Chunk: 16})
		require.NoError(t, err)
		var mix, exact Mixture
		assert.ErrorContains(t, sp.Predict(Xs, &mix), "before a successful Fit")
		pr, _ := NewPredictor(md, nil)
		for _, scale := range []float64{1, 2.5} {
			// Z = X: the exact GP.
			require.NoError(t, sp.FitTempered(phis, X, y, X, scale))
			require.NoError(t, pr.FitTempered(phis, X, y, scale))
			require.NoError(t, sp.Predict(Xs, &mix))
			require.NoError(t, pr.Predict(Xs, &exact))
			for κ := 0; κ < k; κ++ {
				require.Equal(t, 0.0, sp.Jitter(κ))
				assert.InEpsilon(t, pr.LMLs()[κ], sp.Bounds()[κ], 1e-8)
				assert.InDelta(t, pr.Weights()[κ], sp.Weights()[κ], 1e-8)
			}
			for i := 0; i < n*k; i++ {
				assert.InDelta(t, exact.Means[i], mix.Means[i], 1e-8*(1+math.Abs(exact.Means[i])),
					"model %d scale %v mean %d", mi, scale, i)
				assert.InDelta(t, exact.Vars[i], mix.Vars[i], 1e-8*(1+exact.Vars[i]), "model %d scale %v var %d", mi,
					scale, i)
			}
			// M < m: the dense SGPR predictive.
			Z, err := SelectInducing(X, md.D, 11, uint64(mi))
			require.NoError(t, err)
			require.NoError(t, sp.FitTempered(phis, X, y, Z, scale))
			require.NoError(t, sp.Predict(Xs, &mix))
			for κ := 0; κ < k; κ++ {
				phi := phis[κ*np : (κ+1)*np]
				assert.InEpsilon(t, refSparseBound(md, phi, X, y, Z, scale, sp.Jitter(κ)), sp.Bounds()[κ], 1e-9)
				mu, va := refSparsePredict(md, phi, X, y, Z, Xs, scale, sp.Jitter(κ))
				for i := 0; i < n; i++ {
					assert.InDelta(t, mu[i], mix.Means[i*k+κ], 1e-8*(1+math.Abs(mu[i])), "model %d scale %v mean", mi,
						scale)
					assert.InDelta(t, va[i], mix.Vars[i*k+κ], 1e-8*(1+va[i]), "model %d scale %v var", mi, scale)
				}
			}
			w := make([]float64, k)
			require.NoError(t, MixtureWeights(w, sp.Bounds()))
			assert.Equal(t, w, sp.Weights())
		}
		// Bad input.
		assert.ErrorContains(t, sp.Fit(phis[1:], X, y, X), "particle matrix")
		bad := append([]float64(nil), phis...)
		bad[np+2] = math.NaN()
		assert.ErrorContains(t, sp.Fit(bad, X, y, X), "particle 1: lml: φ[2]")
		assert.ErrorContains(t, sp.Predict(Xs, &mix), "before a successful Fit")
		require.NoError(t, sp.Fit(phis, X, y, X))
		if md.D > 1 {
			assert.ErrorContains(t, sp.Predict(Xs[1:], &mix), "multiple of D")
		}
		badXs := append([]float64(nil), Xs...)
		badXs[md.D] = math.Inf(1)
		assert.ErrorContains(t, sp.Predict(badXs, &mix), "X[1][0]")
		assert.Error(t, sp.FitTempered(phis, X, y, X, 0))
		sp.Close()
		assert.ErrorContains(t, sp.Predict(Xs, &mix), "closed")
	}
}

// The predictions do not depend on the number of threads, and a test
// point predicted alone is predicted as among many.
func TestSparsePredictorThreads(t *testing.T) {
	rng := rand.New(rand.NewPCG(39, 39))
	md := testModels[0]
	np := md.NumParams()
	_, X, y := testProblem(rng, md, 500, 0.5)
	Z, err := SelectInducing(X, md.D, 30, 1)
	require.NoError(t, err)
	phis := make([]float64, 2*np)
	for κ := 0; κ < 2; κ++ {
		p, _, _ := testProblem(rng, md, 1, 0.5)
		copy(phis[κ*np:], p)
	}
	Xs := randomRows(rng, 600, md.D)
	var ref Mixture
	for i, th := range []int{1, 2, 3} {
		sp, err := NewSparsePredictor(md, SparseOptions{Threads: th})
		require.NoError(t, err)
		require.NoError(t, sp.Fit(phis, X, y, Z))
		var mix Mixture
		require.NoError(t, sp.Predict(Xs, &mix))
		if i == 0 {
			ref = mix
			// Alone, the point is a one-row tile: the BLAS calls differ,
			// hence the rounding.
			var one Mixture
			require.NoError(t, sp.Predict(Xs[300*md.D:301*md.D], &one))
			for κ := 0; κ < 2; κ++ {
				assert.InDelta(t, mix.Means[600+κ], one.Means[κ], 1e-12)
				assert.InDelta(t, mix.Vars[600+κ], one.Vars[κ], 1e-12)
			}
		} else {
			assert.Equal(t, ref.Means, mix.Means, "threads %d", th)
			assert.Equal(t, ref.Vars, mix.Vars, "threads %d", th)
			assert.Equal(t, ref.Weights, mix.Weights, "threads %d", th)
		}
		sp.Close()
	}
}

func TestSparsePredictorNoAllocations(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 36))
	withTile(t, 16)
	md := testModels[0]
	phi, X, y := testProblem(rng, md, 300, 0.5)
	Z := randomRows(rng, 20, md.D)
	for _, th := range []int{1, 2} {
		sp, err := NewSparsePredictor(md, SparseOptions{Threads: th})
		require.NoError(t, err)
		phis := append(append([]float64(nil), phi...), phi...)
		phis[3] += 0.1
		require.NoError(t, sp.Fit(phis, X, y, Z))
		var mix Mixture
		Xs := randomRows(rng, 70, md.D)
		require.NoError(t, sp.Predict(Xs, &mix))
		assert.Equal(t, 0.0, testing.AllocsPerRun(3, func() { _ = sp.Fit(phis, X, y, Z) }),
			"SparsePredictor.Fit, threads %d", th)
		assert.Equal(t, 0.0, testing.AllocsPerRun(3, func() { _ = sp.Predict(Xs, &mix) }),
			"SparsePredictor.Predict, threads %d", th)
		sp.Close()
	}
}

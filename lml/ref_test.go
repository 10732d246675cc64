package lml

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// This file holds an independent, deliberately plain implementation of the
// model: it reads φ in the documented order without using Layout or mlp, and
// does the linear algebra with gonum's mat.

// refNet evaluates an MLP whose parameters start at phi[*off], advancing
// *off past them.
func refNet(phi []float64, off *int, in int, hidden []int, out int, x []float64) []float64 {
	h := append([]float64(nil), x...)
	widths := append(append([]int(nil), hidden...), out)
	for l, w := range widths {
		W := phi[*off : *off+w*in]
		*off += w * in
		b := phi[*off : *off+w]
		*off += w
		next := make([]float64, w)
		for o := 0; o < w; o++ {
			s := b[o]
			for i := 0; i < in; i++ {
				s += W[o*in+i] * h[i]
			}
			if l < len(widths)-1 {
				s = math.Tanh(s)
			}
			next[o] = s
		}
		h = next
		in = w
	}
	return h
}

// refForward returns the mean vector, the features (one row per point) and σ.
func refForward(md Model, phi, X []float64) (mean []float64, F [][]float64, sigma float64) {
	m := len(X) / md.D
	for j := 0; j < m; j++ {
		off := 0
		x := X[j*md.D : (j+1)*md.D]
		mean = append(mean, refNet(phi, &off, md.D, md.MeanHidden, 1, x)[0])
		F = append(F, refNet(phi, &off, md.D, md.KernelHidden, md.DF, x))
		if j == 0 && off != len(phi)-1 {
			panic("reference layout disagrees with the parameter count")
		}
	}
	s := phi[len(phi)-1]
	return mean, F, math.Log1p(math.Exp(s)) + 1e-3
}

func refKernel(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += (a[i] - b[i]) * (a[i] - b[i])
	}
	return math.Exp(-0.5 * s)
}

// refLML is eq. (33) (scale 1) or the tempered batch objective, via
// mat.Cholesky.
func refLML(md Model, phi, X, y []float64, scale float64) float64 {
	mean, F, sigma := refForward(md, phi, X)
	m := len(y)
	A := mat.NewSymDense(m, nil)
	for i := 0; i < m; i++ {
		for j := 0; j <= i; j++ {
			v := refKernel(F[i], F[j])
			if i == j {
				v += sigma * sigma / scale
			}
			A.SetSym(i, j, v)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(A) {
		panic("reference Cholesky failed")
	}
	r := mat.NewVecDense(m, nil)
	for j := range y {
		r.SetVec(j, y[j]-mean[j])
	}
	var v mat.VecDense
	if err := ch.SolveVecTo(&v, r); err != nil {
		panic(err)
	}
	l := -0.5*mat.Dot(r, &v) - 0.5*ch.LogDet() - 0.5*float64(m)*math.Log(2*math.Pi)
	if scale != 1 {
		s2 := sigma * sigma
		l += float64(m) * (0.5*math.Log(2*math.Pi*s2/scale) - 0.5*scale*math.Log(2*math.Pi*s2))
	}
	return l
}

// refPredict returns the textbook predictive mean and variance (noise
// included) of one particle at the test inputs.
func refPredict(md Model, phi, X, y, Xs []float64) (mu, va []float64) {
	return refPredictTempered(md, phi, X, y, Xs, 1)
}

// refPredictTempered conditions on the likelihood raised to the power scale
// (noise variance σ²/scale) and predicts a new target with noise σ².
func refPredictTempered(md Model, phi, X, y, Xs []float64, scale float64) (mu, va []float64) {
	mean, F, sigma := refForward(md, phi, X)
	meanS, Fs, _ := refForward(md, phi, Xs)
	m, n := len(y), len(Xs)/md.D
	A := mat.NewDense(m, m, nil)
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			v := refKernel(F[i], F[j])
			if i == j {
				v += sigma * sigma / scale
			}
			A.Set(i, j, v)
		}
	}
	var Ainv mat.Dense
	if err := Ainv.Inverse(A); err != nil {
		panic(err)
	}
	r := mat.NewVecDense(m, nil)
	for j := range y {
		r.SetVec(j, y[j]-mean[j])
	}
	for i := 0; i < n; i++ {
		ks := mat.NewVecDense(m, nil)
		for j := 0; j < m; j++ {
			ks.SetVec(j, refKernel(Fs[i], F[j]))
		}
		var t mat.VecDense
		t.MulVec(&Ainv, ks)
		mu = append(mu, meanS[i]+mat.Dot(&t, r))
		va = append(va, 1-mat.Dot(&t, ks)+sigma*sigma)
	}
	return mu, va
}

// testProblem draws φ from the default hyper-prior shape (σ_P = scale) and a
// smooth data set.
func testProblem(rng *rand.Rand, md Model, m int, scale float64) (phi, X, y []float64) {
	phi = make([]float64, md.NumParams())
	for i := range phi {
		phi[i] = scale * rng.NormFloat64()
	}
	phi[len(phi)-1] = NoisePriorMean + 0.3*rng.NormFloat64()
	X = make([]float64, m*md.D)
	for i := range X {
		X[i] = rng.NormFloat64()
	}
	y = make([]float64, m)
	for j := range y {
		var s float64
		for c := 0; c < md.D; c++ {
			s += X[j*md.D+c] * float64(c+1) / float64(md.D)
		}
		y[j] = math.Sin(2*s) + 0.1*rng.NormFloat64()
	}
	return phi, X, y
}

func smallModel(d int) Model {
	return Model{D: d, DF: 2, MeanHidden: []int{5, 4}, KernelHidden: []int{6}}
}

// relErr returns max_i |a_i − b_i| / max(1, max_i |b_i|).
func relErr(a, b []float64) float64 {
	var num, den float64 = 0, 1
	for i := range a {
		num = math.Max(num, math.Abs(a[i]-b[i]))
		den = math.Max(den, math.Abs(b[i]))
	}
	return num / den
}

// fdGrad is the five-point central difference of f at phi in coordinate i.
func fdGrad(t *testing.T, f func([]float64) float64, phi []float64, i int) float64 {
	t.Helper()
	h := 1e-3 * math.Max(1, math.Abs(phi[i]))
	p := append([]float64(nil), phi...)
	at := func(d float64) float64 {
		p[i] = phi[i] + d
		return f(p)
	}
	g := (-at(2*h) + 8*at(h) - 8*at(-h) + at(-2*h)) / (12 * h)
	return g
}

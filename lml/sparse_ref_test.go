package lml

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// Dense references for the sparse GP, written from the textbook formulas
// with gonum's mat (m×m matrices: small m only), sharing nothing with the
// streamed implementation but refForward.

// refCross returns K(A, B) for feature rows.
func refCross(Fa, Fb [][]float64) *mat.Dense {
	k := mat.NewDense(len(Fa), len(Fb), nil)
	for i := range Fa {
		for j := range Fb {
			k.Set(i, j, refKernel(Fa[i], Fb[j]))
		}
	}
	return k
}

// refSparseBound is ln N(y | m, Q + vI) − tr(K − Q)/(2v) (+ the tempering
// constant) with Q = VᵀV, V = L⁻¹K_uf, L = chol(K_uu + jitter·I) (the
// numerically stable way to form Q), v = σ²/scale, all dense; it returns
// the bound, or NaN if K_uu + jitter·I is not numerically positive definite.
func refSparseBound(md Model, phi, X, y, Z []float64, scale, jitter float64) float64 {
	mean, F, sigma := refForward(md, phi, X)
	_, Fz, _ := refForward(md, phi, Z)
	m := len(y)
	v := sigma * sigma / scale
	V := refSolveL(Fz, F, jitter)
	if V == nil {
		return math.NaN()
	}
	var q mat.Dense
	q.Mul(V.T(), V)
	A := mat.NewSymDense(m, nil)
	var trQ float64
	for i := 0; i < m; i++ {
		trQ += q.At(i, i)
		for j := 0; j <= i; j++ {
			a := q.At(i, j)
			if i == j {
				a += v
			}
			A.SetSym(i, j, a)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(A) {
		panic("reference Cholesky of Q + vI failed")
	}
	r := mat.NewVecDense(m, nil)
	for j := range y {
		r.SetVec(j, y[j]-mean[j])
	}
	var w mat.VecDense
	if err := ch.SolveVecTo(&w, r); err != nil {
		panic(err)
	}
	fm := float64(m)
	f := -0.5*mat.Dot(r, &w) - 0.5*ch.LogDet() - 0.5*fm*math.Log(2*math.Pi) - (fm-trQ)/(2*v)
	if scale != 1 {
		s2 := sigma * sigma
		f += fm * (0.5*math.Log(2*math.Pi*s2/scale) - 0.5*scale*math.Log(2*math.Pi*s2))
	}
	return f
}

// refSolveL returns L⁻¹K(Fz, F) (M×n) with L the Cholesky factor of
// K(Fz, Fz) + jitter·I, by forward substitution; nil if the factorization
// fails.
func refSolveL(Fz, F [][]float64, jitter float64) *mat.Dense {
	M := len(Fz)
	kuu := mat.NewSymDense(M, nil)
	for i := 0; i < M; i++ {
		for j := 0; j <= i; j++ {
			a := refKernel(Fz[i], Fz[j])
			if i == j {
				a += jitter
			}
			kuu.SetSym(i, j, a)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(kuu) {
		return nil
	}
	var L mat.TriDense
	ch.LTo(&L)
	V := refCross(Fz, F)
	for c := 0; c < len(F); c++ {
		for i := 0; i < M; i++ {
			s := V.At(i, c)
			for k := 0; k < i; k++ {
				s -= L.At(i, k) * V.At(k, c)
			}
			V.Set(i, c, s/L.At(i, i))
		}
	}
	return V
}

// refSparsePredict is the SGPR predictive in its direct form:
// Σ = (K_uu + K_uf K_fu/v)⁻¹, μ* = m(x*) + K_*u Σ K_uf r/v,
// var* = 1 − K_*u K_uu⁻¹ K_u* + K_*u Σ K_u* + σ² (v = σ²/scale).
func refSparsePredict(md Model, phi, X, y, Z, Xs []float64, scale, jitter float64) (mu, va []float64) {
	mean, F, sigma := refForward(md, phi, X)
	_, Fz, _ := refForward(md, phi, Z)
	meanS, Fs, _ := refForward(md, phi, Xs)
	M := len(Fz)
	v := sigma * sigma / scale
	kuu := refCross(Fz, Fz)
	for j := 0; j < M; j++ {
		kuu.Set(j, j, kuu.At(j, j)+jitter)
	}
	kfu := refCross(F, Fz)
	ksu := refCross(Fs, Fz)
	var p mat.Dense
	p.Mul(kfu.T(), kfu)
	p.Scale(1/v, &p)
	p.Add(&p, kuu)
	var sig, kinv mat.Dense
	if err := sig.Inverse(&p); err != nil {
		panic(err)
	}
	if err := kinv.Inverse(kuu); err != nil {
		panic(err)
	}
	r := mat.NewVecDense(len(y), nil)
	for j := range y {
		r.SetVec(j, y[j]-mean[j])
	}
	var b, sb mat.VecDense
	b.MulVec(kfu.T(), r)
	sb.MulVec(&sig, &b)
	for i := range Fs {
		k := ksu.RawRowView(i)
		kv := mat.NewVecDense(M, k)
		var t1, t2 mat.VecDense
		t1.MulVec(&kinv, kv)
		t2.MulVec(&sig, kv)
		mu = append(mu, meanS[i]+mat.Dot(kv, &sb)/v)
		va = append(va, 1-mat.Dot(kv, &t1)+mat.Dot(kv, &t2)+sigma*sigma)
	}
	return mu, va
}

// withTile sets the tile of the sparse workspaces built during the test.
func withTile(t *testing.T, n int) {
	t.Helper()
	old := sparseTile
	sparseTile = n
	t.Cleanup(func() { sparseTile = old })
}

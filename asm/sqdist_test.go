package asm

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// sqdistCase is one shape: m×d a, n×d b, with row strides and a guarded
// m×n destination with row stride ldd (gaps between rows are guards too).
type sqdistCase struct{ m, n, d, lda, ldb, ldd int }

func sqdistCases() []sqdistCase {
	var cs []sqdistCase
	for _, d := range []int{1, 2, 3, 5, 8, 16, 33, 64} {
		for _, mn := range [][2]int{{0, 3}, {3, 0}, {1, 1}, {2, 3}, {5, 7}, {4, 16}, {9, 17}, {3, 33}, {6, 67}} {
			cs = append(cs, sqdistCase{mn[0], mn[1], d, d, d, mn[1]})
			cs = append(cs, sqdistCase{mn[0], mn[1], d, d + 3, d + 1, mn[1] + 2})
		}
	}
	// Every column count 0..70 (each tail mask after each unrolled tier),
	// with an odd and an even number of features.
	for n := 0; n <= 70; n++ {
		cs = append(cs, sqdistCase{2, n, 1, 1, 1, n}, sqdistCase{2, n, 2, 3, 2, n + 1}, sqdistCase{1, n, 3, 3, 3, n})
	}
	// Across several pack blocks (2048/d columns each).
	cs = append(cs, sqdistCase{3, 1100, 2, 2, 2, 1100}, sqdistCase{5, 70, 64, 64, 65, 71},
		sqdistCase{2, 300, 7, 9, 7, 301})
	if !modestSizes() {
		cs = append(cs, sqdistCase{40, 2500, 2, 2, 2, 2500}, sqdistCase{33, 129, 64, 64, 64, 129})
	}
	return cs
}

// naiveSqDist is an independent reference: plain multiply and add.
func naiveSqDist(a, b []float64) float64 {
	var s float64
	for k := range a {
		s += (a[k] - b[k]) * (a[k] - b[k])
	}
	return s
}

func sqdistInputs(rng *rand.Rand, c sqdistCase) (a, b []float64, dst strided) {
	a = make([]float64, max(0, (c.m-1)*c.lda+c.d))
	b = make([]float64, max(0, (c.n-1)*c.ldb+c.d))
	for i := range a {
		a[i] = 2*rng.Float64() - 1
	}
	for i := range b {
		b[i] = 2*rng.Float64() - 1
	}
	size := 0
	if c.m > 0 && c.n > 0 {
		size = (c.m-1)*c.ldd + c.n
	}
	buf := make([]float64, guardLen+size+guardLen)
	for i := range buf {
		buf[i] = guardNaN
	}
	dst = strided{buf: buf, view: buf[guardLen : guardLen+size : guardLen+size], lo: guardLen,
		guard: math.Float64bits(guardNaN)}
	for i := 0; i < c.m; i++ {
		for j := 0; j < c.n; j++ {
			dst.idx = append(dst.idx, i*c.ldd+j)
		}
	}
	return a, b, dst
}

// TestSqDistAndSEKernel: every level equals the generic twin bit for bit,
// writes nothing outside the m×n entries, and the generic twin agrees with
// a naive independent computation.
func TestSqDistAndSEKernel(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(25, 26))
		for _, c := range sqdistCases() {
			a, b, dst := sqdistInputs(rng, c)
			for _, se := range []bool{false, true} {
				want := dst.clone()
				if se {
					SEKernel(dst.view, c.ldd, a, c.lda, b, c.ldb, c.m, c.n, c.d)
					SEKernelGeneric(want.view, c.ldd, a, c.lda, b, c.ldb, c.m, c.n, c.d)
				} else {
					SqDist(dst.view, c.ldd, a, c.lda, b, c.ldb, c.m, c.n, c.d)
					SqDistGeneric(want.view, c.ldd, a, c.lda, b, c.ldb, c.m, c.n, c.d)
				}
				dst.checkGuards(t, "SqDist/SEKernel dst")
				for i := 0; i < c.m; i++ {
					for j := 0; j < c.n; j++ {
						got, w := dst.view[i*c.ldd+j], want.view[i*c.ldd+j]
						if math.Float64bits(got) != math.Float64bits(w) {
							t.Fatalf("%+v se=%v: [%d,%d] = %v, generic %v", c, se, i, j, got, w)
						}
						ref := naiveSqDist(a[i*c.lda:i*c.lda+c.d], b[j*c.ldb:j*c.ldb+c.d])
						if se {
							ref = math.Exp(-0.5 * ref)
						}
						if math.Abs(w-ref) > 1e-14*(1+ref) {
							t.Fatalf("%+v se=%v: generic [%d,%d] = %v, naive %v", c, se, i, j, w, ref)
						}
					}
				}
			}
		}
	})
}

// TestSqDistSymmetric: the GP's typical call, a == b, gives a symmetric
// matrix with a zero (SE: one) diagonal.
func TestSqDistSymmetric(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(27, 28))
		const m = 37
		a := make([]float64, m*2)
		for i := range a {
			a[i] = 3 * rng.NormFloat64()
		}
		k := make([]float64, m*m)
		SEKernel(k, m, a, 2, a, 2, m, m, 2)
		for i := 0; i < m; i++ {
			if k[i*m+i] != 1 {
				t.Fatalf("K[%d,%d] = %v, want 1", i, i, k[i*m+i])
			}
			for j := 0; j < i; j++ {
				if k[i*m+j] != k[j*m+i] {
					t.Fatalf("K not symmetric at %d,%d: %v vs %v", i, j, k[i*m+j], k[j*m+i])
				}
			}
		}
	})
}

func TestSqDistSpecialValues(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		for _, d := range []int{0, 1, 2, 5} {
			for _, sv := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e200} {
				const m, n = 3, 9
				a := make([]float64, m*d)
				b := make([]float64, n*d)
				for i := range a {
					a[i] = float64(i) * 0.1
				}
				for i := range b {
					b[i] = -float64(i) * 0.05
				}
				if d > 0 {
					b[5*d+d-1] = sv
					a[1*d] = -sv
				}
				for _, se := range []bool{false, true} {
					got := make([]float64, m*n)
					want := make([]float64, m*n)
					if se {
						SEKernel(got, n, a, d, b, d, m, n, d)
						SEKernelGeneric(want, n, a, d, b, d, m, n, d)
					} else {
						SqDist(got, n, a, d, b, d, m, n, d)
						SqDistGeneric(want, n, a, d, b, d, m, n, d)
					}
					for i := range got {
						if !sameFloat(got[i], want[i]) {
							t.Fatalf("d=%d special %v se=%v: [%d] = %v, generic %v", d, sv, se, i, got[i], want[i])
						}
					}
					if d == 0 && (se && got[0] != 1 || !se && got[0] != 0) {
						t.Fatalf("d=0 se=%v: %v", se, got[0])
					}
				}
			}
		}
	})
}

func TestSqDistBadShapesPanic(t *testing.T) {
	x := make([]float64, 20)
	cases := map[string]func(){
		"negative": func() { SqDist(x, 2, x, 2, x, 2, -1, 2, 2) },
		"ldd < n":  func() { SqDist(x, 1, x, 2, x, 2, 2, 2, 2) },
		"lda < d":  func() { SEKernel(x, 2, x, 1, x, 2, 2, 2, 2) },
		"ldb < d":  func() { SEKernel(x, 2, x, 2, x, 1, 2, 2, 2) },
		"len(dst)": func() { SqDist(x[:3], 2, x, 2, x, 2, 2, 2, 2) },
		"len(a)":   func() { SqDist(x, 2, x[:3], 2, x, 2, 2, 2, 2) },
		"len(b)":   func() { SEKernel(x, 2, x, 2, x[:3], 2, 2, 2, 2) },
	}
	forEachLevel(t, func(t *testing.T) {
		for name, f := range cases {
			func() {
				defer func() {
					r := recover()
					s, _ := r.(string)
					if !strings.Contains(s, strings.Fields(name)[0]) {
						t.Errorf("%s: panic %v does not name the problem", name, r)
					}
				}()
				f()
			}()
		}
	})
}

func TestSEKernelNoAllocs(t *testing.T) {
	a := make([]float64, 300*2)
	k := make([]float64, 300*300)
	forEachLevel(t, func(t *testing.T) {
		if n := testing.AllocsPerRun(5, func() { SEKernel(k, 300, a, 2, a, 2, 300, 300, 2) }); n != 0 {
			t.Errorf("SEKernel allocates %v times per call", n)
		}
		if n := testing.AllocsPerRun(5, func() { SqDist(k, 300, a, 2, a, 2, 300, 300, 2) }); n != 0 {
			t.Errorf("SqDist allocates %v times per call", n)
		}
	})
}

package linalg

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

func TestLevel1Suite(t *testing.T) {
	for _, be := range testBackends(t) {
		t.Run(be.name, func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(12, 13))
			for _, n := range []int{0, 1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 33, 100, 257} {
				for _, inc := range [][2]int{{1, 1}, {2, 3}, {-1, 1}, {1, -2}, {-3, -1}} {
					incX, incY := inc[0], inc[1]
					abs := func(i int) int { return max(i, -i) }
					x := randMat(rnd, 1, max(0, (n-1)*abs(incX)+1), 1)
					y := randMat(rnd, 1, max(0, (n-1)*abs(incY)+1), 1)
					pos := func(i, inc int) int { return vecIndex(i, n, inc) }
					// Ddot
					var want, scale float64
					for i := 0; i < n; i++ {
						p := x[pos(i, incX)] * y[pos(i, incY)]
						want += p
						scale += math.Abs(p)
					}
					if got := be.impl.Ddot(n, x, incX, y, incY); !closeEnough(got, want, scale, n) {
						t.Fatalf("Ddot n=%d inc=%d,%d = %v, want %v", n, incX, incY, got, want)
					}
					// Daxpy
					for _, alpha := range []float64{0, 1, -1.5} {
						y0 := append([]float64(nil), y...)
						xa := x
						if alpha == 0 && n > 0 {
							// α = 0: x is not read, its NaN must not reach y.
							xa = append([]float64(nil), x...)
							xa[pos(0, incX)] = math.NaN()
						}
						be.impl.Daxpy(n, alpha, xa, incX, y, incY)
						for i := range y {
							want := y0[i]
							for j := 0; j < n; j++ {
								if pos(j, incY) == i {
									want += alpha * x[pos(j, incX)]
								}
							}
							if !closeEnough(y[i], want, math.Abs(want)+math.Abs(y0[i]), 1) {
								t.Fatalf("Daxpy n=%d alpha=%v inc=%d,%d: y[%d] = %v, want %v", n, alpha, incX, incY, i,
									y[i], want)
							}
						}
					}
					// Dscal (positive strides only: BLAS ignores incX < 0)
					if incX > 0 {
						for _, alpha := range []float64{0, 1, -1.5} {
							x0 := append([]float64(nil), x...)
							if n > 0 {
								x[0] = math.NaN()
								x0[0] = math.NaN()
							}
							be.impl.Dscal(n, alpha, x, incX)
							for i := range x {
								want := x0[i]
								if i%incX == 0 && i/incX < n {
									want = alpha * x0[i]
									if alpha == 0 {
										want = 0
									}
								}
								if !closeEnough(x[i], want, math.Abs(want), 1) {
									t.Fatalf("Dscal n=%d alpha=%v incX=%d: x[%d] = %v, want %v", n, alpha, incX, i,
										x[i], want)
								}
							}
							x = x0
							if n > 0 {
								x[0] = 0.5
							}
						}
					}
				}
			}
		})
	}
}

func TestLevel1PanicsMatchGonum(t *testing.T) {
	x, y := make([]float64, 10), make([]float64, 10)
	cases := map[string]func(impl blas.Float64){
		"ddot incx":  func(impl blas.Float64) { impl.Ddot(3, x, 0, y, 1) },
		"ddot n<0":   func(impl blas.Float64) { impl.Ddot(-1, x, 1, y, 1) },
		"ddot short": func(impl blas.Float64) { impl.Ddot(6, x, 2, y, 1) },
		"daxpy incy": func(impl blas.Float64) { impl.Daxpy(3, 1, x, 1, y, 0) },
		"daxpy shrt": func(impl blas.Float64) { impl.Daxpy(4, 1, x, 1, y, -4) },
		"dscal incx": func(impl blas.Float64) { impl.Dscal(3, 1, x, 0) },
		"dscal shrt": func(impl blas.Float64) { impl.Dscal(11, 1, x, 1) },
	}
	nat := NewNative(1)
	for name, call := range cases {
		want := panicText(func() { call(gonum.Implementation{}) })
		if want == "" {
			t.Fatalf("%s: gonum did not panic", name)
		}
		if got := panicText(func() { call(nat) }); got != want {
			t.Errorf("%s: native panics %q, gonum %q", name, got, want)
		}
	}
}

package conv

import (
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// naiveBLAS is gonum's BLAS with a plain triple-loop Dgemm: an independent
// reference for the layers' products, and one that never allocates or
// starts goroutines, so allocation tests measure the layers alone.
type naiveBLAS struct{ gonum.Implementation }

func (naiveBLAS) Dgemm(ta, tb blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int,
	beta float64, c []float64, ldc int) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			sum := 0.0
			for p := 0; p < k; p++ {
				var av, bv float64
				if ta == blas.NoTrans {
					av = a[i*lda+p]
				} else {
					av = a[p*lda+i]
				}
				if tb == blas.NoTrans {
					bv = b[p*ldb+j]
				} else {
					bv = b[j*ldb+p]
				}
				sum += av * bv
			}
			if beta == 0 {
				c[i*ldc+j] = alpha * sum
			} else {
				c[i*ldc+j] = alpha*sum + beta*c[i*ldc+j]
			}
		}
	}
}

func naiveOptions() Options {
	return Options{BLAS: naiveBLAS{}, WorkerBLAS: func() blas.Float64 { return naiveBLAS{} }}
}

// underEmulation reports qemu or the race detector, where tests shrink.
func underEmulation() bool {
	return raceEnabled || runtime.GOARCH != "amd64" || strings.Contains(os.Getenv("GOFLAGS"), "race")
}

func randTensor(rng *rand.Rand, n, c, h, w int) *Tensor {
	t := NewTensor(n, c, h, w)
	fill(rng, t.Data)
	return t
}

func fill(rng *rand.Rand, v []float64) {
	for i := range v {
		v[i] = rng.NormFloat64()
	}
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// fdCheck compares the analytic gradient an of loss with respect to p with
// central differences, on every coordinate if p is small, else on a random
// subset. The error is relative, floored at 1e-2 so that near-zero entries
// are held to an absolute 1e-8.
//
// h is the step: large (1e-3) where the loss is linear in p, so rounding in
// sums over many terms does not dominate; small (1e-5) otherwise.
func fdCheck(t *testing.T, what string, h float64, rng *rand.Rand, p, an []float64, loss func() float64) {
	t.Helper()
	if len(p) != len(an) {
		t.Fatalf("%s: %d parameters, %d gradient entries", what, len(p), len(an))
	}
	idx := make([]int, 0, len(p))
	if len(p) <= 60 {
		for i := range p {
			idx = append(idx, i)
		}
	} else {
		for range 60 {
			idx = append(idx, rng.IntN(len(p)))
		}
	}
	worst := 0.0
	for _, i := range idx {
		old := p[i]
		p[i] = old + h
		lp := loss()
		p[i] = old - h
		lm := loss()
		p[i] = old
		fd := (lp - lm) / (2 * h)
		err := math.Abs(fd-an[i]) / math.Max(math.Max(math.Abs(fd), math.Abs(an[i])), 1e-2)
		worst = math.Max(worst, err)
		if err > 1e-6 || math.IsNaN(err) {
			t.Errorf("%s[%d]: analytic %.12g, finite difference %.12g (rel err %.2g)", what, i, an[i], fd, err)
			return
		}
	}
	t.Logf("%s: worst rel err %.2g over %d coordinates", what, worst, len(idx))
}

func maxAbsDiff(a, b []float64) float64 {
	d := 0.0
	for i := range a {
		d = math.Max(d, math.Abs(a[i]-b[i]))
	}
	if len(a) != len(b) {
		return math.Inf(1)
	}
	return d
}

package cholesky

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/mat"

	"github.com/pacpfl/pacpfl/linalg"
)

// bigTestsOff reports whether the largest cases should be skipped: under
// -short, the race detector or a non-amd64 architecture (qemu in CI).
func bigTestsOff() bool {
	return testing.Short() || raceEnabled || runtime.GOARCH != "amd64"
}

// lightTests reports whether to run a reduced suite: under the race
// detector or emulation (non-amd64 in CI runs under qemu), both ~10–50×
// slower.
func lightTests() bool { return raceEnabled || runtime.GOARCH != "amd64" }

// testSizes are the orders of the shared suite: every size up to 40, a
// sampling up to 130, then 257 and (not under -short/race/qemu) 1000.
func testSizes() []int {
	var s []int
	if lightTests() {
		for n := 0; n <= 20; n++ {
			s = append(s, n)
		}
		return append(s, 33, 64, 65, 97, 130, 257)
	}
	for n := 0; n <= 40; n++ {
		s = append(s, n)
	}
	for n := 43; n <= 130; n += 9 {
		s = append(s, n)
	}
	s = append(s, 128, 129, 257)
	if !bigTestsOff() {
		s = append(s, 1000)
	}
	return s
}

// randSPD returns a random well-conditioned SPD matrix, full storage,
// row-major with stride ld ≥ n; the padding holds a sentinel.
func randSPD(rng *rand.Rand, n, ld int) []float64 {
	b := make([]float64, n*n)
	for i := range b {
		b[i] = rng.NormFloat64()
	}
	a := make([]float64, max(0, (n-1)*ld+n))
	for i := range a {
		a[i] = 777 // padding sentinel
	}
	gonum.Implementation{}.Dsyrk(blas.Lower, blas.NoTrans, n, n, 1/float64(max(n, 1)), b, max(n, 1), 0, a, ld)
	for i := 0; i < n; i++ {
		a[i*ld+i] += 1
		for j := 0; j < i; j++ {
			a[j*ld+i] = a[i*ld+j]
		}
	}
	return a
}

// lowerOf returns the n×n lower-triangular matrix (stride n) held in the ul
// triangle of a: L itself for Lower, Uᵀ for Upper.
func lowerOf(ul blas.Uplo, n int, a []float64, lda int) []float64 {
	l := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			if ul == blas.Lower {
				l[i*n+j] = a[i*lda+j]
			} else {
				l[i*n+j] = a[j*lda+i]
			}
		}
	}
	return l
}

// reconErr returns ‖L·Lᵀ − A‖_F / ‖A‖_F.
func reconErr(n int, l []float64, a []float64, lda int) float64 {
	if n == 0 {
		return 0
	}
	p := make([]float64, n*n)
	gonum.Implementation{}.Dgemm(blas.NoTrans, blas.Trans, n, n, n, 1, l, n, l, n, 0, p, n)
	var num, den float64
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			d := p[i*n+j] - a[i*lda+j]
			num += d * d
			den += a[i*lda+j] * a[i*lda+j]
		}
	}
	return math.Sqrt(num / den)
}

// symDense copies the full n×n matrix a into a mat.SymDense.
func symDense(n int, a []float64, lda int) *mat.SymDense {
	s := mat.NewSymDense(max(n, 1), nil)
	if n == 0 {
		return nil
	}
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			s.SetSym(i, j, a[i*lda+j])
		}
	}
	return s
}

// relDiff returns max|x−y| / max(max|y|, tiny).
func relDiff(x, y []float64) float64 {
	var num, den float64
	for i := range x {
		num = math.Max(num, math.Abs(x[i]-y[i]))
		den = math.Max(den, math.Abs(y[i]))
	}
	if den == 0 {
		return num
	}
	return num / den
}

// lapackBackends returns every backend compiled into this test binary, plus
// native Lapacks on every compiled BLAS and one with tiny leaves so that the
// recursion is exercised on small matrices.
func lapackBackends(t *testing.T) map[string]Lapack {
	t.Helper()
	out := map[string]Lapack{}
	for _, name := range knownBackends {
		l, err := Backend(name)
		if err != nil {
			if _, ok := lapackNotCompiled[name]; ok {
				continue
			}
			t.Fatalf("Backend(%q): %v", name, err)
		}
		out[name] = l
	}
	for _, bn := range linalg.Backends() {
		b, err := linalg.Backend(bn)
		if err != nil {
			t.Fatal(err)
		}
		if lightTests() && bn != "native" {
			continue
		}
		out["native/blas="+bn] = NewNative(b)
		tiny := NewNative(b)
		tiny.p = params{potrf: 3, trsm: 2, syrk: 5, trtri: 3, lauum: 2, trmm: 4, halvesMin: 16}
		out["native/tiny-leaves/blas="+bn] = tiny
		if bn == "native" {
			la := NewNative(b)
			la.p = params{right: 16, potrf: 5, trsm: 7, syrk: 5, trtri: 3, lauum: 2, trmm: 4, noHalves: true}
			out["native/lookahead-tiny"] = la
		}
		right := NewNative(b)
		right.p = params{right: 7, potrf: 3, trsm: 5, syrk: 5, trtri: 3, lauum: 2, trmm: 4, noLookahead: true}
		out["native/right-looking-tiny/blas="+bn] = right
	}
	return out
}

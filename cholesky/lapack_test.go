package cholesky

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	lgonum "gonum.org/v1/gonum/lapack/gonum"
	"gonum.org/v1/gonum/mat"
)

var uplos = []blas.Uplo{blas.Lower, blas.Upper}

func sortedNames(m map[string]Lapack) []string {
	var s []string
	for k := range m {
		s = append(s, k)
	}
	sort.Strings(s)
	return s
}

// TestDpotrfReconstructs checks ‖L·Lᵀ − A‖_F/‖A‖_F ≤ 1e-13·n for every
// backend, size and triangle, that the other triangle and the padding are
// untouched, and that Dpotrs matches gonum's mat.Cholesky.
func TestDpotrfReconstructs(t *testing.T) {
	backends := lapackBackends(t)
	for _, name := range sortedNames(backends) {
		impl := backends[name]
		for _, ul := range uplos {
			rng := rand.New(rand.NewPCG(1, uint64(ul)))
			for _, n := range testSizes() {
				if strings.Contains(name, "tiny") && n > 300 {
					continue
				}
				lda := n + n%3 // some strides larger than n
				lda = max(lda, 1)
				a := randSPD(rng, n, lda)
				f := append([]float64(nil), a...)
				if !impl.Dpotrf(ul, n, f, lda) {
					t.Fatalf("%s %c n=%d: Dpotrf failed on an SPD matrix", name, ul, n)
				}
				if e := reconErr(n, lowerOf(ul, n, f, lda), a, lda); e > 1e-13*float64(max(n, 1)) {
					t.Errorf("%s %c n=%d: reconstruction error %g", name, ul, n, e)
				}
				for i := 0; i < n; i++ {
					for j := 0; j < lda; j++ {
						other := (ul == blas.Lower && j > i) || (ul == blas.Upper && j < i) || j >= n
						if other && i*lda+j < len(a) && f[i*lda+j] != a[i*lda+j] {
							t.Fatalf("%s %c n=%d: Dpotrf wrote (%d,%d) outside its triangle", name, ul, n, i, j)
						}
					}
				}
				if n == 0 || n > 300 {
					continue
				}
				// Solves against gonum's mat.Cholesky.
				const nrhs = 3
				ldb := nrhs + 2
				b := make([]float64, (n-1)*ldb+nrhs)
				for i := range b {
					b[i] = rng.NormFloat64()
				}
				x := append([]float64(nil), b...)
				impl.Dpotrs(ul, n, nrhs, f, lda, x, ldb)
				var ch mat.Cholesky
				if !ch.Factorize(symDense(n, a, lda)) {
					t.Fatal("mat.Cholesky failed")
				}
				bm := mat.NewDense(n, nrhs, nil)
				for i := 0; i < n; i++ {
					for j := 0; j < nrhs; j++ {
						bm.Set(i, j, b[i*ldb+j])
					}
				}
				var want mat.Dense
				if err := ch.SolveTo(&want, bm); err != nil {
					t.Fatal(err)
				}
				got := make([]float64, 0, n*nrhs)
				for i := 0; i < n; i++ {
					got = append(got, x[i*ldb:i*ldb+nrhs]...)
					for j := nrhs; j < ldb && i*ldb+j < len(x); j++ {
						if x[i*ldb+j] != b[i*ldb+j] {
							t.Fatalf("%s: Dpotrs wrote into the padding of b", name)
						}
					}
				}
				if d := relDiff(got, want.RawMatrix().Data); d > 1e-10 {
					t.Errorf("%s %c n=%d: Dpotrs differs from mat.Cholesky by %g", name, ul, n, d)
				}
			}
		}
	}
}

// TestDpotriInverts checks A·A⁻¹ ≈ I from Dpotrf + Dpotri for every backend.
func TestDpotriInverts(t *testing.T) {
	backends := lapackBackends(t)
	sizes := []int{0, 1, 2, 3, 5, 8, 17, 31, 64, 65, 100, 130, 257}
	if lightTests() {
		sizes = []int{0, 1, 2, 3, 5, 17, 65, 130}
	}
	for _, name := range sortedNames(backends) {
		impl := backends[name]
		for _, ul := range uplos {
			rng := rand.New(rand.NewPCG(2, uint64(ul)))
			for _, n := range sizes {
				lda := n + 1
				a := randSPD(rng, n, lda)
				f := append([]float64(nil), a...)
				if !impl.Dpotrf(ul, n, f, lda) || !impl.Dpotri(ul, n, f, lda) {
					t.Fatalf("%s %c n=%d: Dpotrf/Dpotri failed", name, ul, n)
				}
				if n == 0 {
					continue
				}
				inv := make([]float64, n*n)
				for i := 0; i < n; i++ {
					for j := 0; j <= i; j++ {
						v := f[i*lda+j]
						if ul == blas.Upper {
							v = f[j*lda+i]
						}
						inv[i*n+j], inv[j*n+i] = v, v
					}
				}
				if e := identityErr(n, inv, a, lda); e > 1e-12*float64(n) {
					t.Errorf("%s %c n=%d: ‖A⁻¹A − I‖_max = %g", name, ul, n, e)
				}
			}
		}
	}
}

// identityErr returns max|(X·A − I)_ij| for n×n X (stride n) and A.
func identityErr(n int, x []float64, a []float64, lda int) float64 {
	p := make([]float64, n*n)
	gonum.Implementation{}.Dgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, x, n, a, lda, 0, p, n)
	e := 0.0
	for i := 0; i < n; i++ {
		p[i*n+i] -= 1
	}
	for _, v := range p {
		e = math.Max(e, math.Abs(v))
	}
	return e
}

// TestDtrtriInverts checks T⁻¹·T ≈ I for both triangles and diagonals, and
// ok=false on a zero diagonal (matrix left unchanged).
func TestDtrtriInverts(t *testing.T) {
	backends := lapackBackends(t)
	for _, name := range sortedNames(backends) {
		impl := backends[name]
		for _, ul := range uplos {
			for _, diag := range []blas.Diag{blas.NonUnit, blas.Unit} {
				rng := rand.New(rand.NewPCG(3, uint64(ul)+uint64(diag)))
				for _, n := range []int{0, 1, 2, 3, 7, 16, 33, 64, 65, 129, 200} {
					lda := n + 2
					a := make([]float64, max(0, (n-1)*lda+n))
					for i := range a {
						a[i] = rng.Float64() - 0.5
					}
					for i := 0; i < n; i++ {
						a[i*lda+i] = 1 + rng.Float64()
						if diag == blas.Unit {
							a[i*lda+i] = 99 // must not be read
						}
					}
					f := append([]float64(nil), a...)
					if !impl.Dtrtri(ul, diag, n, f, lda) {
						t.Fatalf("%s n=%d: Dtrtri failed", name, n)
					}
					tri := func(m []float64) []float64 {
						out := make([]float64, n*n)
						for i := 0; i < n; i++ {
							for j := 0; j < n; j++ {
								in := (ul == blas.Lower && j < i) || (ul == blas.Upper && j > i)
								if in {
									out[i*n+j] = m[i*lda+j]
								}
							}
							out[i*n+i] = m[i*lda+i]
							if diag == blas.Unit {
								out[i*n+i] = 1
							}
						}
						return out
					}
					if n == 0 {
						continue
					}
					if e := identityErr(n, tri(f), tri(a), n); e > 1e-11*float64(n) {
						t.Errorf("%s %c %c n=%d: ‖T⁻¹T − I‖ = %g", name, ul, diag, n, e)
					}
					if diag == blas.Unit && f[0] != 99 {
						t.Errorf("%s: Dtrtri(Unit) wrote the diagonal", name)
					}
				}
				// A zero on the diagonal: false, a unchanged.
				if diag == blas.NonUnit {
					n := 5
					a := make([]float64, n*n)
					for i := 0; i < n; i++ {
						a[i*n+i] = 1
					}
					a[3*n+3] = 0
					a[3*n+1], a[1*n+3] = 0.5, 0.5
					f := append([]float64(nil), a...)
					if impl.Dtrtri(ul, diag, n, f, n) {
						t.Errorf("%s: Dtrtri succeeded on a singular matrix", name)
					}
					if relDiff(f, a) != 0 {
						t.Errorf("%s: failed Dtrtri changed a", name)
					}
				}
			}
		}
	}
}

// TestDpotrfMatchesGonumFactor compares the factor itself with gonum's.
func TestDpotrfMatchesGonumFactor(t *testing.T) {
	backends := lapackBackends(t)
	rng := rand.New(rand.NewPCG(4, 4))
	for _, n := range []int{1, 10, 65, 200} {
		a := randSPD(rng, n, n)
		want := append([]float64(nil), a...)
		lgonum.Implementation{}.Dpotrf(blas.Lower, n, want, n)
		for _, name := range sortedNames(backends) {
			got := append([]float64(nil), a...)
			backends[name].Dpotrf(blas.Lower, n, got, n)
			if d := relDiff(lowerOf(blas.Lower, n, got, n), lowerOf(blas.Lower, n, want, n)); d > 1e-12 {
				t.Errorf("%s n=%d: factor differs from gonum's by %g", name, n, d)
			}
		}
	}
}

// TestDpotrfNotPD checks ok=false for indefinite and singular matrices.
func TestDpotrfNotPD(t *testing.T) {
	backends := lapackBackends(t)
	for _, name := range sortedNames(backends) {
		for _, ul := range uplos {
			sizes := []int{1, 7, 70, 150}
			if lightTests() {
				sizes = []int{1, 7, 70}
			}
			for _, n := range sizes {
				for _, k := range []int{0, n / 2, n - 1} {
					a, _ := indefinite(n, k, false)
					if backends[name].Dpotrf(ul, n, a, n) {
						t.Errorf("%s %c n=%d k=%d: Dpotrf succeeded on an indefinite matrix", name, ul, n, k)
					}
					a, _ = indefinite(n, k, true)
					if backends[name].Dpotrf(ul, n, a, n) {
						t.Errorf("%s %c n=%d k=%d: Dpotrf succeeded on a singular matrix", name, ul, n, k)
					}
				}
			}
		}
	}
}

// indefinite returns A = L·D·Lᵀ (full storage, stride n) for a unit lower
// triangular L with small integer entries and D = I except D_kk = −1
// (indefinite) or 0 (singular). Every operation of the factorization is then
// exact in floating point, so the Cholesky factorization succeeds exactly on
// columns 0..k−1 and fails at column k with pivot D_kk. It also returns
// L's row k (for checking).
func indefinite(n, k int, singular bool) (a []float64, lk []float64) {
	rng := rand.New(rand.NewPCG(uint64(n), uint64(k)))
	l := make([]float64, n*n)
	for i := 0; i < n; i++ {
		l[i*n+i] = 1
		for j := 0; j < i; j++ {
			l[i*n+j] = float64(rng.IntN(3) - 1)
		}
	}
	d := -1.0
	if singular {
		d = 0
	}
	a = make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			s := 0.0
			for p := 0; p <= min(i, j); p++ {
				dp := 1.0
				if p == k {
					dp = d
				}
				s += l[i*n+p] * dp * l[j*n+p]
			}
			a[i*n+j] = s
		}
	}
	return a, l[k*n : k*n+k+1]
}

// TestPanicsLikeGonum checks that bad arguments panic with gonum's messages.
func TestPanicsLikeGonum(t *testing.T) {
	backends := lapackBackends(t)
	ref := lgonum.Implementation{}
	a := make([]float64, 16)
	type call struct {
		name string
		f    func(Lapack)
	}
	calls := []call{
		{"potrf bad uplo", func(l Lapack) { l.Dpotrf('X', 4, a, 4) }},
		{"potrf n<0", func(l Lapack) { l.Dpotrf(blas.Lower, -1, a, 4) }},
		{"potrf lda", func(l Lapack) { l.Dpotrf(blas.Lower, 4, a, 3) }},
		{"potrf short", func(l Lapack) { l.Dpotrf(blas.Upper, 5, a, 5) }},
		{"potrs nrhs", func(l Lapack) { l.Dpotrs(blas.Lower, 4, -1, a, 4, a, 4) }},
		{"potrs ldb", func(l Lapack) { l.Dpotrs(blas.Lower, 4, 3, a, 4, a, 2) }},
		{"potrs short b", func(l Lapack) { l.Dpotrs(blas.Lower, 4, 4, a, 4, a[:10], 4) }},
		{"potri bad uplo", func(l Lapack) { l.Dpotri(0, 4, a, 4) }},
		{"potri short", func(l Lapack) { l.Dpotri(blas.Lower, 4, a[:12], 4) }},
		{"trtri bad diag", func(l Lapack) { l.Dtrtri(blas.Lower, 'Q', 4, a, 4) }},
		{"trtri n<0", func(l Lapack) { l.Dtrtri(blas.Upper, blas.Unit, -2, a, 4) }},
	}
	catch := func(f func()) (msg string) {
		defer func() { msg = fmt.Sprint(recover()) }()
		f()
		return "no panic"
	}
	for _, c := range calls {
		want := catch(func() { c.f(ref) })
		if want == "no panic" {
			t.Fatalf("%s: gonum did not panic", c.name)
		}
		for _, name := range sortedNames(backends) {
			if got := catch(func() { c.f(backends[name]) }); got != want {
				t.Errorf("%s: %s panicked with %q, gonum with %q", name, c.name, got, want)
			}
		}
	}
}

func TestBackendErrors(t *testing.T) {
	_, err := Backend("bogus")
	if err == nil || !strings.Contains(err.Error(), "bogus") ||
		!strings.Contains(err.Error(), "native, gonum, openblas") {
		t.Errorf("Backend(bogus) = %v", err)
	}
	if _, ok := lapackRegistry["openblas"]; !ok {
		_, err := Backend("openblas")
		if err == nil || !strings.Contains(err.Error(), "-tags netlib") {
			t.Errorf("Backend(openblas) without netlib = %v", err)
		}
	}
	for _, n := range []string{"", "native", "gonum"} {
		if l, err := Backend(n); err != nil || l == nil {
			t.Errorf("Backend(%q) = %v, %v", n, l, err)
		}
	}
}

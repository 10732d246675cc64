package cholesky

import (
	"errors"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/mat"

	"github.com/pacpfl/pacpfl/linalg"
)

// factorBLASes are the BLAS implementations the Factor tests run on.
func factorBLASes(t *testing.T) map[string]blas.Float64 {
	out := map[string]blas.Float64{"default": nil}
	for _, n := range linalg.Backends() {
		b, err := linalg.Backend(n)
		if err != nil {
			t.Fatal(err)
		}
		out[n] = b
	}
	return out
}

func TestFactorAgainstGonum(t *testing.T) {
	for bn, bl := range factorBLASes(t) {
		var f Factor // reused across sizes: shrinking and growing
		f.SetBLAS(bl)
		rng := rand.New(rand.NewPCG(5, 5))
		sizes := []int{0, 1, 2, 5, 33, 64, 65, 150, 257, 31}
		if lightTests() {
			sizes = []int{0, 1, 2, 5, 33, 65, 100, 31}
		}
		for _, n := range sizes {
			lda := n + 3
			a := randSPD(rng, n, lda)
			// Garbage in the strict upper triangle must not be read.
			for i := 0; i < n; i++ {
				for j := i + 1; j < n; j++ {
					a[i*lda+j] = math.NaN()
				}
			}
			if err := f.Factorize(a, n, lda); err != nil {
				t.Fatalf("%s n=%d: %v", bn, n, err)
			}
			for i := 0; i < n; i++ {
				for j := i + 1; j < n; j++ {
					a[i*lda+j] = a[j*lda+i]
				}
			}
			if f.N() != n || f.Jitter() != 0 {
				t.Fatalf("N=%d Jitter=%g", f.N(), f.Jitter())
			}
			l, ld := f.L()
			if e := reconErr(n, lowerOf(blas.Lower, n, l, ld), a, lda); e > 1e-13*float64(max(n, 1)) {
				t.Errorf("%s n=%d: reconstruction %g", bn, n, e)
			}
			for i := 0; i < n; i++ {
				for j := i + 1; j < n; j++ {
					if l[i*ld+j] != 0 {
						t.Fatalf("L has a nonzero above the diagonal")
					}
				}
			}
			if n == 0 {
				if f.LogDet() != 0 {
					t.Errorf("LogDet of the empty matrix = %g", f.LogDet())
				}
				if err := f.SolveVec(nil, nil); err != nil {
					t.Error(err)
				}
				continue
			}
			var ch mat.Cholesky
			if !ch.Factorize(symDense(n, a, lda)) {
				t.Fatal("gonum failed")
			}
			if d := math.Abs(f.LogDet()-ch.LogDet()) / math.Max(1, math.Abs(ch.LogDet())); d > 1e-10 {
				t.Errorf("%s n=%d: LogDet %g, gonum %g", bn, n, f.LogDet(), ch.LogDet())
			}
			b := make([]float64, n)
			for i := range b {
				b[i] = rng.NormFloat64()
			}
			var want mat.VecDense
			if err := ch.SolveVecTo(&want, mat.NewVecDense(n, append([]float64(nil), b...))); err != nil {
				t.Fatal(err)
			}
			x := make([]float64, n)
			if err := f.SolveVec(x, b); err != nil {
				t.Fatal(err)
			}
			if d := relDiff(x, want.RawVector().Data); d > 1e-10 {
				t.Errorf("%s n=%d: SolveVec differs by %g", bn, n, d)
			}
			bb := append([]float64(nil), b...)
			if err := f.SolveVec(bb, bb); err != nil || relDiff(bb, x) != 0 {
				t.Errorf("SolveVec in place: %v, diff %g", err, relDiff(bb, x))
			}
			// SolveLower then SolveUpper is SolveVec; L·(L⁻¹b) = b.
			y := make([]float64, n)
			if err := f.SolveLower(y, b); err != nil {
				t.Fatal(err)
			}
			ly := make([]float64, n)
			gonum.Implementation{}.Dgemv(blas.NoTrans, n, n, 1, l, ld, y, 1, 0, ly, 1)
			if d := relDiff(ly, b); d > 1e-12 {
				t.Errorf("L·SolveLower(b) − b: %g", d)
			}
			if err := f.SolveUpper(y, y); err != nil {
				t.Fatal(err)
			}
			if d := relDiff(y, x); d > 1e-12 {
				t.Errorf("SolveUpper(SolveLower(b)) differs from SolveVec by %g", d)
			}
			// Matrix right-hand sides, in place and not.
			const nrhs = 4
			ldb := nrhs + 1
			bm := make([]float64, n*ldb)
			for i := range bm {
				bm[i] = rng.NormFloat64()
			}
			xm := make([]float64, n*nrhs)
			if err := f.Solve(xm, nrhs, bm, ldb, nrhs); err != nil {
				t.Fatal(err)
			}
			for c := 0; c < nrhs; c++ {
				col := make([]float64, n)
				for i := range col {
					col[i] = bm[i*ldb+c]
				}
				if err := f.SolveVec(col, col); err != nil {
					t.Fatal(err)
				}
				for i := range col {
					if d := math.Abs(col[i] - xm[i*nrhs+c]); d > 1e-10*math.Max(1, math.Abs(col[i])) {
						t.Fatalf("%s n=%d: Solve column %d row %d: %g vs %g", bn, n, c, i, xm[i*nrhs+c], col[i])
					}
				}
			}
			if err := f.Solve(bm, ldb, bm, ldb, nrhs); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < n; i++ {
				if relDiff(bm[i*ldb:i*ldb+nrhs], xm[i*nrhs:i*nrhs+nrhs]) > 1e-15 {
					t.Fatal("Solve in place differs")
				}
			}
			// Inverse·A ≈ I, written in full.
			inv := make([]float64, n*(n+1))
			if err := f.Inverse(inv, n+1); err != nil {
				t.Fatal(err)
			}
			dense := make([]float64, n*n)
			for i := 0; i < n; i++ {
				copy(dense[i*n:i*n+n], inv[i*(n+1):i*(n+1)+n])
				if inv[i*(n+1)+n] != 0 {
					t.Fatal("Inverse wrote past column n")
				}
			}
			if e := identityErr(n, dense, a, lda); e > 1e-12*float64(n) {
				t.Errorf("%s n=%d: ‖Inverse·A − I‖ = %g", bn, n, e)
			}
		}
	}
}

func TestFactorErrors(t *testing.T) {
	var f Factor
	x := make([]float64, 3)
	if err := f.SolveVec(x, x); err == nil {
		t.Error("SolveVec before Factorize succeeded")
	}
	if err := f.Inverse(make([]float64, 9), 3); err == nil {
		t.Error("Inverse before Factorize succeeded")
	}
	if err := f.Solve(x, 1, x, 1, 1); err == nil {
		t.Error("Solve before Factorize succeeded")
	}
	if err := f.SolveLower(x, x); err == nil {
		t.Error("SolveLower before Factorize succeeded")
	}
	if err := f.SolveUpper(x, x); err == nil {
		t.Error("SolveUpper before Factorize succeeded")
	}
	if !math.IsNaN(f.LogDet()) || f.N() != 0 {
		t.Error("LogDet/N before Factorize")
	}
	if l, _ := f.L(); l != nil {
		t.Error("L before Factorize")
	}
	// Shape errors.
	if f.Factorize(make([]float64, 8), 3, 3) == nil || f.Factorize(x, 2, 1) == nil || f.Factorize(x, -1, 1) == nil {
		t.Error("bad shapes accepted")
	}
	a := []float64{4, 0, 0, 0, 9, 0, 0, 0, 16}
	if err := f.Factorize(a, 3, 3); err != nil {
		t.Fatal(err)
	}
	if math.Abs(f.LogDet()-math.Log(4*9*16)) > 1e-14 {
		t.Errorf("LogDet = %g", f.LogDet())
	}
	if f.SolveVec(x[:2], x) == nil || f.SolveVec(x, x[:2]) == nil || f.SolveLower(x[:1], x) == nil {
		t.Error("length mismatch accepted")
	}
	if f.Solve(x, 1, x, 1, 2) == nil || f.Solve(x, 2, x, 2, 2) == nil || f.Inverse(make([]float64, 8), 3) == nil ||
		f.Inverse(make([]float64, 9), 2) == nil {
		t.Error("bad matrix shapes accepted")
	}
	// A failed factorization invalidates the previous one.
	a[4] = -9
	if err := f.Factorize(a, 3, 3); err == nil {
		t.Fatal("indefinite accepted")
	}
	if f.SolveVec(x, x) == nil || f.N() != 0 {
		t.Error("methods work after a failed factorization")
	}
}

func TestFactorNonFinite(t *testing.T) {
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		for _, pos := range [][2]int{{0, 0}, {3, 1}, {4, 4}} {
			n := 5
			a := randSPD(rand.New(rand.NewPCG(6, 6)), n, n)
			a[pos[0]*n+pos[1]] = bad
			var f Factor
			for _, fn := range []func([]float64, int, int) error{f.Factorize, f.FactorizeWithJitter} {
				err := fn(a, n, n)
				if !errors.Is(err, ErrNonFinite) || errors.Is(err, ErrNotPositiveDefinite) {
					t.Errorf("%v at %v: err = %v, want ErrNonFinite", bad, pos, err)
				}
			}
		}
	}
}

func TestFactorOverflow(t *testing.T) {
	// L21 = 1e300/1e-150 overflows, so the second pivot is −Inf.
	a := []float64{1e-300, 0, 1e300, 1}
	var f Factor
	for _, fn := range []func([]float64, int, int) error{f.Factorize, f.FactorizeWithJitter} {
		err := fn(a, 2, 2)
		if !errors.Is(err, ErrNonFinite) || errors.Is(err, ErrNotPositiveDefinite) ||
			!contains(err.Error(), "column 1") {
			t.Errorf("err = %v, want an overflow error at column 1 wrapping ErrNonFinite", err)
		}
	}
}

func TestFactorNotPDColumn(t *testing.T) {
	sizes := []int{1, 2, 9, 64, 65, 150, 300}
	if lightTests() {
		sizes = []int{1, 2, 9, 65, 150}
	}
	for _, n := range sizes {
		for _, k := range []int{0, 1, n / 2, n - 1} {
			if k >= n {
				continue
			}
			for _, singular := range []bool{false, true} {
				a, lk := indefinite(n, k, singular)
				var f Factor
				if n > 30 && k%2 == 1 {
					// Small panels: the failure is met inside the look-ahead steps.
					f.p = params{right: 16, potrf: 5, trsm: 7, syrk: 5, trtri: 3, lauum: 2, trmm: 4}
				}
				err := f.Factorize(a, n, n)
				var npd *NotPDError
				if !errors.As(err, &npd) || !errors.Is(err, ErrNotPositiveDefinite) {
					t.Fatalf("n=%d k=%d: err = %v, want *NotPDError", n, k, err)
				}
				want := 0.0
				if !singular {
					want = -1
				}
				_ = lk
				if npd.Column != k || npd.Pivot != want || npd.Jitter != 0 {
					t.Errorf("n=%d k=%d singular=%v: got %+v, want column %d pivot %g", n, k, singular, *npd, k, want)
				}
			}
		}
	}
	err := &NotPDError{Column: 7, Pivot: -0.5, Jitter: 1e-4}
	for _, s := range []string{"column 7", "-0.5", "0.0001"} {
		if !contains(err.Error(), s) {
			t.Errorf("%q lacks %q", err.Error(), s)
		}
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// TestIllConditioned: κ ≈ 1e12 factors with a small backward error.
func TestIllConditioned(t *testing.T) {
	for _, n := range []int{50, 200, 600} {
		if n > 300 && lightTests() {
			continue
		}
		a := withEigenvalues(n, func(i int) float64 { return math.Pow(10, -12*float64(i)/float64(n-1)) })
		var f Factor
		if err := f.Factorize(a, n, n); err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		l, ld := f.L()
		e := reconErr(n, lowerOf(blas.Lower, n, l, ld), a, n)
		if e > 1e-13*float64(n) {
			t.Errorf("n=%d: backward error %g", n, e)
		}
		t.Logf("n=%d κ=1e12: backward error %.3g", n, e)
	}
}

// withEigenvalues returns Q·diag(λ_i)·Qᵀ for a random orthogonal Q.
func withEigenvalues(n int, lambda func(int) float64) []float64 {
	rng := rand.New(rand.NewPCG(7, uint64(n)))
	g := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			g.Set(i, j, rng.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(g)
	var q mat.Dense
	qr.QTo(&q)
	d := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			d.Set(i, j, q.At(i, j)*lambda(j))
		}
	}
	var a mat.Dense
	a.Mul(d, q.T())
	out := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			v := (a.At(i, j) + a.At(j, i)) / 2
			out[i*n+j], out[j*n+i] = v, v
		}
	}
	return out
}

func TestJitterLadder(t *testing.T) {
	// Rank-deficient PSD (exact zero pivots): the first rung succeeds.
	n := 40
	a, _ := indefinite(n, 10, true)
	mean := 0.0
	for i := 0; i < n; i++ {
		mean += a[i*n+i]
	}
	mean /= float64(n)
	var f Factor
	if err := f.FactorizeWithJitter(a, n, n); err != nil {
		t.Fatal(err)
	}
	if f.Jitter() != 1e-10*mean {
		t.Errorf("Jitter = %g, want 1e-10·mean = %g", f.Jitter(), 1e-10*mean)
	}
	// LogDet is that of A + jitter·I.
	aj := append([]float64(nil), a...)
	for i := 0; i < n; i++ {
		aj[i*n+i] += f.Jitter()
	}
	var ch mat.Cholesky
	if !ch.Factorize(symDense(n, aj, n)) {
		t.Fatal("gonum failed on A + jitter")
	}
	if d := math.Abs(f.LogDet() - ch.LogDet()); d > 1e-8*math.Abs(ch.LogDet()) {
		t.Errorf("LogDet %g, gonum %g", f.LogDet(), ch.LogDet())
	}

	// Smallest eigenvalue −5e-8·mean: 1e-8 fails, 1e-7 is the first success.
	n = 30
	a = withEigenvalues(n, func(i int) float64 {
		if i == 0 {
			return -5e-8
		}
		return 1 + float64(i)/float64(n)
	})
	mean = 0
	for i := 0; i < n; i++ {
		mean += a[i*n+i]
	}
	mean /= float64(n)
	// Mean diag = trace/n, so scale λ by it: rebuild with λ·mean.
	a = withEigenvalues(n, func(i int) float64 {
		if i == 0 {
			return -5e-8 * mean
		}
		return (1 + float64(i)/float64(n)) * mean
	})
	mean2 := 0.0
	for i := 0; i < n; i++ {
		mean2 += a[i*n+i]
	}
	mean2 /= float64(n)
	if err := f.Factorize(a, n, n); err == nil {
		t.Fatal("indefinite matrix factorized without jitter")
	}
	if err := f.FactorizeWithJitter(a, n, n); err != nil {
		t.Fatal(err)
	}
	if want := 1e-7 * mean2; f.Jitter() != want {
		t.Errorf("Jitter = %g, want 1e-7·mean = %g", f.Jitter(), want)
	}

	// Strongly indefinite: every rung fails, the error names the largest.
	a[0] = -mean2 / 2
	mean3 := meanDiag(a, n)
	err := f.FactorizeWithJitter(a, n, n)
	var npd *NotPDError
	if !errors.As(err, &npd) || npd.Jitter != 1e-4*mean3 || npd.Column != 0 {
		t.Errorf("err = %v, want NotPDError at column 0 with jitter %g", err, 1e-4*mean3)
	}
	if f.SolveVec(make([]float64, n), make([]float64, n)) == nil {
		t.Error("SolveVec after a failed ladder")
	}
	// A custom ladder.
	f.SetJitterLadder([]float64{5, math.NaN(), -1, 0.4, 2}) // sorted, bad entries dropped
	// A_00 = −mean2/2 needs jitter > mean2/2 ≈ 0.5·mean3: 0.4 fails, 2 succeeds.
	if err := f.FactorizeWithJitter(a, n, n); err != nil || f.Jitter() != 2*mean3 {
		t.Errorf("custom ladder: err %v jitter %g", err, f.Jitter())
	}
	f.SetJitterLadder(nil)
	if err := f.FactorizeWithJitter(a, n, n); err == nil {
		t.Error("default ladder not restored")
	}
}

// TestFactorNoAllocs: refactoring the same size with a reused Factor
// allocates nothing.
func TestFactorNoAllocs(t *testing.T) {
	for bn, bl := range factorBLASes(t) {
		n := 100
		if bl == nil {
			n = 300 // the default BLAS: the look-ahead path (panels of 192)
		}
		a := randSPD(rand.New(rand.NewPCG(8, 8)), n, n)
		b := make([]float64, n)
		x := make([]float64, n)
		inv := make([]float64, n*n)
		var f Factor
		f.SetBLAS(bl)
		run := func() {
			if err := f.Factorize(a, n, n); err != nil {
				t.Fatal(err)
			}
			_ = f.LogDet()
			if err := f.SolveVec(x, b); err != nil {
				t.Fatal(err)
			}
			if err := f.Inverse(inv, n); err != nil {
				t.Fatal(err)
			}
		}
		run()
		if allocs := testing.AllocsPerRun(10, run); allocs != 0 {
			t.Errorf("%s: %v allocations per refactorization", bn, allocs)
		}
		// FactorizeWithJitter, both when no jitter is needed and when the
		// ladder is climbed, allocates nothing on success either.
		psd, _ := indefinite(n, n/2, true)
		for _, m := range [][]float64{a, psd} {
			jit := func() {
				if err := f.FactorizeWithJitter(m, n, n); err != nil {
					t.Fatal(err)
				}
			}
			jit()
			if allocs := testing.AllocsPerRun(10, jit); allocs != 0 {
				t.Errorf("%s: %v allocations per FactorizeWithJitter", bn, allocs)
			}
		}
		if f.Jitter() == 0 {
			t.Error("the singular matrix needed no jitter")
		}
	}
}

// TestConcurrentFactors runs independent Factors on one shared BLAS (for the
// race detector).
func TestConcurrentFactors(t *testing.T) {
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			n := 150 + 70*g // from 290 on: the look-ahead path
			a := randSPD(rand.New(rand.NewPCG(9, uint64(g))), n, n)
			var f Factor
			for r := 0; r < 2; r++ {
				if err := f.Factorize(a, n, n); err != nil {
					t.Error(err)
					return
				}
				l, ld := f.L()
				if e := reconErr(n, lowerOf(blas.Lower, n, l, ld), a, n); e > 1e-13*float64(n) {
					t.Errorf("goroutine %d: reconstruction %g", g, e)
				}
			}
		}(g)
	}
	wg.Wait()
}

// meanDiag is mean(diag(A)) summed in the same order as FactorizeWithJitter.
func meanDiag(a []float64, n int) float64 {
	m := 0.0
	for i := 0; i < n; i++ {
		m += a[i*n+i]
	}
	return m / float64(n)
}

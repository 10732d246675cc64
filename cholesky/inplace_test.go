package cholesky

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pacpfl/pacpfl/linalg"
)

// equalBits reports whether x and y hold the same float64 bits.
func equalBits(x, y []float64) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if math.Float64bits(x[i]) != math.Float64bits(y[i]) {
			return false
		}
	}
	return true
}

// TestFactorInPlaceMatchesCopy: FactorizeInPlace computes the same factor,
// bit for bit, as Factorize (which factors a copy), on every BLAS and on
// one and two threads (the look-ahead path from 193 on); the strict upper
// triangle and the padding are left as they were; the solves, Inverse and
// InverseInPlace (the lower triangle of Inverse, bit for bit) work on the
// caller's matrix; the inverse consumes the factorization.
func TestFactorInPlaceMatchesCopy(t *testing.T) {
	sizes := []int{0, 1, 2, 5, 33, 64, 65, 150, 257, 400}
	if lightTests() {
		sizes = []int{0, 1, 2, 5, 33, 65, 100}
	}
	bls := factorBLASes(t)
	bls["native/2"] = linalg.NewNative(2)
	for bn, bl := range bls {
		var f, g Factor // reused across sizes
		f.SetBLAS(bl)
		g.SetBLAS(bl)
		rng := rand.New(rand.NewPCG(11, 11))
		for _, n := range sizes {
			lda := n + 3
			a := randSPD(rng, n, lda)
			orig := append([]float64(nil), a...)
			if err := g.Factorize(a, n, lda); err != nil {
				t.Fatalf("%s n=%d: %v", bn, n, err)
			}
			if err := f.FactorizeInPlace(a, n, lda); err != nil {
				t.Fatalf("%s n=%d: in place: %v", bn, n, err)
			}
			l, ld := f.L()
			lc, ldc := g.L()
			if ld != lda || f.N() != n || f.Jitter() != 0 {
				t.Fatalf("%s n=%d: stride %d N %d jitter %g", bn, n, ld, f.N(), f.Jitter())
			}
			if n > 0 && &l[0] != &a[0] {
				t.Fatalf("%s n=%d: L is not the caller's matrix", bn, n)
			}
			for i := 0; i < n; i++ {
				if !equalBits(l[i*ld:i*ld+i+1], lc[i*ldc:i*ldc+i+1]) {
					t.Fatalf("%s n=%d: row %d of L differs from Factorize's", bn, n, i)
				}
				if !equalBits(a[i*lda+i+1:min((i+1)*lda, len(a))], orig[i*lda+i+1:min((i+1)*lda, len(a))]) {
					t.Fatalf("%s n=%d: row %d: the strict upper triangle or the padding changed", bn, n, i)
				}
			}
			if math.Float64bits(f.LogDet()) != math.Float64bits(g.LogDet()) {
				t.Errorf("%s n=%d: LogDet %v, Factorize's %v", bn, n, f.LogDet(), g.LogDet())
			}
			if n == 0 {
				continue
			}
			b := make([]float64, n)
			for i := range b {
				b[i] = rng.NormFloat64()
			}
			x, xc := make([]float64, n), make([]float64, n)
			if err := f.SolveVec(x, b); err != nil {
				t.Fatal(err)
			}
			if err := g.SolveVec(xc, b); err != nil {
				t.Fatal(err)
			}
			if !equalBits(x, xc) {
				t.Errorf("%s n=%d: SolveVec differs", bn, n)
			}
			bm, bc := append([]float64(nil), b...), append([]float64(nil), b...)
			if err := f.Solve(bm, 1, bm, 1, 1); err != nil {
				t.Fatal(err)
			}
			if err := g.Solve(bc, 1, bc, 1, 1); err != nil {
				t.Fatal(err)
			}
			if !equalBits(bm, bc) {
				t.Errorf("%s n=%d: Solve differs", bn, n)
			}
			inv, invc := make([]float64, n*n), make([]float64, n*n)
			if err := f.Inverse(inv, n); err != nil {
				t.Fatal(err)
			}
			if err := g.Inverse(invc, n); err != nil {
				t.Fatal(err)
			}
			if !equalBits(inv, invc) {
				t.Errorf("%s n=%d: Inverse differs", bn, n)
			}
			li, ldi, err := f.InverseInPlace()
			if err != nil || ldi != lda || &li[0] != &a[0] {
				t.Fatalf("%s n=%d: InverseInPlace: %v, stride %d", bn, n, err, ldi)
			}
			for i := 0; i < n; i++ {
				if !equalBits(li[i*ldi:i*ldi+i+1], invc[i*n:i*n+i+1]) {
					t.Fatalf("%s n=%d: row %d of InverseInPlace differs from Inverse", bn, n, i)
				}
				if !equalBits(a[i*lda+i+1:min((i+1)*lda, len(a))], orig[i*lda+i+1:min((i+1)*lda, len(a))]) {
					t.Fatalf("%s n=%d: InverseInPlace wrote above the diagonal of row %d", bn, n, i)
				}
			}
			if f.N() != 0 || !math.IsNaN(f.LogDet()) || f.SolveVec(x, b) == nil {
				t.Errorf("%s n=%d: the factorization survived InverseInPlace", bn, n)
			}
			if _, _, err := f.InverseInPlace(); err == nil {
				t.Errorf("%s n=%d: InverseInPlace twice", bn, n)
			}
			// Factorize's own copy still works after in-place use.
			if err := f.Factorize(orig, n, lda); err != nil {
				t.Fatal(err)
			}
			if l, ld := f.L(); ld != n || &l[0] == &orig[0] {
				t.Errorf("%s n=%d: Factorize after FactorizeInPlace did not use its own copy", bn, n)
			}
		}
	}
}

// TestFactorInPlaceJitter: the jitter ladder in place restores A from the
// strict upper triangle before each retry, so its factor, jitter and
// log-determinant are FactorizeWithJitter's bit for bit; a failure leaves
// the caller's matrix as it was.
func TestFactorInPlaceJitter(t *testing.T) {
	for _, n := range []int{1, 9, 40, 300} {
		for _, k := range []int{0, n / 2, n - 1} {
			for _, singular := range []bool{true, false} {
				a, _ := indefinite(n, k, singular)
				orig := append([]float64(nil), a...)
				var f, g Factor
				errc := g.FactorizeWithJitter(a, n, n)
				err := f.FactorizeInPlaceWithJitter(a, n, n)
				if (err == nil) != (errc == nil) {
					t.Fatalf("n=%d k=%d singular=%v: in place %v, copy %v", n, k, singular, err, errc)
				}
				if err != nil {
					var npd, npdc *NotPDError
					if !errors.As(err, &npd) || !errors.As(errc, &npdc) || *npd != *npdc {
						t.Errorf("n=%d k=%d: errors %v and %v differ", n, k, err, errc)
					}
					if !equalBits(a, orig) {
						t.Errorf("n=%d k=%d singular=%v: a failed ladder did not restore A", n, k, singular)
					}
					continue
				}
				if f.Jitter() != g.Jitter() || f.Jitter() == 0 {
					t.Errorf("n=%d k=%d: jitter %g, copy %g", n, k, f.Jitter(), g.Jitter())
				}
				if math.Float64bits(f.LogDet()) != math.Float64bits(g.LogDet()) {
					t.Errorf("n=%d k=%d: LogDet differs", n, k)
				}
				l, ld := f.L()
				lc, ldc := g.L()
				for i := 0; i < n; i++ {
					if !equalBits(l[i*ld:i*ld+i+1], lc[i*ldc:i*ldc+i+1]) {
						t.Fatalf("n=%d k=%d: row %d of L differs", n, k, i)
					}
					if !equalBits(a[i*n+i+1:(i+1)*n], orig[i*n+i+1:(i+1)*n]) {
						t.Fatalf("n=%d k=%d: the strict upper triangle changed", n, k)
					}
				}
			}
		}
	}
	// Without the ladder a failure restores A too.
	a, _ := indefinite(50, 20, false)
	orig := append([]float64(nil), a...)
	var f Factor
	var npd *NotPDError
	if err := f.FactorizeInPlace(a, 50, 50); !errors.As(err, &npd) || npd.Column != 20 || npd.Jitter != 0 {
		t.Errorf("err = %v, want NotPDError at column 20", err)
	}
	if !equalBits(a, orig) || f.N() != 0 {
		t.Error("a failed FactorizeInPlace did not restore A")
	}
	// Non-finite entries of the lower triangle: nothing is touched.
	a[3*50+1] = math.NaN()
	orig = append([]float64(nil), a...)
	if err := f.FactorizeInPlaceWithJitter(a, 50, 50); !errors.Is(err, ErrNonFinite) {
		t.Errorf("err = %v, want ErrNonFinite", err)
	}
	if !equalBits(a, orig) {
		t.Error("a rejected matrix was modified")
	}
	if err := f.FactorizeInPlace(a[:10], 50, 50); err == nil {
		t.Error("a short matrix was accepted")
	}
}

// TestFactorInPlaceNoAllocs: in place, the factorization, the solve and the
// inverse allocate nothing in steady state, and the Factor holds no n×n
// buffer of its own (Footprint), only the leaf kernels' scratch and, on
// two threads, the inverse's n²/4 for its concurrent halves.
func TestFactorInPlaceNoAllocs(t *testing.T) {
	n := 600
	if lightTests() {
		n = 300
	}
	for _, threads := range []int{1, 2} {
		bl := linalg.NewNative(threads)
		spd := randSPD(rand.New(rand.NewPCG(12, 12)), n, n)
		psd, _ := indefinite(n, n/2, true)
		a := make([]float64, n*n)
		x := make([]float64, n)
		b := make([]float64, n)
		var f Factor
		f.SetBLAS(bl)
		for _, src := range [][]float64{spd, psd} {
			run := func() {
				copy(a, src)
				if err := f.FactorizeInPlaceWithJitter(a, n, n); err != nil {
					t.Fatal(err)
				}
				if err := f.SolveVec(x, b); err != nil {
					t.Fatal(err)
				}
				if _, _, err := f.InverseInPlace(); err != nil {
					t.Fatal(err)
				}
			}
			run()
			// Steady state: the fewest of a few measurements, since a
			// garbage collection (frequent under load) empties the
			// sync.Pools that recycle the kernels' workspaces (lapack.go).
			allocs := testing.AllocsPerRun(3, run)
			for try := 0; try < 4 && allocs != 0; try++ {
				allocs = min(allocs, testing.AllocsPerRun(3, run))
			}
			if allocs != 0 {
				t.Errorf("threads=%d: %v allocations", threads, allocs)
			}
		}
		fp := float64(f.Footprint())
		sq := float64(n) * float64(n)
		t.Logf("threads=%d n=%d: Footprint %.3f·n²", threads, n, fp/sq)
		limit := 300_000.0
		if threads > 1 {
			limit += 0.27 * sq
		}
		if fp > limit {
			t.Errorf("threads=%d: Footprint %g floats > %g", threads, fp, limit)
		}
		if err := f.Factorize(spd, n, n); err != nil {
			t.Fatal(err)
		}
		if float64(f.Footprint()) < sq {
			t.Error("Footprint does not count Factorize's copy")
		}
	}
}

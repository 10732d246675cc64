package linalg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/blas"
)

// The shared BLAS suite: every compiled-in backend (linalg.Backends()) and a
// few Native variants with tiny cache blocks (so block edges MC±1, KC±1,
// NC±1 are cheap to reach) and several goroutines, checked against naive
// loops written here.

type namedBLAS struct {
	name string
	impl blas.Float64
}

// Small blocks for the variants: MC=12, KC=16, NC=24 (rounded to tiles).
const tMC, tKC, tNC = 12, 16, 24

func testBackends(t *testing.T) []namedBLAS {
	var out []namedBLAS
	if raceEnabled {
		return []namedBLAS{
			{"native-smallblocks-3threads-grid", smallBlocks(t, 3, scheduleGrid)},
			{"native-smallblocks-3threads-sharedB", smallBlocks(t, 3, scheduleShared)},
		}
	}
	for _, name := range Backends() {
		impl, err := Backend(name)
		if err != nil {
			t.Fatalf("Backend(%q): %v", name, err)
		}
		out = append(out, namedBLAS{name, impl})
	}
	threads := []int{1, 2, 3}
	if runtime.GOARCH != "amd64" {
		// Emulated (qemu in CI) and ~20× slower: one parallel variant.
		threads = []int{2}
	}
	for _, th := range threads {
		out = append(out, namedBLAS{fmt.Sprintf("native-smallblocks-%dthreads", th), smallBlocks(t, th, scheduleAuto)})
		if th > 1 {
			out = append(out,
				namedBLAS{fmt.Sprintf("native-smallblocks-%dthreads-grid", th), smallBlocks(t, th, scheduleGrid)},
				namedBLAS{fmt.Sprintf("native-smallblocks-%dthreads-sharedB", th), smallBlocks(t, th, scheduleShared)})
		}
	}
	return out
}

// smallBlocks is a Native on th goroutines with the test's small cache
// blocks and the GEMM schedule s.
func smallBlocks(t *testing.T, th int, s gemmSchedule) *Native {
	nat := NewNative(th)
	if err := nat.SetBlocking(tMC, tKC, tNC); err != nil {
		t.Fatal(err)
	}
	nat.schedule.Store(int32(s))
	return nat
}

// forceParallel makes every call eligible for the parallel paths.
func forceParallel(t *testing.T) {
	oldF, oldG := parallelMinFlops, gemvMinParallel
	parallelMinFlops, gemvMinParallel = 0, 0
	t.Cleanup(func() { parallelMinFlops, gemvMinParallel = oldF, oldG })
}

// dims are the sizes shapes are drawn from: tiny, around the test block sizes
// and micro-tiles, and a few larger.
var dims = []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 15, 16, 17, 23, 24, 25, 31, 33, 47, 49, 64, 70}

var alphas = []float64{0, 1, -1.5}
var betas = []float64{0, 1, 0.5}

// sentinel fills the unused parts of every array: it must come back unchanged.
const sentinel = 1234.5

func randMat(rnd *rand.Rand, rows, cols, ld int) []float64 {
	a := make([]float64, max(0, (rows-1)*ld+cols)+3) // 3 trailing sentinels
	for i := range a {
		a[i] = sentinel
	}
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			a[i*ld+j] = rnd.Float64()*2 - 1
		}
	}
	return a
}

func pickLd(rnd *rand.Rand, cols int) int {
	if rnd.IntN(2) == 0 {
		return max(1, cols)
	}
	return max(1, cols) + 1 + rnd.IntN(5)
}

func transName(t blas.Transpose) string {
	if t == blas.NoTrans {
		return "N"
	}
	return "T"
}

// closeEnough: |got-want| <= 1e-12*(k+1)*scale, where scale bounds the sum of
// magnitudes that built the value; NaN must match NaN only where expected.
func closeEnough(got, want, scale float64, k int) bool {
	if math.IsNaN(want) || math.IsNaN(got) {
		return math.IsNaN(want) && math.IsNaN(got)
	}
	return math.Abs(got-want) <= 1e-12*float64(k+1)*(scale+1e-300)
}

func TestDgemmSuite(t *testing.T) {
	forceParallel(t)
	for _, be := range testBackends(t) {
		t.Run(be.name, func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(1, 2))
			trans := []blas.Transpose{blas.NoTrans, blas.Trans}
			cases := 0
			for _, tA := range trans {
				for _, tB := range trans {
					for _, alpha := range alphas {
						for _, beta := range betas {
							shapes := [][3]int{{1, 1, 1}, {0, 3, 2}, {3, 0, 2}, {3, 2, 0}, {4, 1, 1}, {1, 4, 1},
								{1, 1, 4}, {4, 4, 4}, {5, 4, 3},
								{tMC - 1, tNC + 1, tKC + 1}, {tMC + 1, tNC - 1, tKC - 1}, {tMC, tNC, tKC},
								{2*tMC + 1, 2*tNC + 1, 2*tKC + 1}}
							for r := 0; r < 6; r++ {
								shapes = append(shapes, [3]int{dims[rnd.IntN(len(dims))], dims[rnd.IntN(len(dims))],
									dims[rnd.IntN(len(dims))]})
							}
							for _, s := range shapes {
								checkDgemm(t, rnd, be.name, be.impl, tA, tB, s[0], s[1], s[2], alpha, beta)
								cases++
							}
						}
					}
				}
			}
			if cases == 0 {
				t.Fatal("no case ran")
			}
		})
	}
}

func checkDgemm(t *testing.T, rnd *rand.Rand, name string, impl blas.Float64, tA, tB blas.Transpose, m, n, k int, alpha,
	beta float64) {
	t.Helper()
	ar, ac := m, k
	if tA == blas.Trans {
		ar, ac = k, m
	}
	br, bc := k, n
	if tB == blas.Trans {
		br, bc = n, k
	}
	lda, ldb, ldc := pickLd(rnd, ac), pickLd(rnd, bc), pickLd(rnd, n)
	a, b, c := randMat(rnd, ar, ac, lda), randMat(rnd, br, bc, ldb), randMat(rnd, m, n, ldc)
	if beta == 0 && m > 0 && n > 0 {
		c[0] = math.NaN() // must be overwritten
		c[(m-1)*ldc+n-1] = math.NaN()
	}
	// BLAS does not read A or B when alpha == 0, so their NaNs must not
	// reach C. gonum v0.17 computes 0*NaN anyway: the probe skips it.
	// (OpenBLAS's AVX-512 kernels do the same; the openblas backend's guard
	// must hide it, see refscalars.go.)
	if alpha == 0 && name != "gonum" {
		if ar > 0 && ac > 0 {
			a[0], a[(ar-1)*lda+ac-1] = math.NaN(), math.NaN()
		}
		if br > 0 && bc > 0 {
			b[0], b[(br-1)*ldb+bc-1] = math.NaN(), math.NaN()
		}
	}
	c0 := append([]float64(nil), c...)
	impl.Dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	at := func(i, l int) float64 {
		if tA == blas.Trans {
			return a[l*lda+i]
		}
		return a[i*lda+l]
	}
	bt := func(l, j int) float64 {
		if tB == blas.Trans {
			return b[j*ldb+l]
		}
		return b[l*ldb+j]
	}
	for idx := range c {
		i, j := idx/ldc, idx%ldc
		if i >= m || j >= n {
			if c[idx] != c0[idx] {
				t.Fatalf("Dgemm %s%s m=%d n=%d k=%d: element %d outside C changed: %v -> %v", transName(tA),
					transName(tB), m, n, k, idx, c0[idx], c[idx])
			}
			continue
		}
		var want, scale float64
		if alpha != 0 {
			for l := 0; l < k; l++ {
				want += at(i, l) * bt(l, j)
				scale += math.Abs(at(i, l) * bt(l, j))
			}
			want *= alpha
			scale *= math.Abs(alpha)
		}
		if beta != 0 {
			want += beta * c0[idx]
			scale += math.Abs(beta * c0[idx])
		}
		if !closeEnough(c[idx], want, scale, k) {
			t.Fatalf("Dgemm %s%s m=%d n=%d k=%d alpha=%v beta=%v lda=%d ldb=%d ldc=%d: C[%d][%d] = %v, want %v",
				transName(tA), transName(tB), m, n, k, alpha, beta, lda, ldb, ldc, i, j, c[idx], want)
		}
	}
}

func TestDsyrkSuite(t *testing.T) {
	forceParallel(t)
	for _, be := range testBackends(t) {
		t.Run(be.name, func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(3, 4))
			for _, ul := range []blas.Uplo{blas.Upper, blas.Lower} {
				for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
					for _, alpha := range alphas {
						for _, beta := range betas {
							shapes := [][2]int{{1, 1}, {0, 3}, {3, 0}, {tMC + 1, tKC - 1}, {tMC - 1, tKC + 1},
								{tNC + 1, tKC}, {2*tNC + 3, 2*tKC + 1}}
							for r := 0; r < 5; r++ {
								shapes = append(shapes, [2]int{dims[rnd.IntN(len(dims))], dims[rnd.IntN(len(dims))]})
							}
							for _, s := range shapes {
								checkDsyrk(t, rnd, be.name, be.impl, ul, tA, s[0], s[1], alpha, beta)
							}
						}
					}
				}
			}
		})
	}
}

func checkDsyrk(t *testing.T, rnd *rand.Rand, name string, impl blas.Float64, ul blas.Uplo, tA blas.Transpose, n, k int,
	alpha, beta float64) {
	t.Helper()
	ar, ac := n, k
	if tA == blas.Trans {
		ar, ac = k, n
	}
	lda, ldc := pickLd(rnd, ac), pickLd(rnd, n)
	a, c := randMat(rnd, ar, ac, lda), randMat(rnd, n, n, ldc)
	// gonum v0.17's Dsyrk (Lower, Trans) scales C by beta instead of
	// overwriting it when beta == 0, so a NaN survives; skip the NaN probe
	// there only (a known gonum deviation from BLAS, not ours to fix).
	nanProbe := beta == 0 && n > 0 && !(name == "gonum" && ul == blas.Lower && tA == blas.Trans)
	if nanProbe {
		c[(n-1)*ldc+n-1] = math.NaN()
		if ul == blas.Upper {
			c[n-1] = math.NaN()
		} else {
			c[(n-1)*ldc] = math.NaN()
		}
	}
	c0 := append([]float64(nil), c...)
	impl.Dsyrk(ul, tA, n, k, alpha, a, lda, beta, c, ldc)
	at := func(i, l int) float64 { // op(A)[i][l]
		if tA == blas.Trans {
			return a[l*lda+i]
		}
		return a[i*lda+l]
	}
	for idx := range c {
		i, j := idx/ldc, idx%ldc
		inTri := i < n && j < n && ((ul == blas.Upper && j >= i) || (ul == blas.Lower && j <= i))
		if !inTri {
			if c[idx] != c0[idx] && !(math.IsNaN(c[idx]) && math.IsNaN(c0[idx])) {
				t.Fatalf("Dsyrk ul=%v %s n=%d k=%d: element (%d,%d) outside the triangle changed", ul, transName(tA), n,
					k, i, j)
			}
			continue
		}
		var want, scale float64
		if alpha != 0 {
			for l := 0; l < k; l++ {
				want += at(i, l) * at(j, l)
				scale += math.Abs(at(i, l) * at(j, l))
			}
			want *= alpha
			scale *= math.Abs(alpha)
		}
		if beta != 0 {
			want += beta * c0[idx]
			scale += math.Abs(beta * c0[idx])
		}
		if !closeEnough(c[idx], want, scale, k) {
			t.Fatalf("Dsyrk ul=%v %s n=%d k=%d alpha=%v beta=%v lda=%d ldc=%d: C[%d][%d] = %v, want %v",
				ul, transName(tA), n, k, alpha, beta, lda, ldc, i, j, c[idx], want)
		}
	}
}

func TestDtrsmSuite(t *testing.T) {
	forceParallel(t)
	for _, be := range testBackends(t) {
		t.Run(be.name, func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(5, 6))
			for _, s := range []blas.Side{blas.Left, blas.Right} {
				for _, ul := range []blas.Uplo{blas.Upper, blas.Lower} {
					for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
						for _, d := range []blas.Diag{blas.NonUnit, blas.Unit} {
							for _, alpha := range alphas {
								// Sizes past trsmBlock (64) exercise the recursion; 300-wide B is cut
								// into slabs (trsmMinPiece) solved by separate goroutines.
								shapes := [][2]int{{1, 1}, {0, 3}, {3, 0}, {5, 7}, {65, 9}, {9, 65}, {70, 33}, {33, 70},
									{129, 40}, {40, 129}}
								// 2+ slabs of trsmMinPiece (once per combination: the
								// check is O(m·n·k)).
								if alpha == -1.5 {
									shapes = append(shapes, [2]int{20, 300}, [2]int{300, 20})
								}
								for r := 0; r < 3; r++ {
									shapes = append(shapes,
										[2]int{dims[rnd.IntN(len(dims))], dims[rnd.IntN(len(dims))]})
								}
								for _, sh := range shapes {
									checkDtrsm(t, rnd, be.impl, s, ul, tA, d, sh[0], sh[1], alpha)
								}
							}
						}
					}
				}
			}
		})
	}
}

func checkDtrsm(t *testing.T, rnd *rand.Rand, impl blas.Float64, s blas.Side, ul blas.Uplo, tA blas.Transpose,
	d blas.Diag, m, n int, alpha float64) {
	t.Helper()
	k := n
	if s == blas.Left {
		k = m
	}
	lda, ldb := pickLd(rnd, k), pickLd(rnd, n)
	// A: well conditioned (|diag| in [1,2], off-diagonal O(1/k)); the other
	// triangle (and the diagonal when Unit) is NaN: it must not be read.
	a := randMat(rnd, k, k, lda)
	for i := 0; i < k; i++ {
		for j := 0; j < k; j++ {
			v := &a[i*lda+j]
			switch {
			case i == j:
				if d == blas.Unit {
					*v = math.NaN()
				} else {
					*v = math.Copysign(1+math.Abs(*v), *v)
				}
			case (ul == blas.Upper) == (j > i):
				*v /= float64(k)
			default:
				*v = math.NaN()
			}
		}
	}
	b := randMat(rnd, m, n, ldb)
	if alpha == 0 && m > 0 && n > 0 {
		b[0] = math.NaN() // alpha == 0: B is set to zero, NaN included
	}
	b0 := append([]float64(nil), b...)
	impl.Dtrsm(s, ul, tA, d, m, n, alpha, a, lda, b, ldb)
	// op(A) as a dense k×k matrix (zeros outside the triangle), so the
	// residual below is plain loops (cheap enough under qemu).
	op := make([]float64, k*k)
	for i := 0; i < k; i++ {
		for j := 0; j < k; j++ {
			r, c := i, j
			if tA == blas.Trans {
				r, c = j, i
			}
			switch {
			case r == c && d == blas.Unit:
				op[i*k+j] = 1
			case (ul == blas.Upper && c < r) || (ul == blas.Lower && c > r):
			default:
				op[i*k+j] = a[r*lda+c]
			}
		}
	}
	// Residual: op(A)·X (Left) or X·op(A) (Right) must equal alpha·B0.
	for idx := range b {
		i, j := idx/ldb, idx%ldb
		if i >= m || j >= n {
			if b[idx] != b0[idx] {
				t.Fatalf("Dtrsm: element %d outside B changed", idx)
			}
			continue
		}
		var got, scale float64
		if s == blas.Left {
			row := op[i*k : i*k+k]
			for l, v := range row {
				p := v * b[l*ldb+j]
				got += p
				scale += math.Abs(p)
			}
		} else {
			brow := b[i*ldb : i*ldb+n]
			for l, v := range brow {
				p := v * op[l*k+j]
				got += p
				scale += math.Abs(p)
			}
		}
		want := 0.0
		if alpha != 0 {
			want = alpha * b0[idx]
		}
		if !closeEnough(got, want, scale+math.Abs(want), k) {
			t.Fatalf("Dtrsm side=%v ul=%v %s diag=%v m=%d n=%d alpha=%v lda=%d ldb=%d: residual at (%d,%d): op(A)X = "+
				"%v, alpha*B = %v",
				s, ul, transName(tA), d, m, n, alpha, lda, ldb, i, j, got, want)
		}
	}
}

func TestDgemvSuite(t *testing.T) {
	forceParallel(t)
	for _, be := range testBackends(t) {
		t.Run(be.name, func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(7, 8))
			for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
				for _, alpha := range alphas {
					for _, beta := range betas {
						for _, inc := range [][2]int{{1, 1}, {2, 3}, {-1, 1}, {1, -2}} {
							shapes := [][2]int{{1, 1}, {0, 3}, {3, 0}, {200, 130}, {130, 200}}
							for r := 0; r < 4; r++ {
								shapes = append(shapes, [2]int{dims[rnd.IntN(len(dims))], dims[rnd.IntN(len(dims))]})
							}
							for _, sh := range shapes {
								checkDgemv(t, rnd, be.name, be.impl, tA, sh[0], sh[1], alpha, beta, inc[0], inc[1])
							}
						}
					}
				}
			}
		})
	}
}

func checkDgemv(t *testing.T, rnd *rand.Rand, name string, impl blas.Float64, tA blas.Transpose, m, n int, alpha,
	beta float64, incX, incY int) {
	t.Helper()
	lda := pickLd(rnd, n)
	a := randMat(rnd, m, n, lda)
	lenX, lenY := n, m
	if tA == blas.Trans {
		lenX, lenY = m, n
	}
	absInc := func(i int) int { return max(i, -i) }
	x := randMat(rnd, 1, max(0, (lenX-1)*absInc(incX)+1), 1)
	y := randMat(rnd, 1, max(0, (lenY-1)*absInc(incY)+1), 1)
	if beta == 0 && lenY > 0 {
		y[0] = math.NaN()
	}
	y0 := append([]float64(nil), y...)
	impl.Dgemv(tA, m, n, alpha, a, lda, x, incX, beta, y, incY)
	if m == 0 || n == 0 {
		for i := range y {
			if y[i] != y0[i] && !(math.IsNaN(y[i]) && math.IsNaN(y0[i])) {
				t.Fatalf("Dgemv with an empty matrix changed y")
			}
		}
		return
	}
	pos := func(i, length, inc int) int {
		if inc > 0 {
			return i * inc
		}
		return (length - 1 - i) * -inc
	}
	touched := map[int]bool{}
	for i := 0; i < lenY; i++ {
		p := pos(i, lenY, incY)
		touched[p] = true
		var want, scale float64
		if alpha != 0 {
			for l := 0; l < lenX; l++ {
				var av float64
				if tA == blas.Trans {
					av = a[l*lda+i]
				} else {
					av = a[i*lda+l]
				}
				v := av * x[pos(l, lenX, incX)]
				want += v
				scale += math.Abs(v)
			}
			want *= alpha
			scale *= math.Abs(alpha)
		}
		if beta != 0 {
			want += beta * y0[p]
			scale += math.Abs(beta * y0[p])
		}
		if !closeEnough(y[p], want, scale, lenX) {
			t.Fatalf("Dgemv %s m=%d n=%d alpha=%v beta=%v incX=%d incY=%d: y[%d] = %v, want %v", transName(tA), m, n,
				alpha, beta, incX, incY, i, y[p], want)
		}
	}
	// gonum v0.17's pure-Go GemvT (every GOARCH but amd64) clears all of y
	// when beta == 0 and incY == 1, past its n elements too; skip the tail
	// check there only.
	tail := len(y)
	if name == "gonum" && runtime.GOARCH != "amd64" {
		tail = (lenY-1)*max(incY, -incY) + 1
	}
	for i := range y[:tail] {
		if !touched[i] && y[i] != y0[i] {
			t.Fatalf("Dgemv %s m=%d n=%d alpha=%v beta=%v incX=%d incY=%d: y[%d] between strides changed: %v -> %v",
				transName(tA), m, n, alpha, beta, incX, incY, i, y0[i], y[i])
		}
	}
}

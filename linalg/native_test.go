package linalg

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/pacpfl/pacpfl/asm"
	"github.com/pacpfl/pacpfl/asm/asmtest"
)

func panicText(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	f()
	return ""
}

// Bad arguments panic with gonum's messages, checked in gonum's order.
func TestPanicMessagesMatchGonum(t *testing.T) {
	a, b, c := make([]float64, 100), make([]float64, 100), make([]float64, 100)
	cases := map[string]func(impl blas.Float64){
		"gemm bad trans": func(impl blas.Float64) { impl.Dgemm('X', blas.NoTrans, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2) },
		"gemm m<0": func(impl blas.Float64) {
			impl.Dgemm(blas.NoTrans, blas.NoTrans, -1, 2, 2, 1, a, 2, b, 2, 0, c, 2)
		},
		"gemm k<0 and lda": func(impl blas.Float64) {
			impl.Dgemm(blas.NoTrans, blas.NoTrans, 2, 2, -1, 1, a, 0, b, 2, 0, c, 2)
		},
		"gemm lda": func(impl blas.Float64) {
			impl.Dgemm(blas.Trans, blas.NoTrans, 3, 2, 2, 1, a, 2, b, 2, 0, c, 2)
		},
		"gemm ldc": func(impl blas.Float64) {
			impl.Dgemm(blas.NoTrans, blas.NoTrans, 2, 3, 2, 1, a, 2, b, 3, 0, c, 2)
		},
		"gemm short b": func(impl blas.Float64) {
			impl.Dgemm(blas.NoTrans, blas.Trans, 2, 20, 10, 1, a, 10, b[:50], 10, 0, c, 20)
		},
		"gemm short c": func(impl blas.Float64) {
			impl.Dgemm(blas.NoTrans, blas.NoTrans, 9, 9, 2, 1, a, 2, b, 9, 0, c[:80], 9)
		},
		"syrk uplo": func(impl blas.Float64) { impl.Dsyrk(blas.All, blas.NoTrans, 2, 2, 1, a, 2, 0, c, 2) },
		"syrk ldc":  func(impl blas.Float64) { impl.Dsyrk(blas.Upper, blas.Trans, 3, 2, 1, a, 3, 0, c, 2) },
		"syrk short a": func(impl blas.Float64) {
			impl.Dsyrk(blas.Upper, blas.NoTrans, 20, 10, 1, a, 10, 0, make([]float64, 400), 20)
		},
		"trsm side": func(impl blas.Float64) {
			impl.Dtrsm('X', blas.Upper, blas.NoTrans, blas.Unit, 2, 2, 1, a, 2, b, 2)
		},
		"trsm diag": func(impl blas.Float64) {
			impl.Dtrsm(blas.Left, blas.Upper, blas.NoTrans, 'X', 2, 2, 1, a, 2, b, 2)
		},
		"trsm n<0": func(impl blas.Float64) {
			impl.Dtrsm(blas.Right, blas.Upper, blas.NoTrans, blas.Unit, 2, -2, 1, a, 2, b, 2)
		},
		"trsm lda right": func(impl blas.Float64) {
			impl.Dtrsm(blas.Right, blas.Lower, blas.Trans, blas.Unit, 5, 3, 1, a, 2, b, 3)
		},
		"trsm short b": func(impl blas.Float64) {
			impl.Dtrsm(blas.Left, blas.Lower, blas.Trans, blas.Unit, 11, 10, 1, a, 10, b, 10)
		},
		"gemv incx":    func(impl blas.Float64) { impl.Dgemv(blas.NoTrans, 2, 2, 1, a, 2, b, 0, 0, c, 1) },
		"gemv short y": func(impl blas.Float64) { impl.Dgemv(blas.Trans, 2, 20, 1, a, 20, b, 1, 0, c[:19], 1) },
	}
	nat := NewNative(2)
	for name, call := range cases {
		want := panicText(func() { call(gonum.Implementation{}) })
		if want == "" {
			t.Fatalf("%s: gonum did not panic (bad test case)", name)
		}
		if got := panicText(func() { call(nat) }); got != want {
			t.Errorf("%s: native panics %q, gonum %q", name, got, want)
		}
	}
}

func TestSettings(t *testing.T) {
	n := NewNative(3)
	if n.Threads() != 3 {
		t.Errorf("Threads() = %d, want 3", n.Threads())
	}
	n.SetThreads(0)
	if n.Threads() != runtime.GOMAXPROCS(0) {
		t.Errorf("Threads() = %d with SetThreads(0), want GOMAXPROCS %d", n.Threads(), runtime.GOMAXPROCS(0))
	}
	if err := n.SetBlocking(0, 10, 10); err == nil {
		t.Error("SetBlocking(0, 10, 10) succeeded")
	}
	if err := n.SetBlocking(10, 20, 30); err != nil || n.Blocking() != (Blocking{10, 20, 30}) {
		t.Errorf("SetBlocking(10,20,30): %v, Blocking() = %+v", err, n.Blocking())
	}
	d := DefaultBlocking()
	if d.MC < 1 || d.KC < 1 || d.NC < 1 {
		t.Errorf("DefaultBlocking() = %+v", d)
	}
	var zero Native // usable without NewNative
	c := []float64{0}
	zero.Dgemm(blas.NoTrans, blas.NoTrans, 1, 1, 1, 1, []float64{2}, 1, []float64{3}, 1, 0, c, 1)
	if c[0] != 6 || zero.Blocking() != DefaultBlocking() {
		t.Errorf("zero Native: 2*3 = %v, Blocking() = %+v", c[0], zero.Blocking())
	}
	impl, err := Backend("native")
	if err != nil || impl != blas.Float64(DefaultNative) {
		t.Errorf(`Backend("native") = %v, %v; want DefaultNative`, impl, err)
	}
}

// Steady-state calls allocate nothing, on one goroutine and on several.
func TestNoAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	forceParallel(t) // every routine takes its parallel path with 2 threads
	rnd := rand.New(rand.NewPCG(9, 9))
	const n = 150
	a, b, c := randMat(rnd, n, n, n), randMat(rnd, n, n, n), randMat(rnd, n, n, n)
	for i := 0; i < n; i++ {
		a[i*n+i] = 4
	}
	for _, th := range []int{1, 2} {
		nat := NewNative(th)
		calls := map[string]func(){
			"Dgemm": func() { nat.Dgemm(blas.NoTrans, blas.Trans, n, n, n, 1, a, n, b, n, 0, c, n) },
			// C 40×40 with k = 150: the shared-B schedule (useSharedB).
			"Dgemm shared-B": func() { nat.Dgemm(blas.NoTrans, blas.NoTrans, 40, 40, n, 1, a, n, b, n, 0, c, n) },
			"Dsyrk":          func() { nat.Dsyrk(blas.Lower, blas.NoTrans, n, n, 1, a, n, 0, c, n) },
			"Dtrsm": func() {
				nat.Dtrsm(blas.Left, blas.Upper, blas.NoTrans, blas.NonUnit, n, n, 1, a, n, c, n)
			},
			"Dtrsm Right": func() {
				nat.Dtrsm(blas.Right, blas.Lower, blas.Trans, blas.NonUnit, n, n, 1, a, n, c, n)
			},
			"Dgemv": func() { nat.Dgemv(blas.NoTrans, n, n, 1, a, n, b, 1, 0, c, 1) },
		}
		for name, f := range calls {
			if allocs := testing.AllocsPerRun(5, f); allocs != 0 {
				t.Errorf("%s with %d threads: %v allocations per call", name, th, allocs)
			}
		}
	}
}

// Several goroutines share one Native (and the worker pool): results must be
// those of a lone call. Meant for -race.
func TestConcurrentUse(t *testing.T) {
	forceParallel(t)
	rnd := rand.New(rand.NewPCG(10, 11))
	const m, n, k = 37, 29, 41
	a, b := randMat(rnd, m, k, k), randMat(rnd, k, n, n)
	want := make([]float64, m*n)
	gonum.Implementation{}.Dgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, a, k, b, n, 0, want, n)
	// The grid, and the shared-B schedule whose goroutines wait on each
	// other: 4 callers × 3 goroutines each, on a pool of fewer workers, must
	// neither deadlock nor mix results.
	grid, shared := smallBlocks(t, 2, scheduleGrid), smallBlocks(t, 3, scheduleShared)
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for g := 0; g < 8; g++ {
		nat := grid
		if g%2 == 1 {
			nat = shared
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := make([]float64, m*n)
			for r := 0; r < 10; r++ {
				nat.Dgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, a, k, b, n, 0, c, n)
				for i := range c {
					if !closeEnough(c[i], want[i], 10, k) {
						errs <- fmt.Sprintf("C[%d] = %v, want %v", i, c[i], want[i])
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// The native routines at every SIMD level this CPU/build supports (each
// level has its own micro-kernel and tile shape).
func TestEveryLevel(t *testing.T) {
	forceParallel(t)
	asmtest.ForEachLevel(t, func(t *testing.T, l asm.Level) {
		nat := NewNative(2)
		if err := nat.SetBlocking(tMC, tKC, tNC); err != nil {
			t.Fatal(err)
		}
		// The default blocks follow the level: a tile multiple of its kernel.
		var zero Native
		k, d := asm.GemmKernelFor(l), zero.Blocking()
		if d != DefaultBlocking() || (l != asm.Generic && d.MC%k.MR != 0) || d.KC < 128 || d.NC < 512 {
			t.Errorf("default blocking at %s: %+v (DefaultBlocking %+v, kernel %d×%d)", l, d, DefaultBlocking(), k.MR,
				k.NR)
		}
		rnd := rand.New(rand.NewPCG(20, uint64(l)))
		for _, s := range [][3]int{{1, 1, 1}, {7, 9, 5}, {tMC + 1, tNC + 1, tKC + 1}, {31, 17, 40}, {70, 30, 50}} {
			for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
				for _, tB := range []blas.Transpose{blas.NoTrans, blas.Trans} {
					checkDgemm(t, rnd, "native", nat, tA, tB, s[0], s[1], s[2], -1.5, 0.5)
				}
				checkDsyrk(t, rnd, "native", nat, blas.Lower, tA, s[0], s[2], 1, 0)
				checkDsyrk(t, rnd, "native", nat, blas.Upper, tA, s[1], s[2], -1.5, 1)
				checkDtrsm(t, rnd, nat, blas.Left, blas.Upper, tA, blas.NonUnit, s[0]+64, s[1], 1)
				checkDtrsm(t, rnd, nat, blas.Right, blas.Lower, tA, blas.Unit, s[0], s[1]+64, -1.5)
			}
		}
	})
}

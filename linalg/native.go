package linalg

import (
	"fmt"
	"runtime"
	"sync/atomic"

	"github.com/klauspost/cpuid/v2"

	"github.com/pacpfl/pacpfl/asm"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// Native is pacpfl's BLAS. Dgemm, Dsyrk, Dtrsm and Dgemv (and Ddot, Daxpy,
// Dscal) run on packed, cache-blocked panels with SIMD micro-kernels and
// several goroutines; every other routine is gonum's, through the embedded
// Implementation. Argument checks and their panic messages are gonum's.
//
// A Native is safe for concurrent use by several goroutines: its settings are
// atomics and every call takes its packing buffers from a shared pool.
type Native struct {
	gonum.Implementation

	threads  atomic.Int64             // <= 0: follow GOMAXPROCS at call time
	schedule atomic.Int32             // a gemmSchedule; 0 (auto) but in tests and benchmarks
	blocking atomic.Pointer[Blocking] // nil: DefaultBlocking at the level of the call
}

// Blocking holds the cache block sizes of the GEMM loops: an MC×KC block of A
// is packed to stay in L2, a KC×NC block of B in L3, and a KC×NR micro-panel
// of B in L1. MC and NC are rounded down to multiples of the micro-kernel's
// tile (at least one tile).
type Blocking struct{ MC, KC, NC int }

// DefaultNative is the instance registered as backend "native"; it uses
// GOMAXPROCS goroutines.
var DefaultNative = NewNative(0)

func init() {
	register("native", func() blas.Float64 { return DefaultNative })
}

var _ blas.Float64 = (*Native)(nil)

// NewNative returns a Native that runs on up to threads goroutines;
// threads <= 0 follows GOMAXPROCS at call time.
func NewNative(threads int) *Native {
	n := &Native{}
	n.threads.Store(int64(threads))
	return n
}

// SetThreads sets the number of goroutines a call may use (<= 0: GOMAXPROCS).
func (n *Native) SetThreads(t int) { n.threads.Store(int64(t)) }

// Threads returns the number of goroutines a call may use now.
func (n *Native) Threads() int {
	t := int(n.threads.Load())
	if t <= 0 {
		t = runtime.GOMAXPROCS(0)
	}
	return min(t, maxThreads)
}

// Blocking returns the block sizes a call uses now: those SetBlocking set,
// else the tuning's at the current level (SetTuning), else DefaultBlocking,
// which follows the SIMD level in force (so that
// asm.SetLevel or PACPFL_SIMD=avx2 switches the kernel and its blocks
// together). A zero Native is usable: one goroutine per GOMAXPROCS, default
// blocks.
func (n *Native) Blocking() Blocking {
	if b := n.blocking.Load(); b != nil {
		return *b
	}
	if t := tuning.Load(); t != nil && t.Level == asm.Current() {
		return t.Blocking
	}
	return DefaultBlocking()
}

// SetBlocking overrides the block sizes. All must be positive; KC at most
// 1<<16 (so the packed buffers stay sane).
func (n *Native) SetBlocking(mc, kc, nc int) error {
	if mc < 1 || kc < 1 || nc < 1 || mc > 1<<16 || kc > 1<<16 || nc > 1<<20 {
		return fmt.Errorf("linalg: bad GEMM blocking mc=%d kc=%d nc=%d (want 1 <= mc,kc <= 65536, 1 <= nc <= 1048576)",
			mc, kc, nc)
	}
	n.blocking.Store(&Blocking{MC: mc, KC: kc, NC: nc})
	return nil
}

// DefaultBlocking derives block sizes from the cache sizes cpuid reports and
// the micro-kernel of the SIMD level in force (asm.Current): the KC×NR
// micro-panel of B takes about half of L1D (two thirds for AVX-512), the
// MC×KC block of A about half of L2, the KC×NC block of B about half of L3
// (shared by the cores). Unknown sizes fall back to 32 KiB / 512 KiB / 8 MiB.
func DefaultBlocking() Blocking {
	l1, l2, l3 := cpuid.CPU.Cache.L1D, cpuid.CPU.Cache.L2, cpuid.CPU.Cache.L3
	if l1 <= 0 {
		l1 = 32 << 10
	}
	if l2 <= 0 {
		l2 = 512 << 10
	}
	if l3 <= 0 {
		l3 = 8 << 20
	}
	// The AVX2 kernels' k×8 B micro-panel takes half of L1D (KC = 256 on a
	// 32 KiB L1, tuned on Zen 3). The AVX-512 kernel's k×16 panel takes two
	// thirds: on Zen 5 (48 KiB L1D, 1 MiB L2) KC = 256 with MC = 252 ran
	// 64.7–70.0 GFLOP/s against 58.1–58.4 at KC = 192 and 58.4–60.8 at 384
	// (n = 1000, 2000), and MC = 120 or 384 lost 10–19 % (alternated in one
	// process, 2 cores).
	// AVX2, NEON and generic: the 6×8 kernel's blocks (the generic 4×4 one
	// is not tuned).
	nr, mr, num, den := 8, 6, 1, 2
	if asm.ConfigError() == nil && asm.Current() == asm.AVX512 {
		k := asm.GemmKernelFor(asm.AVX512)
		nr, mr, num, den = k.NR, k.MR, 2, 3
	}
	kc := clamp(l1*num/den/(8*nr), 128, 384)
	mc := clamp(l2/2/(8*kc), 4*mr, 480) / mr * mr
	nc := clamp(l3/4/(8*kc), 512, 8192) / 64 * 64
	return Blocking{MC: mc, KC: kc, NC: nc}
}

func clamp(x, lo, hi int) int { return max(lo, min(hi, x)) }

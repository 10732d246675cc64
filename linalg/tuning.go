package linalg

import (
	"fmt"
	"sync/atomic"

	"github.com/pacpfl/pacpfl/asm"
)

// Tuning is a measured choice of the native GEMM's parameters for one SIMD
// level: the micro-kernel, the cache blocks and the largest C side for which
// the shared-B schedule is used. It applies only while that level is in
// force (asm.Current), so PACPFL_SIMD=avx2 on an AVX-512 machine falls back
// to the defaults of AVX2 instead of running a tuning measured for another
// kernel. Source says where it came from (a wisdom file, a compiled-in
// table) for the reports.
type Tuning struct {
	Level    asm.Level
	Kernel   string // an asm.GemmKernels(Level) name; "" keeps the default
	Blocking Blocking
	// SharedBMax is the largest max(m, n) that the shared-B schedule takes
	// (0 keeps the default rule).
	SharedBMax int
	Source     string

	kern *asm.GemmKernel // Kernel resolved by SetTuning
}

// Validate reports whether t can be applied: a kernel of its level, block
// sizes SetBlocking would accept.
func (t *Tuning) Validate() error {
	if t.Kernel != "" {
		if _, ok := asm.GemmKernelNamed(t.Level, t.Kernel); !ok {
			return fmt.Errorf("linalg: tuning names kernel %q, which level %v does not have", t.Kernel, t.Level)
		}
	}
	b := t.Blocking
	if b.MC < 1 || b.KC < 1 || b.NC < 1 || b.MC > 1<<16 || b.KC > 1<<16 || b.NC > 1<<20 {
		return fmt.Errorf("linalg: tuning has bad blocking mc=%d kc=%d nc=%d", b.MC, b.KC, b.NC)
	}
	if t.SharedBMax < 0 || t.SharedBMax > 1<<16 {
		return fmt.Errorf("linalg: tuning has bad shared-B limit %d", t.SharedBMax)
	}
	return nil
}

var tuning atomic.Pointer[Tuning]

// SetTuning makes t the tuning of every Native that has no blocking of its
// own (nil: none, the compiled defaults). It copies t.
func SetTuning(t *Tuning) error {
	if t == nil {
		tuning.Store(nil)
		return nil
	}
	if err := t.Validate(); err != nil {
		return err
	}
	c := *t
	c.kern = nil
	if c.Kernel != "" {
		c.kern, _ = asm.GemmKernelNamed(c.Level, c.Kernel)
	}
	tuning.Store(&c)
	return nil
}

// CurrentTuning returns the tuning in force at the current SIMD level, or
// nil when the defaults apply.
func CurrentTuning() *Tuning {
	t := tuning.Load()
	if t == nil || asm.ConfigError() != nil || t.Level != asm.Current() {
		return nil
	}
	c := *t
	return &c
}

// kernel returns the micro-kernel of a call: the tuned one at the current
// level, else the level's default.
func (n *Native) kernel() *asm.GemmKernel {
	l := asm.Current()
	if t := tuning.Load(); t != nil && t.Level == l && t.kern != nil {
		return t.kern
	}
	return asm.GemmKernelFor(l)
}

// sharedB is useSharedB with the tuned limit.
func sharedB(m, n, k int) bool {
	if t := tuning.Load(); t != nil && t.SharedBMax > 0 && t.Level == asm.Current() {
		return max(m, n) <= t.SharedBMax && k >= 2*max(m, n)
	}
	return useSharedB(m, n, k)
}

// TuningSource says where the GEMM parameters in force come from: the
// Source of the tuning at the current level, or "per-level defaults".
func TuningSource() string {
	if t := tuning.Load(); t != nil && asm.ConfigError() == nil && t.Level == asm.Current() {
		if t.Source != "" {
			return t.Source
		}
		return "a tuning (SetTuning)"
	}
	return "per-level defaults"
}

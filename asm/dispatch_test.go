package asm

import (
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// forEachLevel runs f once at every SIMD level of this architecture, as a
// subtest named after the level; a level this CPU or build cannot run is a
// skipped subtest saying why (package asmtest does the same for the other
// packages; it cannot be imported here). The detected level is restored.
func forEachLevel(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	defer Configure("")
	for _, l := range ArchLevels() {
		t.Run(l.String(), func(t *testing.T) {
			if why := Unsupported(l); why != "" {
				t.Skip(why)
			}
			if err := SetLevel(l); err != nil {
				t.Fatal(err)
			}
			f(t)
		})
	}
}

// guardNaN fills everything a kernel must not touch; its payload is unusual
// so that an overwrite, even with another NaN, is detected bit for bit, and
// a read of it turns a result into NaN.
var guardNaN = math.Float64frombits(0x7ff8_dead_beef_0001)

// guardFinite is the guard of vectors a kernel writes: a stray store of
// f(guard) over a NaN guard could write the same NaN back (NaN payloads
// propagate), but over a finite one it changes the bits.
var guardFinite = math.Float64frombits(0x4059_dead_beef_0001) // ≈ 103.48

const guardLen = 8

// testLengths are the vector lengths every kernel is checked at: all of 0..70
// (every remainder of every unrolling and every tail mask up to the 64-wide
// AVX-512 loops, and past them) and a few large ones.
func testLengths() []int {
	ls := make([]int, 0, 76)
	for n := 0; n <= 70; n++ {
		ls = append(ls, n)
	}
	ls = append(ls, 127, 129, 1000)
	if !modestSizes() {
		ls = append(ls, 4097)
	}
	return ls
}

// modestSizes reports whether tests should keep their sizes small: under
// -short, -race, and on arm64, where this project's CI runs the tests under
// qemu.
func modestSizes() bool {
	return testing.Short() || raceEnabled || runtime.GOARCH == "arm64"
}

// strided is a vector of n elements at increment inc laid out inside a
// guarded buffer: view is the slice a kernel receives, start the index of
// element 0 in view (the far end for a negative inc), idx the index in view
// of every element in order. Everything in buf but the n elements is guardNaN.
type strided struct {
	buf, view []float64
	lo        int // where view starts in buf
	start     uintptr
	idx       []int
	guard     uint64 // the bits of every element outside the vector
}

func newStrided(rng *rand.Rand, n, inc, off int) strided {
	a := inc
	if a < 0 {
		a = -a
	}
	span := 0
	if n > 0 {
		span = (n-1)*a + 1
	}
	buf := make([]float64, guardLen+off+span+guardLen)
	for i := range buf {
		buf[i] = guardNaN
	}
	lo := guardLen + off
	s := strided{buf: buf, view: buf[lo : lo+span : lo+span], lo: lo, guard: math.Float64bits(guardNaN)}
	if inc < 0 && n > 0 {
		s.start = uintptr((n - 1) * a)
	}
	for i := 0; i < n; i++ {
		j := int(s.start) + i*inc
		s.idx = append(s.idx, j)
		s.view[j] = randValue(rng)
	}
	return s
}

// randValue is uniform in [-1, 1) times a random power of two in
// [2^-8, 2^8], so that sums mix magnitudes.
func randValue(rng *rand.Rand) float64 {
	return (2*rng.Float64() - 1) * math.Ldexp(1, rng.IntN(17)-8)
}

// withGuard returns s with every element outside the vector set to g.
func (s strided) withGuard(g float64) strided {
	in := map[int]bool{}
	for _, j := range s.idx {
		in[s.lo+j] = true
	}
	for i := range s.buf {
		if !in[i] {
			s.buf[i] = g
		}
	}
	s.guard = math.Float64bits(g)
	return s
}

// clone copies a strided vector so that a second kernel can run on the same
// input.
func (s strided) clone() strided {
	c := s
	c.buf = append([]float64(nil), s.buf...)
	c.view = c.buf[s.lo : s.lo+len(s.view) : s.lo+len(s.view)]
	return c
}

// checkGuards fails if anything outside the n elements of s changed.
func (s strided) checkGuards(t *testing.T, what string) {
	t.Helper()
	in := map[int]bool{}
	lo := s.lo
	for _, j := range s.idx {
		in[lo+j] = true
	}
	for i, v := range s.buf {
		if !in[i] && math.Float64bits(v) != s.guard {
			t.Fatalf("%s: wrote %v at buffer position %d outside the vector (view starts at %d, len %d)", what, v, i,
				lo, len(s.view))
		}
	}
}

// sameFloat reports a == b, treating any two NaNs as equal.
func sameFloat(a, b float64) bool {
	return a == b || math.IsNaN(a) && math.IsNaN(b)
}

func TestBoundsChecksPanic(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		x := make([]float64, 10)
		cases := map[string]func(){
			"DotUnitary short y":  func() { DotUnitary(x, x[:9]) },
			"AxpyUnitary short y": func() { AxpyUnitary(1, x, x[:9]) },
			"DotInc past end":     func() { DotInc(x, x, 6, 2, 1, 0, 0) },
			"DotInc negative":     func() { DotInc(x, x, 3, 1, uintptr(1<<64-1), 0, 1) },
			"AxpyInc past end":    func() { AxpyInc(1, x, x, 4, 1, 3, 0, 1) },
			"AxpyInc bad start":   func() { AxpyInc(1, x, x, 1, 1, 1, 10, 0) },
			"ScalInc past end":    func() { ScalInc(2, x, 4, 4) },
			"ScalInc zero inc":    func() { ScalInc(2, x, 4, 0) },
		}
		for name, f := range cases {
			func() {
				defer func() {
					r := recover()
					if r == nil {
						t.Errorf("%s: no panic", name)
						return
					}
					if s, ok := r.(string); !ok || !strings.HasPrefix(s, "asm.") {
						t.Errorf("%s: panic %v does not name the kernel", name, r)
					}
				}()
				f()
			}()
		}
		// In-range calls at the edges do not panic.
		DotInc(x, x, 5, 2, 2, 0, 1)
		DotInc(x, x, 10, uintptr(1<<64-1), 1, 9, 0)
		ScalInc(2, x, 4, 3)
		for _, v := range x {
			if v != 0 {
				t.Fatalf("in-range calls changed zeros: %v", x)
			}
		}
	})
}

// benchEachLevel runs f as a sub-benchmark at every supported level.
func benchEachLevel(b *testing.B, f func(b *testing.B)) {
	defer Configure("")
	for _, l := range Supported() {
		if err := SetLevel(l); err != nil {
			b.Fatal(err)
		}
		b.Run(l.String(), f)
	}
}

package hugepage

import (
	"testing"
	"unsafe"
)

func TestSpan(t *testing.T) {
	const z = uintptr(7) * Size // an aligned address
	for _, c := range []struct {
		name     string
		p, n     uintptr
		lo, hi   uintptr
		hasPages bool
	}{
		{"aligned, one page", z, Size, z, z + Size, true},
		{"aligned, a page and a bit", z, Size + 8, z, z + Size, true},
		{"aligned, a byte short", z, Size - 1, 0, 0, false},
		{"unaligned start, one page inside", z + 8, 2*Size - 8, z + Size, z + 2*Size, true},
		{"unaligned start, no whole page", z + 8, 2*Size - 16, 0, 0, false},
		{"unaligned, three whole pages", z + 4096, 4 * Size, z + Size, z + 4*Size, true},
		{"empty", z, 0, 0, 0, false},
		{"wraps the address space", ^uintptr(0) - 100, 4 * Size, 0, 0, false},
	} {
		lo, hi, ok := span(c.p, c.n)
		if ok != c.hasPages || (ok && (lo != c.lo || hi != c.hi)) {
			t.Errorf("%s: span(%#x, %#x) = %#x, %#x, %v; want %#x, %#x, %v", c.name, c.p, c.n, lo, hi, ok,
				c.lo, c.hi, c.hasPages)
		}
		if ok && (lo < c.p || hi > c.p+c.n || (hi-lo)%Size != 0 || lo%Size != 0) {
			t.Errorf("%s: [%#x, %#x) is not whole pages inside [%#x, %#x)", c.name, lo, hi, c.p, c.p+c.n)
		}
	}
}

func TestPagesStayInsideTheBuffer(t *testing.T) {
	for _, n := range []int{0, 1, MinFloats - 1, MinFloats, 3*MinFloats + 5} {
		s := make([]float64, n)
		b := pages(s)
		if n < MinFloats/2 && b != nil {
			t.Errorf("n = %d: %d bytes of whole huge pages in a buffer smaller than one", n, len(b))
		}
		if n >= MinFloats && b == nil {
			t.Errorf("n = %d: no whole huge page found in a buffer of two", n)
		}
		if b == nil {
			continue
		}
		lo, hi := uintptr(unsafe.Pointer(&b[0])), uintptr(unsafe.Pointer(&b[0]))+uintptr(len(b))
		start := uintptr(unsafe.Pointer(&s[0]))
		if lo%Size != 0 || len(b)%Size != 0 || lo < start || hi > start+uintptr(8*n) {
			t.Errorf("n = %d: pages [%#x, %#x) not whole huge pages inside [%#x, %#x)", n, lo, hi, start,
				start+uintptr(8*n))
		}
	}
}

func TestFloatsIsAZeroedBuffer(t *testing.T) {
	for _, n := range []int{0, 1, 1000, MinFloats, 2*MinFloats + 3} {
		s := Floats(n)
		if len(s) != n {
			t.Fatalf("Floats(%d) has length %d", n, len(s))
		}
		for i, v := range s {
			if v != 0 {
				t.Fatalf("Floats(%d)[%d] = %v, want 0", n, i, v)
			}
		}
		for i := range s {
			s[i] = float64(i)
		}
		for i, v := range s {
			if v != float64(i) {
				t.Fatalf("Floats(%d)[%d] = %v after a write of %d", n, i, v, i)
			}
		}
	}
}

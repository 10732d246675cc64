// Package hugepage allocates the large float64 buffers of the numerical
// core (the m×m matrix of a GP client update, the factorization's scratch)
// so that the kernel may back them with transparent huge pages.
//
// Those buffers are walked down their columns (the gradient passes, the
// packing of GEMM operands, the panel solves), and a column of a 2000×2000
// matrix touches 2,000 4 KiB pages, more than a core's second-level TLB
// holds; with 2 MiB pages it touches 16. Linux backs memory with huge pages
// unasked only when /sys/kernel/mm/transparent_hugepage/enabled is
// "always"; with "madvise" (the default of Debian and Ubuntu) a program has
// to ask for them, region by region, with madvise(MADV_HUGEPAGE), which is
// what Floats does. Only the whole 2 MiB pages inside a buffer are advised,
// so a buffer never holds more memory than its own size. The advice changes
// no arithmetic: results are the same bits with it or without it.
package hugepage

import "unsafe"

// Size is the huge page size advised for (x86-64's and arm64's 2 MiB with 4
// KiB base pages).
const Size = 2 << 20

// MinFloats is the length from which Floats advises: a buffer below one
// huge page plus the slack to align it cannot hold a whole huge page.
const MinFloats = 2 * Size / 8

// Floats returns a new zeroed buffer of n float64s and, for n ≥ MinFloats,
// asks the operating system to back the whole huge pages inside it with
// huge pages. The advice is best effort: where it is not available (another
// OS, a kernel without transparent huge pages, an emulator) the buffer is an
// ordinary one.
func Floats(n int) []float64 {
	s := make([]float64, n)
	if n >= MinFloats {
		advise(s)
	}
	return s
}

// span returns the byte range [lo, hi) of whole huge pages inside the
// memory [p, p+bytes), and false if it holds none.
func span(p, bytes uintptr) (lo, hi uintptr, ok bool) {
	lo = (p + Size - 1) &^ (Size - 1)
	end := p + bytes
	if end < p || lo < p { // wrapped around: no such memory
		return 0, 0, false
	}
	hi = end &^ (Size - 1)
	if hi <= lo {
		return 0, 0, false
	}
	return lo, hi, true
}

// pages returns the whole huge pages inside s as a byte slice over the
// same memory, or nil if there are none.
func pages(s []float64) []byte {
	if len(s) == 0 {
		return nil
	}
	base := unsafe.Pointer(unsafe.SliceData(s))
	p := uintptr(base)
	lo, hi, ok := span(p, uintptr(len(s))*8)
	if !ok {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Add(base, lo-p)), hi-lo)
}

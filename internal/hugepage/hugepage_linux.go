//go:build linux

package hugepage

import "syscall"

// advise marks the whole huge pages inside s MADV_HUGEPAGE. Errors are
// dropped: EINVAL means the kernel has no transparent huge pages, and the
// buffer is then an ordinary one.
func advise(s []float64) {
	if b := pages(s); b != nil {
		_ = syscall.Madvise(b, syscall.MADV_HUGEPAGE)
	}
}

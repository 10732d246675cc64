//go:build !netlib

package linalg

// SetOpenBLASThreads sets the threads of the system OpenBLAS; this build has
// none, so it does nothing and reports false.
func SetOpenBLASThreads(n int) bool { return false }

// OpenBLASThreads is the number of threads OpenBLAS runs (0: not in this
// build).
func OpenBLASThreads() int { return 0 }

//go:build netlib

package linalg

/*
void openblas_set_num_threads(int);
int openblas_get_num_threads(void);
*/
import "C"

// SetOpenBLASThreads sets the threads of the system OpenBLAS (its BLAS and
// the LAPACKE on it), which ignores GOMAXPROCS; n < 1 is taken as 1. It
// reports whether this build has OpenBLAS.
func SetOpenBLASThreads(n int) bool {
	C.openblas_set_num_threads(C.int(max(n, 1)))
	return true
}

// OpenBLASThreads is the number of threads OpenBLAS runs (0: not in this
// build).
func OpenBLASThreads() int { return int(C.openblas_get_num_threads()) }

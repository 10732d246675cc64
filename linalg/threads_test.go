package linalg

import (
	"slices"
	"testing"
)

// OpenBLAS runs the thread count it is given (it ignores GOMAXPROCS, which
// made a GOMAXPROCS=1 benchmark compare one native thread with two of
// OpenBLAS's).
func TestSetOpenBLASThreads(t *testing.T) {
	has := slices.Contains(Backends(), "openblas")
	if !has {
		if SetOpenBLASThreads(1) || OpenBLASThreads() != 0 {
			t.Fatal("a build without OpenBLAS reports OpenBLAS threads")
		}
		return
	}
	old := OpenBLASThreads()
	defer SetOpenBLASThreads(old)
	for _, n := range []int{1, 2} {
		if !SetOpenBLASThreads(n) || OpenBLASThreads() != n {
			t.Fatalf("SetOpenBLASThreads(%d): OpenBLAS runs %d", n, OpenBLASThreads())
		}
	}
}

// Package workq runs independent jobs over worker goroutines, each worker
// holding its own state (a predictor, a network and its buffers) that it
// reuses for every job it claims. Each job writes only its own results, so
// what the jobs compute depends on neither the number of workers nor the
// order in which they claim jobs.
package workq

import (
	"runtime"
	"sync"
)

// Run calls do(s, i) for every i in [0, n) on min(workers, n) goroutines
// (workers < 1: GOMAXPROCS). Each goroutine makes its state s once with
// newState; if that fails, the error becomes the error of every job the
// goroutine claims. errs[i] is job i's error; every job runs whatever the
// others return.
func Run[S any](n, workers int, newState func() (S, error), do func(s S, i int) error) (errs []error) {
	errs = make([]error, n)
	if workers < 1 {
		workers = runtime.GOMAXPROCS(0)
	}
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := newState()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				if err != nil {
					errs[i] = err
					continue
				}
				errs[i] = do(s, i)
			}
		}()
	}
	wg.Wait()
	return errs
}

// ForEach is Run for jobs that need no per-worker state, on GOMAXPROCS
// goroutines.
func ForEach(n int, do func(i int) error) []error {
	return Run(n, 0, func() (struct{}, error) { return struct{}{}, nil },
		func(_ struct{}, i int) error { return do(i) })
}

// First returns the lowest index whose error is not nil and that error, or
// (-1, nil).
func First(errs []error) (int, error) {
	for i, err := range errs {
		if err != nil {
			return i, err
		}
	}
	return -1, nil
}

package workq

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
)

func TestRun(t *testing.T) {
	for _, n := range []int{0, 1, 7, 100} {
		for _, workers := range []int{0, 1, 3, 200} {
			var made atomic.Int32
			seen := make([]int32, n)
			errs := Run(n, workers, func() (*int32, error) {
				id := made.Add(1)
				return &id, nil
			}, func(s *int32, i int) error {
				atomic.AddInt32(&seen[i], 1)
				if i%5 == 3 {
					return fmt.Errorf("job %d", i)
				}
				return nil
			})
			w := workers
			if w < 1 {
				w = runtime.GOMAXPROCS(0)
			}
			if int(made.Load()) != min(w, n) {
				t.Errorf("n %d, workers %d: %d states made, want %d", n, workers, made.Load(), min(w, n))
			}
			if len(errs) != n {
				t.Fatalf("n %d: %d errors", n, len(errs))
			}
			for i := range n {
				if seen[i] != 1 {
					t.Errorf("n %d, workers %d: job %d ran %d times", n, workers, i, seen[i])
				}
				if (errs[i] != nil) != (i%5 == 3) {
					t.Errorf("n %d, workers %d: job %d error %v", n, workers, i, errs[i])
				}
			}
			if i, err := First(errs); (n > 3) != (err != nil) || (n > 3 && (i != 3 || err.Error() != "job 3")) {
				t.Errorf("n %d: First gave %d, %v", n, i, err)
			}
		}
	}
}

func TestRunStateError(t *testing.T) {
	bad := errors.New("no predictor")
	ran := false
	errs := Run(5, 2, func() (int, error) { return 0, bad }, func(int, int) error { ran = true; return nil })
	if ran {
		t.Error("a job ran without its worker's state")
	}
	for i, err := range errs {
		if !errors.Is(err, bad) {
			t.Errorf("job %d: error %v, want the state's", i, err)
		}
	}
}

func TestForEach(t *testing.T) {
	sum := make([]int, 10)
	errs := ForEach(10, func(i int) error { sum[i] = i * i; return nil })
	if i, err := First(errs); err != nil || i != -1 {
		t.Fatalf("First = %d, %v", i, err)
	}
	for i, v := range sum {
		if v != i*i {
			t.Fatalf("job %d wrote %d", i, v)
		}
	}
}

package cholesky

import (
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas"
)

// maxThreads bounds the goroutines one kernel call uses.
const maxThreads = 64

// parallelWork is one call's work split into parts 0..n−1.
type parallelWork interface{ part(id int) }

type task struct {
	work parallelWork
	id   int
	wg   *sync.WaitGroup
}

// workers are persistent goroutines, so a parallel call does not start
// goroutines (which allocates) in steady state. The queue is buffered and
// parts are always handed to it: a part that found no idle worker at once
// must not run inline, or two parts of one call could end up serialized.
// Parts never wait for a part that is still queued (the look-ahead workers
// wait only for a critical task that is already running), so the pool
// cannot deadlock, however many calls share it.
var workers struct {
	once sync.Once
	ch   chan task
}

func startWorkers() {
	workers.ch = make(chan task, 4*maxThreads)
	for i := 0; i < maxThreads-1; i++ {
		go func() {
			for t := range workers.ch {
				t.work.part(t.id)
				t.wg.Done()
			}
		}()
	}
}

// runParallel runs w.part(0..n−1), part 0 on the calling goroutine, and
// returns when all are done; wg is owned by the caller.
func runParallel(n int, w parallelWork, wg *sync.WaitGroup) {
	if n <= 1 {
		w.part(0)
		return
	}
	workers.once.Do(startWorkers)
	wg.Add(n - 1)
	for i := 1; i < n; i++ {
		workers.ch <- task{work: w, id: i, wg: wg}
	}
	w.part(0)
	wg.Wait()
}

// threadsOf returns how many goroutines work with the BLAS b may use: its
// own setting when it has one (linalg.Native), else GOMAXPROCS.
func threadsOf(b blas.Float64) int {
	t := runtime.GOMAXPROCS(0)
	if tb, ok := b.(interface{ Threads() int }); ok {
		t = tb.Threads()
	}
	return max(1, min(t, maxThreads))
}

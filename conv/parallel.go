package conv

import (
	"runtime"
	"sync"
)

// The batch-parallel layers hand chunks of work to a small set of persistent
// goroutines over a channel instead of starting goroutines per call: a go
// statement with a closure allocates, and the layers promise not to.

type task struct {
	fn             func(worker, lo, hi int)
	worker, lo, hi int
	wg             *sync.WaitGroup
}

var (
	poolMu   sync.Mutex
	poolSize int
	tasks    = make(chan *task)
)

func ensureWorkers(n int) {
	poolMu.Lock()
	for poolSize < n {
		go func() {
			for t := range tasks {
				t.fn(t.worker, t.lo, t.hi)
				t.wg.Done()
			}
		}()
		poolSize++
	}
	poolMu.Unlock()
}

// splitter runs fn over [0, n) in contiguous chunks, one per worker. It is
// owned by one layer and not safe for concurrent use.
type splitter struct {
	tasks []task
	wg    sync.WaitGroup
}

func newSplitter(maxWorkers int) *splitter {
	if maxWorkers < 1 {
		maxWorkers = 1
	}
	ensureWorkers(maxWorkers - 1)
	return &splitter{tasks: make([]task, maxWorkers)}
}

// workers is how many chunks a job of n items gets now.
func (s *splitter) workers(n int) int {
	w := min(len(s.tasks), runtime.GOMAXPROCS(0), n)
	return max(w, 1)
}

// run calls fn(worker, lo, hi) for a partition of [0, n) into w = workers(n)
// chunks, worker in [0, w); the calling goroutine does chunk 0. It returns w.
func (s *splitter) run(n int, fn func(worker, lo, hi int)) int {
	w := s.workers(n)
	if w == 1 {
		fn(0, 0, n)
		return 1
	}
	s.wg.Add(w - 1)
	for i := 1; i < w; i++ {
		t := &s.tasks[i]
		t.fn, t.worker, t.lo, t.hi, t.wg = fn, i, i*n/w, (i+1)*n/w, &s.wg
		select {
		case tasks <- t:
		default:
			// Every pool goroutine is busy (another layer running
			// concurrently, or a nested call): do the chunk here
			// rather than wait, which could deadlock when nested.
			fn(t.worker, t.lo, t.hi)
			s.wg.Done()
		}
	}
	fn(0, 0, n/w)
	s.wg.Wait()
	return w
}

// Splitter is the layers' parallel loop for code that drives networks (the
// elementwise work of a Bayesian estimator): Run calls fn(worker, lo, hi)
// on a partition of [0, n) into contiguous chunks, one per worker, on the
// package's persistent goroutines, without allocating. A Splitter is not
// safe for concurrent use; distinct ones are.
type Splitter struct{ s *splitter }

// NewSplitter returns a splitter of at most workers goroutines (< 1 means
// 1); each Run also respects the GOMAXPROCS current at the time.
func NewSplitter(workers int) *Splitter { return &Splitter{newSplitter(workers)} }

// Run partitions [0, n) and returns the number of chunks used; fn must not
// call Run on the same splitter.
func (s *Splitter) Run(n int, fn func(worker, lo, hi int)) int { return s.s.run(n, fn) }

// MaxWorkers is the largest worker index Run may pass, plus one.
func (s *Splitter) MaxWorkers() int { return len(s.s.tasks) }

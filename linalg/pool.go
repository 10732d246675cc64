package linalg

import (
	"sync"
	"unsafe"

	"github.com/pacpfl/pacpfl/internal/hugepage"
)

// maxThreads bounds the goroutines one call uses (the per-call state holds
// fixed-size arrays of this length).
const maxThreads = 64

// parallelWork is the work of one call split into parts 0..n-1.
type parallelWork interface{ part(id int) }

// The worker pool: persistent goroutines, so that a parallel call does not
// start goroutines (which allocates) in steady state. A call runs part 0 on
// its own goroutine and hands the others to the pool. Workers never wait on
// other parts, so calls from many goroutines cannot deadlock.
type task struct {
	work parallelWork
	id   int
	wg   *sync.WaitGroup
}

var workers struct {
	mu sync.Mutex
	n  int
	ch chan task
}

func ensureWorkers(n int) {
	workers.mu.Lock()
	defer workers.mu.Unlock()
	if workers.ch == nil {
		workers.ch = make(chan task, 4*maxThreads)
	}
	for ; workers.n < n; workers.n++ {
		go func(ch <-chan task) {
			for t := range ch {
				t.work.part(t.id)
				t.wg.Done()
			}
		}(workers.ch)
	}
}

// runParallel runs w.part(0..n-1), part 0 on the calling goroutine, and
// returns when all are done. wg must be owned by the caller (not shared with
// a concurrent call).
func runParallel(n int, w parallelWork, wg *sync.WaitGroup) {
	if n <= 1 {
		w.part(0)
		return
	}
	ensureWorkers(n - 1)
	wg.Add(n - 1)
	for i := 1; i < n; i++ {
		workers.ch <- task{work: w, id: i, wg: wg}
	}
	w.part(0)
	wg.Wait()
}

// workspace holds one goroutine's packing buffers, 64-byte aligned.
type workspace struct {
	a, b, tile []float64
	araw, braw []float64
}

// ensure grows the buffers to hold an mc×kc block of A, a kc×nc block of B
// and one tile; in steady state it does nothing.
func (w *workspace) ensure(na, nb, nt int) {
	if len(w.a) < na {
		w.araw, w.a = alignedFloats(na)
	}
	if len(w.b) < nb {
		w.braw, w.b = alignedFloats(nb)
	}
	if len(w.tile) < nt {
		w.tile = make([]float64, nt)
	}
}

// alignedFloats returns a backing slice and a 64-byte aligned view of n
// elements inside it.
func alignedFloats(n int) (raw, view []float64) {
	raw = hugepage.Floats(n + 8)
	off := 0
	for uintptr(unsafe.Pointer(&raw[off]))%64 != 0 {
		off++
	}
	return raw, raw[off : off+n : off+n]
}

// The free list of workspaces shared by every Native. A mutex-guarded slice
// rather than sync.Pool: the GC empties a sync.Pool, which would make
// steady-state calls allocate again.
var wsFree struct {
	mu   sync.Mutex
	list []*workspace
}

func getWorkspace() *workspace {
	wsFree.mu.Lock()
	defer wsFree.mu.Unlock()
	if n := len(wsFree.list); n > 0 {
		w := wsFree.list[n-1]
		wsFree.list = wsFree.list[:n-1]
		return w
	}
	if wsFree.list == nil {
		wsFree.list = make([]*workspace, 0, 4*maxThreads)
	}
	return &workspace{}
}

func putWorkspace(w *workspace) {
	wsFree.mu.Lock()
	wsFree.list = append(wsFree.list, w)
	wsFree.mu.Unlock()
}

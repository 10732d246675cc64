package linalg

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/pacpfl/pacpfl/asm"
)

// The shared-B schedule (BLIS's): the goroutines of one GEMM pack each KC×NC
// block of op(B) together into one buffer, then share out the row blocks of
// C, each packing its own block of op(A) and running the macro-kernel against
// the shared B. The grid schedule (gemm) instead gives every goroutine its own
// block of C and its own packed B: no waiting, but a goroutine whose block
// spans all the rows packs B again for each column block, and one that spans
// all the columns packs all of A. For C = 256×256 with k = 2000 on two
// goroutines the grid packs every A (or B) element twice.
//
// The work of a call is one sequence of tasks, claimed in order through an
// atomic counter: for each (jc, pc) step, the pieces of B's packing, then
// the row blocks of C. A task waits until every task of the phase before it
// is done (a count of finished tasks: a task only finishes after all the
// tasks of the phases before its own, so "done >= the first task of my phase"
// means all of them are). It only ever waits on tasks already claimed, i.e.
// on goroutines that are running, so the scheme cannot deadlock however the
// shared worker pool is busy, and a lone goroutine simply runs every task in
// order.

// gemmSchedule chooses between the schedules (tests and benchmarks force one).
type gemmSchedule int32

const (
	scheduleAuto   gemmSchedule = iota // by shape (useSharedB)
	scheduleGrid                       // every goroutine its own block of C and packed B
	scheduleShared                     // one shared packed B per (jc, pc) step
)

// useSharedB tells whether the shared-B schedule is the faster for a GEMM
// (not SYRK) of this shape on several goroutines: a small C with a long
// inner dimension, where the grid packs a k-long operand (m×k or k×n) once
// per goroutine and that copy is a sizeable part of the work. Measured on
// the 2-core Zen 5 (AVX-512, 12×16 kernel, KC 256, MC 252; both schedules
// alternated in one process, minimum of up to 500 runs, other jobs at load
// 10–14; BenchmarkGemmSchedules), shared-B against the grid: 256×256×k
// 1.04–1.15 at k = 2000, 1.10 at 1000 and 500; 128×128×4000 1.10–1.17;
// 160×160×2000 1.14; 512×512×2000 1.01–1.04; but 768×768×2000 0.97,
// 500×500×500 0.77, 2000×256×256 0.93, 96×2000×2000 0.89, 2000×96×2000
// 0.85, square 1000–2000 0.99–1.07 (noise).
func useSharedB(m, n, k int) bool {
	return max(m, n) <= 512 && k >= 2*max(m, n)
}

// sharedCall is one GEMM on the shared-B schedule.
type sharedCall struct {
	p    gemmProblem
	kern *asm.GemmKernel
	blk  Blocking
	b    []float64 // the shared packed KC×NC block of B

	nPC       int   // pc steps per jc step
	packTasks int   // tasks packing B, per step
	rowTasks  int   // row blocks of C, per step
	ntasks    int64 // steps × (packTasks + rowTasks)
	next      atomic.Int64
	done      atomic.Int64 // tasks finished (written under mu)
	mu        sync.Mutex
	cond      sync.Cond // L is &mu; signalled when done grows and someone sleeps
	sleepers  int       // goroutines in cond.Wait (under mu)

	ws [maxThreads]*workspace // per goroutine: its block of A and a tile
	wg sync.WaitGroup
}

var sharedCalls freeList[sharedCall]

// gemmShared runs p (tri == blas.All) on nw > 1 goroutines, shared-B.
func (nat *Native) gemmShared(p gemmProblem, kern *asm.GemmKernel, blk Blocking, threads int) {
	g := sharedCalls.get()
	g.p, g.kern, g.blk = p, kern, blk
	mr, nr := kern.MR, kern.NR
	mu := ceilDiv(p.m, mr)
	// Row blocks: at most MC rows (the A buffer), at least one per
	// goroutine, a multiple of the goroutines (balance), on tile edges.
	tilesPerMC := max(1, blk.MC/mr)
	rt := max(threads, ceilDiv(mu, tilesPerMC))
	rt = min(mu, ceilDiv(rt, threads)*threads)
	nw := min(threads, rt)
	g.rowTasks = rt
	ncEff := min(blk.NC, ceilDiv(p.n, nr)*nr)
	g.packTasks = min(nw, ceilDiv(ncEff, nr))
	kcEff := min(blk.KC, p.k)
	g.nPC = ceilDiv(p.k, blk.KC)
	steps := ceilDiv(p.n, blk.NC) * g.nPC
	g.ntasks = int64(steps * (g.packTasks + g.rowTasks))
	g.next.Store(0)
	g.done.Store(0)
	g.cond.L = &g.mu

	bws := getWorkspace()
	bws.ensure(0, ncEff*kcEff, 0)
	g.b = bws.b
	mcMax := ceilDiv(mu, rt) * mr
	for i := 0; i < nw; i++ {
		g.ws[i] = getWorkspace()
		g.ws[i].ensure(mcMax*kcEff, 0, mr*nr)
	}
	runParallel(nw, g, &g.wg)
	for i := 0; i < nw; i++ {
		putWorkspace(g.ws[i])
		g.ws[i] = nil
	}
	putWorkspace(bws)
	g.b = nil
	g.p = gemmProblem{} // drop references to the caller's slices
	sharedCalls.put(g)
}

// waitDone returns once n tasks are done: a short spin, then asleep on the
// condition variable. Measured (2 cores shared with other jobs at load 10):
// spinning until done cost the shared-B schedule a third of its speed at
// 384×384×2000, since a spinning goroutine keeps its share of a core that the
// goroutine it waits for, descheduled, needs.
func (g *sharedCall) waitDone(n int64) {
	for spins := 0; spins < 64; spins++ {
		if g.done.Load() >= n {
			return
		}
		if spins >= 16 {
			runtime.Gosched()
		}
	}
	g.mu.Lock()
	g.sleepers++
	for g.done.Load() < n {
		g.cond.Wait()
	}
	g.sleepers--
	g.mu.Unlock()
}

// finish counts a task done and wakes the goroutines asleep in waitDone.
func (g *sharedCall) finish() {
	g.mu.Lock()
	g.done.Add(1)
	if g.sleepers > 0 {
		g.cond.Broadcast()
	}
	g.mu.Unlock()
}

// part is goroutine id's loop: claim the next task, wait for its phase's
// predecessors, run it.
func (g *sharedCall) part(id int) {
	p, kern, blk := &g.p, g.kern, g.blk
	mr, nr := kern.MR, kern.NR
	ws := g.ws[id]
	per := int64(g.packTasks + g.rowTasks)
	mu := ceilDiv(p.m, mr)
	for {
		t := g.next.Add(1) - 1
		if t >= g.ntasks {
			return
		}
		s, w := t/per, int(t%per)
		jc := int(s) / g.nPC * blk.NC
		pc := int(s) % g.nPC * blk.KC
		nb := min(blk.NC, p.n-jc)
		kb := min(blk.KC, p.k-pc)
		if w < g.packTasks {
			// Panels [q0, q1) of this step's B block; the previous step's
			// row blocks must be done with the buffer.
			g.waitDone(s * per)
			np := ceilDiv(nb, nr)
			q0, q1 := np*w/g.packTasks, np*(w+1)/g.packTasks
			if q1 > q0 {
				packB(g.b[q0*kb*nr:], p, pc, kb, jc+q0*nr, min(nb, q1*nr)-q0*nr, nr)
			}
		} else {
			g.waitDone(s*per + int64(g.packTasks))
			r := w - g.packTasks
			i0 := min(p.m, mu*r/g.rowTasks*mr)
			i1 := min(p.m, mu*(r+1)/g.rowTasks*mr)
			if i1 > i0 {
				beta := 1.0
				if pc == 0 {
					beta = p.beta
				}
				packA(ws.a, p, i0, i1-i0, pc, kb, mr)
				macroKernel(ws.a, g.b, ws.tile, kern, p, i0, i1-i0, jc, nb, pc, kb, beta)
			}
		}
		g.finish()
	}
}

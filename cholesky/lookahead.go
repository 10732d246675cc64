package cholesky

import (
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"

	"github.com/pacpfl/pacpfl/linalg"
)

// The right-looking factorization with look-ahead, scheduled over our own
// goroutines in nb×nb tiles.
//
// The plain right-looking loop (potrfRight) alternates a serial step (the
// diagonal block), a parallel panel solve and one parallel Dsyrk, with a
// barrier between each. Here each step j instead runs as a pool of tile
// tasks on single-threaded BLAS calls: one worker takes the critical path —
// update block column j+1, factor its diagonal block — while the others
// update the rest of the trailing matrix; as soon as the diagonal block is
// factored, the solve of panel j+1 is handed out in row tiles, ahead of the
// remaining updates. So the next panel is ready when the trailing update of
// step j ends, no core idles through the serial part, and there is one
// barrier per step.

// serialNative is the single-threaded BLAS the tile tasks run on when the
// caller's BLAS is linalg's native one.
var serialNative = sync.OnceValue(func() *linalg.Native { return linalg.NewNative(1) })

// lookahead is the state of one step, shared by the workers.
type lookahead struct {
	e       engine
	serial  blas.Float64
	a       []float64
	lda     int
	n, nb   int
	j       int // the factored panel's block column
	workers int

	critical atomic.Int32 // 0: the critical task is not taken yet
	diagDone atomic.Int32 // 1: diagonal block j+1 factored (or failed)
	trsmNext atomic.Int32 // next row tile of panel j+1 to solve
	updNext  atomic.Int32 // next update tile
	nTrsm    int
	upd      [][2]int32 // update tiles (block row, block column) of this step
	failCol  int
	failPiv  float64

	wg   sync.WaitGroup
	mu   sync.Mutex
	cond sync.Cond // signals diagDone; L is &mu
	wks  [maxThreads]*workspace
}

// potrfLookahead factors the n×n lower triangle of a with panels of width
// nb on workers goroutines. The caller has checked that e.b is linalg's
// native BLAS.
func (e engine) potrfLookahead(n int, a []float64, lda, nb, workers int) (col int, pivot float64) {
	la := &e.ws.la
	defer func() { la.e, la.a = engine{}, nil }() // keep no reference to a
	la.e, la.serial, la.a, la.lda, la.n, la.nb, la.workers = e, serialNative(), a, lda, n, nb, workers
	la.cond.L = &la.mu
	for w := 0; w < workers; w++ {
		if la.wks[w] == nil {
			la.wks[w] = new(workspace)
		}
	}
	// Panel 0: the diagonal block, then its panel with the parallel leaf.
	jb := min(nb, n)
	pe := e
	pe.p.right = 0
	if c, p := pe.potrf(jb, a, lda); c >= 0 {
		return c, p
	}
	if n > jb {
		e.trsmRLT(n-jb, jb, a, lda, a[jb*lda:], lda)
	}
	nBlocks := (n + nb - 1) / nb
	for j := 0; j+1 < nBlocks; j++ {
		la.startStep(j)
		runParallel(workers, la, &la.wg)
		if la.failCol >= 0 {
			return la.failCol, la.failPiv
		}
	}
	return -1, 0
}

func (la *lookahead) startStep(j int) {
	la.j = j
	la.critical.Store(0)
	la.diagDone.Store(0)
	la.trsmNext.Store(0)
	la.updNext.Store(0)
	la.failCol = -1
	nBlocks := (la.n + la.nb - 1) / la.nb
	// Panel j+1's row tiles below its diagonal block.
	la.nTrsm = nBlocks - (j + 2)
	// The update tiles of block columns j+2…, column by column, so that the
	// columns the next steps need first are done first.
	la.upd = la.upd[:0]
	for c := j + 2; c < nBlocks; c++ {
		for r := c; r < nBlocks; r++ {
			la.upd = append(la.upd, [2]int32{int32(r), int32(c)})
		}
	}
}

// part is one worker's loop over the tasks of the step.
func (la *lookahead) part(id int) {
	ws := la.wks[id]
	if la.critical.CompareAndSwap(0, 1) {
		la.criticalPath(ws)
	}
	for {
		if la.diagDone.Load() == 1 {
			if t := int(la.trsmNext.Add(1)) - 1; t < la.nTrsm {
				la.solveTile(ws, t)
				continue
			}
		}
		if u := int(la.updNext.Add(1)) - 1; u < len(la.upd) {
			la.updateTile(int(la.upd[u][0]), int(la.upd[u][1]))
			continue
		}
		if la.diagDone.Load() == 1 {
			if int(la.trsmNext.Load()) >= la.nTrsm {
				return
			}
			continue
		}
		// Only the critical path is left: sleep until it is done.
		la.mu.Lock()
		for la.diagDone.Load() == 0 {
			la.cond.Wait()
		}
		la.mu.Unlock()
	}
}

// block returns the first row/column of block b and its width.
func (la *lookahead) block(b int) (start, width int) {
	start = b * la.nb
	return start, min(la.nb, la.n-start)
}

// updateTile applies step j's update to tile (r, c):
// A_rc −= L_rj·L_cjᵀ (Dsyrk on the diagonal).
func (la *lookahead) updateTile(r, c int) {
	j0, jw := la.block(la.j)
	r0, rw := la.block(r)
	c0, cw := la.block(c)
	a, lda := la.a, la.lda
	if r == c {
		la.serial.Dsyrk(blas.Lower, blas.NoTrans, rw, jw, -1, a[r0*lda+j0:], lda, 1, a[r0*lda+r0:], lda)
		return
	}
	la.serial.Dgemm(blas.NoTrans, blas.Trans, rw, cw, jw, -1, a[r0*lda+j0:], lda, a[c0*lda+j0:], lda, 1, a[r0*lda+c0:],
		lda)
}

// criticalPath updates block column j+1 with panel j and factors its
// diagonal block.
func (la *lookahead) criticalPath(ws *workspace) {
	j0, jw := la.block(la.j)
	c0, cw := la.block(la.j + 1)
	a, lda := la.a, la.lda
	la.serial.Dsyrk(blas.Lower, blas.NoTrans, cw, jw, -1, a[c0*lda+j0:], lda, 1, a[c0*lda+c0:], lda)
	if rows := la.n - c0 - cw; rows > 0 {
		la.serial.Dgemm(blas.NoTrans, blas.Trans, rows, cw, jw, -1, a[(c0+cw)*lda+j0:], lda, a[c0*lda+j0:], lda,
			1, a[(c0+cw)*lda+c0:], lda)
	}
	e := engine{b: la.serial, p: la.e.p, ws: ws}
	e.p.right = 0
	if c, p := e.potrf(cw, a[c0*lda+c0:], lda); c >= 0 {
		la.failCol, la.failPiv = c0+c, p
		la.nTrsm = 0 // nothing to solve; the step ends with the updates
	}
	la.mu.Lock()
	la.diagDone.Store(1)
	la.cond.Broadcast()
	la.mu.Unlock()
}

// solveTile solves row tile t of panel j+1 against its diagonal block.
func (la *lookahead) solveTile(ws *workspace, t int) {
	c0, cw := la.block(la.j + 1)
	r0, rw := la.block(la.j + 2 + t)
	a, lda := la.a, la.lda
	ws.rlt.solve(1, rw, cw, a[c0*lda+c0:], lda, a[r0*lda+c0:], lda)
}

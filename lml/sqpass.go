package lml

import (
	"sync"

	"github.com/pacpfl/pacpfl/asm"
)

// The O(m²) passes of a Workspace over its m×m matrix: building A = K + σ²I
// and forming the feature gradient from A⁻¹ and K. Each row's result is
// computed by the same operations in the same order whichever goroutine
// runs it, so the passes give the same bits on any number of threads.

const (
	sqKernelPass = iota
	sqGradPass
)

// sqGradRows is the number of rows of w the feature gradient forms at once:
// the reads of K and A⁻¹ across the diagonal (column j of row l) then use
// a whole cache line of each row l.
const sqGradRows = 8

// sqGradCols is the number of columns l per sweep of a row block, so that
// the sqGradRows-wide slices of those rows stay in L1 from one row of the
// block to the next.
const sqGradCols = 256

// sqPassMinFloats is the size of the matrix below which a pass stays on one
// goroutine.
const sqPassMinFloats = 1 << 16

// sqPassMaxParts bounds the goroutines of one pass.
const sqPassMaxParts = 16

// sqPass is one pass, split into parts over fixed row ranges.
type sqPass struct {
	op       int
	ws       *Workspace
	m        int
	F        []float64
	noiseVar float64
	n        int
	w        [sqPassMaxParts][]float64 // feature gradient: sqGradRows×m rows of w per part
	wg       sync.WaitGroup
}

// run runs pass op over the m×m matrix of ws on up to threads goroutines.
func (p *sqPass) run(threads, op int, ws *Workspace, m int, F []float64, noiseVar float64) {
	n := 1
	if m*m >= sqPassMinFloats {
		n = max(1, min(threads, sqPassMaxParts, (m+sqGradRows-1)/sqGradRows))
	}
	p.op, p.ws, p.m, p.F, p.noiseVar, p.n = op, ws, m, F, noiseVar, n
	if op == sqGradPass {
		for i := 0; i < n; i++ {
			if cap(p.w[i]) < sqGradRows*m {
				p.w[i] = make([]float64, sqGradRows*m)
			}
		}
	}
	runSqPassParts(n, p, &p.wg)
	p.ws, p.F = nil, nil
}

// part runs rows [lo, hi) of the pass: for the feature gradient whole
// blocks of sqGradRows rows, so the split never changes a block.
func (p *sqPass) part(id int) {
	m := p.m
	nb := (m + sqGradRows - 1) / sqGradRows
	lo, hi := min(m, nb*id/p.n*sqGradRows), min(m, nb*(id+1)/p.n*sqGradRows)
	ws := p.ws
	switch p.op {
	case sqKernelPass:
		ws.kernelRows(lo, hi, m, p.F, p.noiseVar)
	case sqGradPass:
		for j0 := lo; j0 < hi; j0 += sqGradRows {
			ws.featureGradRows(j0, min(j0+sqGradRows, hi), m, p.F, p.w[id])
		}
	}
}

// kernelRows sets rows [lo, hi) of A = K + noiseVar·I, both triangles, and
// records A's diagonal (the feature gradient reads it after the factor has
// overwritten it).
func (ws *Workspace) kernelRows(lo, hi, m int, F []float64, noiseVar float64) {
	if lo >= hi {
		return
	}
	df := ws.model.DF
	a := ws.sq[:m*m]
	asm.SEKernel(a[lo*m:], m, F[lo*df:], df, F, df, hi-lo, m, df)
	for j := lo; j < hi; j++ {
		a[j*m+j] += noiseVar
		ws.adiag[j] = a[j*m+j]
	}
}

// featureGradRows sets rows [j0, j1) of ∂LML/∂F (gF, m×DF):
//
//	∂LML/∂f_j = Σ_l w_l f_l − f_j Σ_l w_l,  w_l = (v_j v_l − A⁻¹_jl) K_jl,
//
// with w_j = 0. The m×m matrix holds A⁻¹ on and below the diagonal and K
// above it, so A⁻¹_jl comes from row j for l < j and from row l (column j)
// for l > j, and K_jl the other way round. w holds sqGradRows rows of m.
//
// The sums are those of the plain row-by-row loop with the inverse and K
// in full m×m matrices: Σ_l w_l in order of l, with the diagonal term
// (v_j² − A⁻¹_jj)·A_jj added and taken off again, and the DF dot products
// by asm.DotUnitary over the row of w; so the bits are the same.
func (ws *Workspace) featureGradRows(j0, j1, m int, F, w []float64) {
	df := ws.model.DF
	a := ws.sq[:m*m]
	v := ws.v[:m]
	for l0 := 0; l0 < m; l0 += sqGradCols {
		l1 := min(l0+sqGradCols, m)
		for j := j0; j < j1; j++ {
			vj := v[j]
			wrow := w[(j-j0)*m : (j-j0)*m+m]
			arow := a[j*m : j*m+m]
			// l < j: A⁻¹_jl = a[j][l], K_jl = a[l][j].
			for l := l0; l < min(l1, j); l++ {
				wrow[l] = (vj*v[l] - arow[l]) * a[l*m+j]
			}
			// l > j: A⁻¹_jl = a[l][j], K_jl = a[j][l].
			for l := max(l0, j+1); l < l1; l++ {
				wrow[l] = (vj*v[l] - a[l*m+j]) * arow[l]
			}
			if j >= l0 && j < l1 {
				wrow[j] = (vj*vj - arow[j]) * ws.adiag[j]
			}
		}
	}
	ft := ws.ft[:df*m]
	gF := ws.gF[:m*df]
	for j := j0; j < j1; j++ {
		wrow := w[(j-j0)*m : (j-j0)*m+m]
		var sum float64
		for _, t := range wrow {
			sum += t
		}
		sum -= wrow[j]
		wrow[j] = 0
		for c := 0; c < df; c++ {
			gF[j*df+c] = asm.DotUnitary(wrow, ft[c*m:c*m+m]) - F[j*df+c]*sum
		}
	}
}

// The worker pool of the passes: persistent goroutines, so that a parallel
// pass does not start goroutines (which allocates) in steady state. A pass
// runs part 0 on its own goroutine and hands the others to the pool;
// parts never wait on each other, so concurrent passes cannot deadlock.
type sqPassWork interface{ part(id int) }

type sqPassTask struct {
	work sqPassWork
	id   int
	wg   *sync.WaitGroup
}

var sqPassWorkers struct {
	mu sync.Mutex
	n  int
	ch chan sqPassTask
}

func ensureSqPassWorkers(n int) {
	sqPassWorkers.mu.Lock()
	defer sqPassWorkers.mu.Unlock()
	if sqPassWorkers.ch == nil {
		sqPassWorkers.ch = make(chan sqPassTask, 4*sqPassMaxParts)
	}
	for ; sqPassWorkers.n < n; sqPassWorkers.n++ {
		go func(ch <-chan sqPassTask) {
			for t := range ch {
				t.work.part(t.id)
				t.wg.Done()
			}
		}(sqPassWorkers.ch)
	}
}

// runParallel runs w.part(0..n−1), part 0 on the calling goroutine, and
// returns when all are done; wg is owned by the caller.
func runSqPassParts(n int, w sqPassWork, wg *sync.WaitGroup) {
	if n <= 1 {
		w.part(0)
		return
	}
	ensureSqPassWorkers(n - 1)
	wg.Add(n - 1)
	for i := 1; i < n; i++ {
		sqPassWorkers.ch <- sqPassTask{work: w, id: i, wg: wg}
	}
	w.part(0)
	wg.Wait()
}

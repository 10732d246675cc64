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

// sqGradRows is the number of rows of w the feature gradient forms at once
// (gradRows8 is written for 8): its reads of K and A⁻¹ across the diagonal
// (columns j of row l) then use a whole cache line of each row l, and the
// rows' sums run as independent chains.
const sqGradRows = 8

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

// featureGradRows sets rows [j0, j1) of ∂LML/∂F (gF, m×DF), j1 − j0 ≤
// sqGradRows:
//
//	∂LML/∂f_j = Σ_l w_l f_l − f_j Σ_l w_l,  w_l = (v_j v_l − A⁻¹_jl) K_jl,
//
// with w_j = 0. The m×m matrix holds A⁻¹ on and below the diagonal and K
// above it, so A⁻¹_jl comes from row j for l < j and from row l (column j)
// for l > j, and K_jl the other way round. w holds sqGradRows rows of m.
// A full block runs its rows together, with l outside (gradRows8): the
// entries of row l in its eight columns (one cache line) serve all eight,
// and the eight sums are independent chains.
//
// The sums are those of the plain row-by-row loop with the inverse and K
// in full m×m matrices: Σ_l w_l in order of l, with the diagonal term
// (v_j² − A⁻¹_jj)·A_jj added and taken off again, and the DF dot products
// by asm.DotUnitary over the row of w; so the bits are the same.
func (ws *Workspace) featureGradRows(j0, j1, m int, F, w []float64) {
	df := ws.model.DF
	nb := j1 - j0
	var sums [sqGradRows]float64
	if nb == sqGradRows {
		ws.gradRows8(j0, m, w, sums[:])
	} else {
		for x := 0; x < nb; x++ {
			ws.gradRow(j0+x, m, w[x*m:x*m+m], &sums[x])
		}
	}
	s := sums[:nb]
	ft := ws.ft[:df*m]
	gF := ws.gF[:m*df]
	for x := 0; x < nb; x++ {
		j := j0 + x
		wrow := w[x*m : x*m+m]
		sum := s[x] - wrow[j]
		wrow[j] = 0
		for c := 0; c < df; c++ {
			gF[j*df+c] = asm.DotUnitary(wrow, ft[c*m:c*m+m]) - F[j*df+c]*sum
		}
	}
}

// gradRows8 forms rows j…j+7 of w (w holds them m apart) and their sums Σ_l
// w_l in order of l (s), with the diagonal term included.
func (ws *Workspace) gradRows8(j, m int, w []float64, s []float64) {
	a := ws.sq[:m*m]
	v := ws.v[:m]
	r0, r1, r2, r3 := a[j*m:j*m+m], a[(j+1)*m:(j+1)*m+m], a[(j+2)*m:(j+2)*m+m], a[(j+3)*m:(j+3)*m+m]
	r4, r5, r6, r7 := a[(j+4)*m:(j+4)*m+m], a[(j+5)*m:(j+5)*m+m], a[(j+6)*m:(j+6)*m+m], a[(j+7)*m:(j+7)*m+m]
	w0, w1, w2, w3 := w[:m], w[m:2*m], w[2*m:3*m], w[3*m:4*m]
	w4, w5, w6, w7 := w[4*m:5*m], w[5*m:6*m], w[6*m:7*m], w[7*m:8*m]
	v0, v1, v2, v3 := v[j], v[j+1], v[j+2], v[j+3]
	v4, v5, v6, v7 := v[j+4], v[j+5], v[j+6], v[j+7]
	var s0, s1, s2, s3, s4, s5, s6, s7 float64
	// l < j: A⁻¹_jl = a[j][l], K_jl = a[l][j]. The conversions keep each
	// product out of an FMA with the sum, as in the plain loop.
	for l := 0; l < j; l++ {
		k := a[l*m+j : l*m+j+8 : l*m+j+8]
		vl := v[l]
		t0 := (v0*vl - r0[l]) * k[0]
		t1 := (v1*vl - r1[l]) * k[1]
		t2 := (v2*vl - r2[l]) * k[2]
		t3 := (v3*vl - r3[l]) * k[3]
		t4 := (v4*vl - r4[l]) * k[4]
		t5 := (v5*vl - r5[l]) * k[5]
		t6 := (v6*vl - r6[l]) * k[6]
		t7 := (v7*vl - r7[l]) * k[7]
		w0[l], w1[l], w2[l], w3[l] = t0, t1, t2, t3
		w4[l], w5[l], w6[l], w7[l] = t4, t5, t6, t7
		s0 += float64(t0)
		s1 += float64(t1)
		s2 += float64(t2)
		s3 += float64(t3)
		s4 += float64(t4)
		s5 += float64(t5)
		s6 += float64(t6)
		s7 += float64(t7)
	}
	s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7] = s0, s1, s2, s3, s4, s5, s6, s7
	// The diagonal block, l in [j, j+8): each case as in the plain loop.
	for l := j; l < j+8; l++ {
		for x := 0; x < 8; x++ {
			jx := j + x
			var t float64
			switch {
			case l < jx:
				t = (v[jx]*v[l] - a[jx*m+l]) * a[l*m+jx]
			case l > jx:
				t = (v[jx]*v[l] - a[l*m+jx]) * a[jx*m+l]
			default:
				t = (v[jx]*v[jx] - a[jx*m+jx]) * ws.adiag[jx]
			}
			w[x*m+l] = t
			s[x] += float64(t)
		}
	}
	s0, s1, s2, s3, s4, s5, s6, s7 = s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]
	// l ≥ j+8: A⁻¹_jl = a[l][j], K_jl = a[j][l].
	for l := j + 8; l < m; l++ {
		il := a[l*m+j : l*m+j+8 : l*m+j+8]
		vl := v[l]
		t0 := (v0*vl - il[0]) * r0[l]
		t1 := (v1*vl - il[1]) * r1[l]
		t2 := (v2*vl - il[2]) * r2[l]
		t3 := (v3*vl - il[3]) * r3[l]
		t4 := (v4*vl - il[4]) * r4[l]
		t5 := (v5*vl - il[5]) * r5[l]
		t6 := (v6*vl - il[6]) * r6[l]
		t7 := (v7*vl - il[7]) * r7[l]
		w0[l], w1[l], w2[l], w3[l] = t0, t1, t2, t3
		w4[l], w5[l], w6[l], w7[l] = t4, t5, t6, t7
		s0 += float64(t0)
		s1 += float64(t1)
		s2 += float64(t2)
		s3 += float64(t3)
		s4 += float64(t4)
		s5 += float64(t5)
		s6 += float64(t6)
		s7 += float64(t7)
	}
	s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7] = s0, s1, s2, s3, s4, s5, s6, s7
}

// gradRow forms row j of w and its sum Σ_l w_l in order of l (*s), with
// the diagonal term included: the plain loop, for the rows of the last,
// partial block.
func (ws *Workspace) gradRow(j, m int, w []float64, s *float64) {
	a := ws.sq[:m*m]
	v := ws.v[:m]
	vj := v[j]
	row := a[j*m : j*m+m]
	var sum float64
	for l := 0; l < j; l++ {
		t := (vj*v[l] - row[l]) * a[l*m+j]
		w[l] = t
		sum += float64(t)
	}
	t := (vj*vj - row[j]) * ws.adiag[j]
	w[j] = t
	sum += float64(t)
	for l := j + 1; l < m; l++ {
		t := (vj*v[l] - a[l*m+j]) * row[l]
		w[l] = t
		sum += float64(t)
	}
	*s = sum
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

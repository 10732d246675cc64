package cholesky

import (
	"sync"

	"github.com/pacpfl/pacpfl/asm"
	"github.com/pacpfl/pacpfl/internal/hugepage"
)

// maxNR bounds the micro-kernel width the leaf solve supports.
const maxNR = 16

// maxTrsmLeaf is the largest triangle trsmRLTLeafGEMM accepts.
const maxTrsmLeaf = 256

// trsmLeafMinFlops is the work below which a leaf solve stays on one
// goroutine.
const trsmLeafMinFlops = 1 << 18

// rltLeaf solves X·Lᵀ = B in place (B m×n, L n×n lower, n ≤ maxTrsmLeaf) the
// way optimized BLAS libraries do: B is cut into tiles of MR rows; within a
// tile the columns are solved in blocks of NR, and everything except the
// NR×NR diagonal triangles is a GEMM update by the SIMD micro-kernel, on a
// packed copy of the already-solved columns (A operand) and of Lᵀ (B
// operand). Only the triangles, a fraction NR/n of the flops, run as scalar
// code. Row tiles are independent, so they are spread over goroutines.
//
// Numerically this is forward substitution with the dot products reordered
// (blocked), the same as a blocked Dtrsm: no inverse of a block is formed,
// only the reciprocals of the diagonal are (multiplying by them is how
// LAPACK's Dtrsm-based solves scale too).
type rltLeaf struct {
	k     *asm.GemmKernel
	m, n  int
	nPad  int       // n rounded up to a multiple of NR
	l     []float64 // L, row-major
	ldl   int
	b     []float64
	ldb   int
	dinv  []float64 // inverted NR×NR diagonal blocks, packed (see solve)
	lpack []float64 // packed Lᵀ blocks (see pack)
	tiles int       // row tiles
	np    int       // parts
	wg    sync.WaitGroup
	ws    [maxThreads]rltScratch
}

// rltScratch is one goroutine's tile (MR×nPad) and packed solved columns.
type rltScratch struct {
	t, x []float64
}

func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return hugepage.Floats(n)
	}
	return s[:n]
}

// solve runs the leaf solve with up to threads goroutines.
func (r *rltLeaf) solve(threads, m, n int, l []float64, ldl int, b []float64, ldb int) {
	k := asm.GemmKernelFor(asm.Current())
	if k.NR > maxNR {
		k = asm.GemmKernelFor(asm.Generic) // (no such kernel exists today)
	}
	mr, nr := k.MR, k.NR
	r.k, r.m, r.n, r.l, r.ldl, r.b, r.ldb = k, m, n, l, ldl, b, ldb
	r.nPad = (n + nr - 1) / nr * nr
	// dinv holds, per block J, L_JJ⁻ᵀ packed as a k×NR panel:
	// dinv[J·NR² + q·NR + c] = (L_JJ⁻¹)[c][q], zero outside the block.
	r.dinv = grow(r.dinv, r.nPad*nr)
	var tri [maxNR * maxNR]float64
	for j0 := 0; j0 < n; j0 += nr {
		w := min(nr, n-j0)
		for i := 0; i < w; i++ {
			copy(tri[i*nr:i*nr+i+1], l[(j0+i)*ldl+j0:(j0+i)*ldl+j0+i+1])
		}
		trti2(false, w, tri[:], nr)
		d := r.dinv[j0*nr : j0*nr+nr*nr]
		clear(d)
		for c := 0; c < w; c++ {
			for q := 0; q <= c; q++ {
				d[q*nr+c] = tri[c*nr+q]
			}
		}
	}
	// Block J (columns j0 = J·NR …) needs rows j0…j0+NR of L, columns 0…j0,
	// packed as lp[q·NR + c] = L[j0+c][q]; blocks are stored one after the
	// other, block J at offset NR·Σ_{J'<J} J'·NR.
	nb := r.nPad / nr
	r.lpack = grow(r.lpack, nr*nr*nb*(nb-1)/2)
	off := 0
	for j0 := 0; j0 < n; j0 += nr {
		w := min(nr, n-j0)
		lp := r.lpack[off : off+j0*nr]
		for c := 0; c < nr; c++ {
			if c >= w {
				for q := 0; q < j0; q++ {
					lp[q*nr+c] = 0
				}
				continue
			}
			row := l[(j0+c)*ldl : (j0+c)*ldl+j0]
			for q, v := range row {
				lp[q*nr+c] = v
			}
		}
		off += j0 * nr
	}
	r.tiles = (m + mr - 1) / mr
	np := 1
	if float64(m)*float64(n)*float64(n) >= trsmLeafMinFlops {
		np = min(threads, r.tiles)
	}
	r.np = np
	for i := 0; i < np; i++ {
		r.ws[i].t = grow(r.ws[i].t, mr*r.nPad)
		r.ws[i].x = grow(r.ws[i].x, mr*r.nPad)
	}
	runParallel(np, r, &r.wg)
	r.l, r.b = nil, nil
}

// part solves the row tiles of part id.
func (r *rltLeaf) part(id int) {
	lo, hi := r.tiles*id/r.np, r.tiles*(id+1)/r.np
	ws := &r.ws[id]
	for tile := lo; tile < hi; tile++ {
		r.solveTile(tile, ws.t, ws.x)
	}
}

func (r *rltLeaf) solveTile(tile int, t, x []float64) {
	k, n, nPad := r.k, r.n, r.nPad
	mr, nr := k.MR, k.NR
	r0 := tile * mr
	rows := min(mr, r.m-r0)
	// A full tile whose width is a multiple of NR is solved in place in B;
	// an edge tile is copied into t, padded with zeros, and copied back.
	ld := r.ldb
	inPlace := rows == mr && n == nPad
	if inPlace {
		t = r.b[r0*r.ldb:]
	} else {
		ld = nPad
		for i := 0; i < mr; i++ {
			ti := t[i*nPad : i*nPad+nPad]
			if i < rows {
				copy(ti, r.b[(r0+i)*r.ldb:(r0+i)*r.ldb+n])
				clear(ti[n:])
			} else {
				clear(ti)
			}
		}
	}
	off := 0
	for j0 := 0; j0 < n; j0 += nr {
		w := min(nr, n-j0)
		if j0 > 0 {
			// T[:, j0:j0+NR] −= X[:, 0:j0]·L[j0:j0+NR, 0:j0]ᵀ
			k.Run(j0, x[:j0*mr], r.lpack[off:off+j0*nr], t[j0:], ld, -1, 1)
		}
		off += j0 * nr
		// The NR×NR diagonal block: X_J = T_J·L_JJ⁻ᵀ, one more micro-kernel
		// call on the packed right-hand side.
		xj := x[j0*mr : j0*mr+nr*mr]
		for q := 0; q < nr; q++ {
			xq := xj[q*mr : q*mr+mr]
			for i := range xq {
				xq[i] = t[i*ld+j0+q]
			}
		}
		k.Run(nr, xj, r.dinv[j0*nr:j0*nr+nr*nr], t[j0:], ld, 1, 0)
		if j0+w < n {
			// Pack the solved columns: x[q·MR + i] = X[i][q].
			for q := 0; q < nr; q++ {
				xq := xj[q*mr : q*mr+mr]
				for i := range xq {
					xq[i] = t[i*ld+j0+q]
				}
			}
		}
	}
	if !inPlace {
		for i := 0; i < rows; i++ {
			copy(r.b[(r0+i)*r.ldb:(r0+i)*r.ldb+n], t[i*nPad:i*nPad+n])
		}
	}
}

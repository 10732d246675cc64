package linalg

import (
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"

	"github.com/pacpfl/pacpfl/asm"
)

// Panic messages: gonum's (gonum.org/v1/gonum/blas/gonum/errors.go), so a
// caller sees the same text whichever backend it runs on.
const (
	zeroIncX     = "blas: zero x index increment"
	zeroIncY     = "blas: zero y index increment"
	mLT0         = "blas: m < 0"
	nLT0         = "blas: n < 0"
	kLT0         = "blas: k < 0"
	badUplo      = "blas: illegal triangle"
	badTranspose = "blas: illegal transpose"
	badDiag      = "blas: illegal diagonal"
	badSide      = "blas: illegal side"
	badLdA       = "blas: bad leading dimension of A"
	badLdB       = "blas: bad leading dimension of B"
	badLdC       = "blas: bad leading dimension of C"
	shortX       = "blas: insufficient length of x"
	shortY       = "blas: insufficient length of y"
	shortA       = "blas: insufficient length of a"
	shortB       = "blas: insufficient length of b"
	shortC       = "blas: insufficient length of c"
)

// parallelMinFlops is the work (in FLOP) below which a call stays on one
// goroutine: waking a pool worker costs microseconds. Measured on the 2-core
// Zen 3 (square DGEMM, 1 vs 2 goroutines alternated, minimum of 300): two
// goroutines lose below n ≈ 128 (4e6 FLOP) and win from n ≈ 160 on (1.07×;
// 1.3× at 192, 1.6× at 256). That machine was shared with other jobs, so the
// second core was often busy; 1<<22 is the measured break-even.
var parallelMinFlops = float64(1 << 22)

// Dgemm computes C = alpha * op(A) * op(B) + beta * C, where op(X) is X or Xᵀ,
// op(A) is m×k, op(B) is k×n and C is m×n, all row-major.
func (nat *Native) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int,
	beta float64, c []float64, ldc int) {
	switch tA {
	default:
		panic(badTranspose)
	case blas.NoTrans, blas.Trans, blas.ConjTrans:
	}
	switch tB {
	default:
		panic(badTranspose)
	case blas.NoTrans, blas.Trans, blas.ConjTrans:
	}
	aTrans := tA == blas.Trans || tA == blas.ConjTrans
	bTrans := tB == blas.Trans || tB == blas.ConjTrans
	if !checkGemm(aTrans, bTrans, m, n, k, a, lda, b, ldb, c, ldc, true) {
		return
	}
	if alpha == 0 || k == 0 {
		// BLAS: A and B are not read, so their NaNs do not reach C.
		scaleRect(m, n, beta, c, ldc)
		return
	}
	if m*n*k <= tinyGemm {
		gemmTiny(aTrans, bTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	nat.gemm(gemmProblem{
		tA: aTrans, tB: bTrans, m: m, n: n, k: k, alpha: alpha,
		a: a, lda: lda, b: b, ldb: ldb, beta: beta, c: c, ldc: ldc, tri: blas.All,
	}, nat.Threads())
}

// GemmUpperB computes C = alpha·A·U + beta·C for the m×n A and C and the
// n×n upper triangular U held in the upper triangle of b (row-major; the
// entries below the diagonal are never used, whatever they hold): a GEMM
// that skips U's zero part, about half the flops of Dgemm with the same
// blocking, each entry of C summed in the order Dgemm would sum it with
// those zeros. As in Dgemm, a non-finite A entry may meet one of the zeros
// next to the diagonal (and give NaN). Arguments are checked as Dgemm's.
func (nat *Native) GemmUpperB(m, n int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64,
	c []float64, ldc int) {
	if !checkGemm(false, false, m, n, n, a, lda, b, ldb, c, ldc, true) {
		return
	}
	if alpha == 0 {
		scaleRect(m, n, beta, c, ldc)
		return
	}
	nat.gemm(gemmProblem{
		m: m, n: n, k: n, alpha: alpha,
		a: a, lda: lda, b: b, ldb: ldb, beta: beta, c: c, ldc: ldc, tri: blas.All, upperB: true,
	}, nat.Threads())
}

// checkGemm panics, with gonum's messages and in its order, on the
// arguments of C = op(A)·op(B) + C (op(A) m×k, op(B) k×n) that Dgemm
// refuses, and reports whether there is work (m and n above zero). With
// checkB false, B is not checked (it was packed already).
func checkGemm(tA, tB bool, m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int,
	checkB bool) bool {
	if m < 0 {
		panic(mLT0)
	}
	if n < 0 {
		panic(nLT0)
	}
	if k < 0 {
		panic(kLT0)
	}
	if (tA && lda < max(1, m)) || (!tA && lda < max(1, k)) {
		panic(badLdA)
	}
	if checkB && ((tB && ldb < max(1, k)) || (!tB && ldb < max(1, n))) {
		panic(badLdB)
	}
	if ldc < max(1, n) {
		panic(badLdC)
	}
	if m == 0 || n == 0 {
		return false
	}
	if (tA && len(a) < (k-1)*lda+m) || (!tA && len(a) < (m-1)*lda+k) {
		panic(shortA)
	}
	if checkB && ((tB && len(b) < (n-1)*ldb+k) || (!tB && len(b) < (k-1)*ldb+n)) {
		panic(shortB)
	}
	if len(c) < (m-1)*ldc+n {
		panic(shortC)
	}
	return true
}

// tinyGemm is the size m·n·k up to which Dgemm uses plain loops: packing
// and the pooled state cost ~150 ns, which loses to loops up to about 4×4×4
// (measured: n=2 159 vs 46 ns, n=4 201 vs 108 ns, n=8 287 vs 426 ns).
const tinyGemm = 64

// gemmTiny is C = alpha*op(A)*op(B) + beta*C by definition (alpha != 0).
func gemmTiny(tA, tB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64,
	c []float64, ldc int) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var sum float64
			for l := 0; l < k; l++ {
				var av, bv float64
				if tA {
					av = a[l*lda+i]
				} else {
					av = a[i*lda+l]
				}
				if tB {
					bv = b[j*ldb+l]
				} else {
					bv = b[l*ldb+j]
				}
				sum += av * bv
			}
			if beta == 0 {
				c[i*ldc+j] = alpha * sum
			} else {
				c[i*ldc+j] = beta*c[i*ldc+j] + alpha*sum
			}
		}
	}
}

// scaleRect sets C = beta*C on an m×n block (beta == 0 overwrites NaNs).
func scaleRect(m, n int, beta float64, c []float64, ldc int) {
	if beta == 1 {
		return
	}
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

// gemmProblem is C = alpha*op(A)*op(B) + beta*C restricted, when tri is
// blas.Upper or blas.Lower, to the elements C[i][j] with j >= i or j <= i
// (SYRK). Arguments are already checked; alpha != 0 and k > 0.
type gemmProblem struct {
	tA, tB  bool
	m, n, k int
	alpha   float64
	a       []float64
	lda     int
	b       []float64
	ldb     int
	beta    float64
	c       []float64
	ldc     int
	tri     blas.Uplo
	// upperB: op(B) is upper triangular (k == n): its entries below the
	// diagonal are taken as zero (never used, whatever they hold), and the
	// products with them are skipped (GemmUpperB).
	upperB bool
	// triK: one operand is triangular with explicit zeros (GemmTriangular),
	// and each micro-tile runs over the part of k where it is not zero.
	triK triOperand
	// packed, if not nil, holds op(B) already packed (GemmPacked, one
	// region covering C).
	packed *PackedB
}

// region is the block C[i0:i1, j0:j1] one goroutine computes.
type region struct{ i0, i1, j0, j1 int }

// gemmCall is one parallel GEMM: the problem and the parts of C.
type gemmCall struct {
	p        gemmProblem
	kern     *asm.GemmKernel
	blk      Blocking
	parts    [maxThreads]region
	nregions int
	next     atomic.Int64 // next region to take
	ws       [maxThreads]*workspace
	wg       sync.WaitGroup
}

// part is goroutine id's loop over the regions not yet taken.
func (g *gemmCall) part(id int) {
	for {
		r := int(g.next.Add(1)) - 1
		if r >= g.nregions {
			return
		}
		gemmRegion(g.ws[id], g.kern, &g.p, g.blk, g.parts[r])
	}
}

var gemmCalls freeList[gemmCall]

// gemm runs p on up to threads goroutines, splitting C into a grid of
// independent blocks (each goroutine packs its own panels: no barriers), or
// for the shapes useSharedB picks, on the shared-B schedule (gemmShared).
func (nat *Native) gemm(p gemmProblem, threads int) {
	kern := nat.kernel()
	blk := roundBlocking(nat.Blocking(), kern)
	if p.tri == blas.All && !p.upperB && p.triK == triNone && threads > 1 &&
		2*float64(p.m)*float64(p.n)*float64(p.k) >= parallelMinFlops && p.m > kern.MR {
		switch gemmSchedule(nat.schedule.Load()) {
		case scheduleShared:
			nat.gemmShared(p, kern, blk, threads)
			return
		case scheduleAuto:
			if sharedB(p.m, p.n, p.k) {
				nat.gemmShared(p, kern, blk, threads)
				return
			}
		}
	}
	flops := 2 * float64(p.m) * float64(p.n) * float64(p.k)
	if p.tri != blas.All {
		flops /= 2
	}
	if threads <= 1 || flops < parallelMinFlops {
		nat.gemmSolo(&p, kern, blk)
		return
	}
	g := gemmCalls.get()
	g.p, g.kern, g.blk = p, kern, blk
	// C is cut into nr independent regions, one per goroutine (nw of them);
	// a goroutine that finishes early takes any region not yet started (an
	// atomic counter). Measured: cutting C into 2 regions per goroutine, to
	// balance a shared machine, was 2% slower at n = 2000 (more packing) even
	// with other jobs running, so there is one region per goroutine.
	var nr int
	if p.tri != blas.All {
		nr = splitTriangle(g.parts[:], p.n, kern.MR, threads, p.tri)
	} else {
		nr = splitGrid(g.parts[:], p.m, p.n, kern.MR, kern.NR, threads)
	}
	nw := min(threads, nr)
	g.nregions = nr
	g.next.Store(0)
	// The caller takes every goroutine's workspace up front, so a call with
	// nw goroutines always holds nw workspaces: after the first such call the
	// free list has them, however the goroutines happen to overlap in time.
	// Size every workspace for the largest region, whichever regions its
	// goroutine ends up taking.
	mcMax, ncMax := 0, 0
	for _, r := range g.parts[:nr] {
		mcMax = max(mcMax, min(blk.MC, ceilDiv(r.i1-r.i0, kern.MR)*kern.MR))
		ncMax = max(ncMax, min(blk.NC, ceilDiv(r.j1-r.j0, kern.NR)*kern.NR))
	}
	kcMax := min(blk.KC, p.k)
	for i := 0; i < nw; i++ {
		g.ws[i] = getWorkspace()
		g.ws[i].ensure(mcMax*kcMax, ncMax*kcMax, kern.MR*kern.NR)
	}
	runParallel(nw, g, &g.wg)
	for i := 0; i < nw; i++ {
		putWorkspace(g.ws[i])
		g.ws[i] = nil
	}
	g.p = gemmProblem{} // drop references to the caller's slices
	gemmCalls.put(g)
}

// soloMaxFloats bounds the workspaces gemmSolo keeps in soloSlots: 64 Ki
// doubles (512 KiB) covers the products of small clients' networks and the
// factorizations' leaf blocks; larger ones go back to the free list.
const soloMaxFloats = 1 << 16

// soloSlots hold small workspaces for gemmSolo, shared by every Native and
// taken and returned by atomic swaps. Millions of small products (a layer
// over a few rows, on every client of a federation) spent about a tenth of
// their time taking and returning a gemmCall and a workspace under the free
// lists' locks, more when two goroutines contended for them. A slot per Native instead kept hundreds of buffers (one per
// client) cycling through the caches; these few stay warm. When every slot
// is empty or full, the free list serves.
var soloSlots [16]atomic.Pointer[workspace]

// gemmSolo runs p on the calling goroutine, the whole of C as one region:
// gemmRegion's arithmetic, so the result is the same to the bit.
func (nat *Native) gemmSolo(p *gemmProblem, kern *asm.GemmKernel, blk Blocking) {
	mc := min(blk.MC, ceilDiv(p.m, kern.MR)*kern.MR)
	nc := min(blk.NC, ceilDiv(p.n, kern.NR)*kern.NR)
	kc := min(blk.KC, p.k)
	na, nb, nt := mc*kc, nc*kc, kern.MR*kern.NR
	small := na+nb <= soloMaxFloats
	var ws *workspace
	if small {
		for i := range soloSlots {
			if soloSlots[i].Load() != nil {
				if ws = soloSlots[i].Swap(nil); ws != nil {
					break
				}
			}
		}
	}
	if ws == nil {
		ws = getWorkspace()
	}
	ws.ensure(na, nb, nt)
	gemmRegion(ws, kern, p, blk, region{0, p.m, 0, p.n})
	if small && len(ws.a)+len(ws.b) <= soloMaxFloats {
		for i := range soloSlots {
			if soloSlots[i].Load() == nil && soloSlots[i].CompareAndSwap(nil, ws) {
				return
			}
		}
	}
	putWorkspace(ws)
}

func roundBlocking(b Blocking, k *asm.GemmKernel) Blocking {
	b.MC = max(k.MR, b.MC/k.MR*k.MR)
	b.NC = max(k.NR, b.NC/k.NR*k.NR)
	return b
}

// splitGrid cuts an m×n C into tm×tn blocks (tm*tn <= threads), choosing the
// grid whose blocks have the smallest perimeter (packing traffic), with block
// edges on tile boundaries. It returns the number of blocks.
func splitGrid(parts []region, m, n, mr, nr, threads int) int {
	mu, nu := ceilDiv(m, mr), ceilDiv(n, nr)
	threads = min(threads, mu*nu)
	bestTm, bestTn, best := 1, 1, -1.0
	for tm := 1; tm <= threads; tm++ {
		tn := threads / tm
		if tm*tn != threads || tm > mu || tn > nu {
			continue
		}
		cost := float64(m)/float64(tm) + float64(n)/float64(tn)
		if best < 0 || cost < best {
			bestTm, bestTn, best = tm, tn, cost
		}
	}
	if best < 0 { // no exact factorisation fits: split the longer side only
		if mu >= nu {
			bestTm, bestTn = min(threads, mu), 1
		} else {
			bestTm, bestTn = 1, min(threads, nu)
		}
	}
	np := 0
	for x := 0; x < bestTm; x++ {
		i0, i1 := min(m, mu*x/bestTm*mr), min(m, mu*(x+1)/bestTm*mr)
		for y := 0; y < bestTn; y++ {
			j0, j1 := min(n, nu*y/bestTn*nr), min(n, nu*(y+1)/bestTn*nr)
			parts[np] = region{i0, i1, j0, j1}
			np++
		}
	}
	return np
}

// splitTriangle cuts the rows of an n×n triangle into bands of about equal
// area (on tile boundaries); each band covers only the columns its part of
// the triangle reaches.
func splitTriangle(parts []region, n, mr, threads int, ul blas.Uplo) int {
	mu := ceilDiv(n, mr)
	threads = min(threads, mu)
	total := float64(n) * float64(n+1) / 2
	np, i0 := 0, 0
	for t := 0; t < threads && i0 < n; t++ {
		i1 := n
		if t < threads-1 {
			target := total * float64(t+1) / float64(threads)
			// area of rows [0,i): lower: i(i+1)/2; upper: total - (n-i)(n-i+1)/2.
			lo, hi := i0, n
			for lo < hi {
				mid := (lo + hi) / 2
				var area float64
				if ul == blas.Lower {
					area = float64(mid) * float64(mid+1) / 2
				} else {
					area = total - float64(n-mid)*float64(n-mid+1)/2
				}
				if area < target {
					lo = mid + 1
				} else {
					hi = mid
				}
			}
			i1 = min(n, ceilDiv(lo, mr)*mr)
		}
		if i1 <= i0 {
			continue
		}
		if ul == blas.Lower {
			parts[np] = region{i0, i1, 0, i1}
		} else {
			parts[np] = region{i0, i1, i0, n}
		}
		np++
		i0 = i1
	}
	return np
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// Tile classes against the SYRK triangle.
const (
	tileIn = iota
	tilePartial
	tileOut
)

// classify tells where the block rows [i, i+mr) × cols [j, j+nr) lies
// relative to the triangle ul (blas.All: everywhere inside).
func classify(ul blas.Uplo, i, mr, j, nr int) int {
	switch ul {
	case blas.Upper: // keep j >= i
		if j >= i+mr-1 {
			return tileIn
		}
		if j+nr-1 < i {
			return tileOut
		}
		return tilePartial
	case blas.Lower: // keep j <= i
		if j+nr-1 <= i {
			return tileIn
		}
		if j > i+mr-1 {
			return tileOut
		}
		return tilePartial
	}
	return tileIn
}

// gemmRegion computes the block r of C on one goroutine: the GotoBLAS loops
// jc (NC) → pc (KC, pack B) → ic (MC, pack A) → macro-kernel.
func gemmRegion(ws *workspace, kern *asm.GemmKernel, p *gemmProblem, blk Blocking, r region) {
	mr, nr := kern.MR, kern.NR
	mc, kc, nc := blk.MC, blk.KC, blk.NC
	// ws was sized by gemm for the blocks of its largest region (not the
	// full block sizes: small problems keep small workspaces).
	for jc := r.j0; jc < r.j1; jc += nc {
		nb := min(nc, r.j1-jc)
		for pc := 0; pc < p.k; pc += kc {
			kb := min(kc, p.k-pc)
			if p.upperB && pc >= jc+nb {
				break // rows pc… of op(B) are zero in columns jc…jc+nb−1
			}
			beta := 1.0
			if pc == 0 {
				beta = p.beta
			}
			packed := false
			for ic := r.i0; ic < r.i1; ic += mc {
				mb := min(mc, r.i1-ic)
				if p.tri != blas.All && classify(p.tri, ic, mb, jc, nb) == tileOut {
					continue
				}
				bp := ws.b
				if p.packed != nil {
					bp = p.packed.data[p.packed.offs[jc/nc*p.packed.nk+pc/kc]:]
				} else if !packed {
					packB(ws.b, p, pc, kb, jc, nb, nr)
					packed = true
				}
				packA(ws.a, p, ic, mb, pc, kb, mr)
				macroKernel(ws.a, bp, ws.tile, kern, p, ic, mb, jc, nb, pc, kb, beta)
			}
		}
	}
}

// macroKernel multiplies the packed mb×kb block of A (pa) by the packed
// kb×nb block of B (pb) into C[ic:ic+mb, jc:jc+nb], one MR×NR tile at a
// time (edge tiles through the scratch tile). Column micro-panels outermost
// so a B micro-panel stays in L1 while the A block streams from L2.
func macroKernel(pa, pb, tile []float64, kern *asm.GemmKernel, p *gemmProblem, ic, mb, jc, nb, pc, kb int,
	beta float64) {
	mr, nr := kern.MR, kern.NR
	ldc := p.ldc
	// Panel offsets advance by addition: a division by the (variable) tile
	// size per tile was a tenth of a small product's time.
	for jr, boff := 0, 0; jr < nb; jr, boff = jr+nr, boff+kb*nr {
		ncols := min(nr, nb-jr)
		bp := pb[boff:]
		j := jc + jr
		kr := kb
		if p.upperB {
			// Column j+c of op(B) is zero below row j+c: the panel's rows
			// from j+nr on contribute nothing. (pc > 0 here if kr ≤ 0, so
			// beta is 1 and skipping leaves C as it must be.)
			kr = min(kb, j+nr-pc)
			if kr <= 0 {
				continue
			}
		}
		for ir, aoff := 0, 0; ir < mb; ir, aoff = ir+mr, aoff+kb*mr {
			nrows := min(mr, mb-ir)
			i := ic + ir
			cls := classify(p.tri, i, nrows, j, ncols)
			if cls == tileOut {
				continue
			}
			ap := pa[aoff:]
			bt, kt := bp, kr
			if p.triK != triNone {
				lo, hi := p.triK.kRange(i, mr, j, pc, kb)
				if hi <= lo && beta == 1 {
					continue // nothing to add to C
				}
				hi = max(lo, hi) // k = 0 still scales C by beta
				ap, bt, kt = ap[lo*mr:], bp[lo*nr:], hi-lo
			}
			if cls == tileIn && nrows == mr && ncols == nr {
				kern.Run(kt, ap, bt, p.c[i*ldc+j:], ldc, p.alpha, beta)
				continue
			}
			// Edge or diagonal tile: compute into the scratch tile, then
			// merge the valid part.
			t := tile[:mr*nr]
			kern.Run(kt, ap, bt, t, nr, 1, 0)
			mergeTile(p, t, nr, i, nrows, j, ncols, beta)
		}
	}
}

// mergeTile sets C[i+x][j+y] = alpha·t[x][y] (+ beta·C) over the nrows×ncols
// part of the scratch tile t (row stride nr) that lies in p's triangle.
func mergeTile(p *gemmProblem, t []float64, nr, i, nrows, j, ncols int, beta float64) {
	alpha, ldc := p.alpha, p.ldc
	for x := 0; x < nrows; x++ {
		lo, hi := 0, ncols
		switch p.tri {
		case blas.Upper:
			lo = max(0, i+x-j)
		case blas.Lower:
			hi = min(ncols, i+x-j+1)
		}
		if lo >= hi {
			continue
		}
		trow := t[x*nr+lo : x*nr+hi]
		crow := p.c[(i+x)*ldc+j+lo : (i+x)*ldc+j+hi]
		crow = crow[:len(trow)]
		// With alpha = ±1 and beta ∈ {0, 1} only the sum rounds, in any
		// order of evaluation, fused or not: the SIMD axpy and the copy give
		// the loops' bits, faster than scalar loads of the tile the kernel
		// has just stored as vectors.
		switch {
		case beta == 1 && (alpha == 1 || alpha == -1):
			asm.AxpyUnitary(alpha, trow, crow)
			continue
		case beta == 0 && alpha == 1:
			copy(crow, trow)
			continue
		}
		if beta == 0 {
			for y, v := range trow {
				crow[y] = alpha * v
			}
			continue
		}
		for y, v := range trow {
			crow[y] = beta*crow[y] + alpha*v
		}
	}
}

// packA copies op(A)[ic:ic+mb, pc:pc+kb] into micro-panels of mr rows:
// dst[panel*kb*mr + l*mr + r]. Rows past mb are zero.
func packA(dst []float64, p *gemmProblem, ic, mb, pc, kb, mr int) {
	lda := p.lda
	for ir, off := 0, 0; ir < mb; ir, off = ir+mr, off+kb*mr {
		rows := min(mr, mb-ir)
		d := dst[off : off+kb*mr]
		if !p.tA { // op(A)[i][l] = a[i*lda+l]: interleave rows
			interleave(d, p.a, (ic+ir)*lda+pc, lda, rows, kb, mr)
		} else if rows < mr { // full panels are done below, row by row
			for l := 0; l < kb; l++ {
				off := (pc+l)*lda + ic + ir
				copy(d[l*mr:l*mr+rows], p.a[off:off+rows])
			}
		}
		if rows < mr {
			for l := 0; l < kb; l++ {
				clear(d[l*mr+rows : l*mr+mr])
			}
		}
	}
	if p.tA { // op(A)[i][l] = a[l*lda+i]: each panel column is contiguous
		asm.PackPanels(dst, p.a, pc*lda+ic, lda, mb/mr, kb, mr)
	}
}

// packB copies op(B)[pc:pc+kb, jc:jc+nb] into micro-panels of nr columns:
// dst[panel*kb*nr + l*nr + c]. Columns past nb are zero.
func packB(dst []float64, p *gemmProblem, pc, kb, jc, nb, nr int) {
	ldb := p.ldb
	for jr, off := 0, 0; jr < nb; jr, off = jr+nr, off+kb*nr {
		cols := min(nr, nb-jr)
		d := dst[off : off+kb*nr]
		if p.tB { // op(B)[l][j] = b[j*ldb+l]: interleave rows of b
			interleave(d, p.b, (jc+jr)*ldb+pc, ldb, cols, kb, nr)
		} else if cols < nr { // full panels are done below, row by row
			for l := 0; l < kb; l++ {
				off := (pc+l)*ldb + jc + jr
				copy(d[l*nr:l*nr+cols], p.b[off:off+cols])
			}
		}
		if cols < nr {
			for l := 0; l < kb; l++ {
				clear(d[l*nr+cols : l*nr+nr])
			}
		}
	}
	if !p.tB { // op(B)[l][j] = b[l*ldb+j]: panel rows are contiguous
		asm.PackPanels(dst, p.b, pc*ldb+jc, ldb, nb/nr, kb, nr)
	}
	if p.upperB {
		zeroBelowDiagonal(dst, pc, kb, jc, nb, nr)
	}
}

// zeroBelowDiagonal clears, in the packed block of op(B)[pc:pc+kb,
// jc:jc+nb], the entries below the diagonal that the micro-kernel reads:
// a panel from column j is run on its rows up to j+nr (macroKernel), so
// in column j+x the rows j+x+1 … j+nr−1.
func zeroBelowDiagonal(dst []float64, pc, kb, jc, nb, nr int) {
	for jr := 0; jr < nb; jr += nr {
		j := jc + jr
		d := dst[(jr/nr)*kb*nr : (jr/nr+1)*kb*nr]
		for x := 0; x < nr; x++ {
			for l := max(0, j+x+1-pc); l < min(kb, j+nr-pc); l++ {
				d[l*nr+x] = 0
			}
		}
	}
}

// interleave writes dst[l*w+x] = src[off+x*ld+l] for x < cnt, l < kb: cnt
// contiguous source rows become the columns of a w-wide panel. A full panel
// (cnt = w, the micro-kernel shapes) is asm.PackTransposed.
func interleave(dst, src []float64, off, ld, cnt, kb, w int) {
	if cnt == w {
		asm.PackTransposed(dst[:kb*w], src, off, ld, w, kb)
		return
	}
	for x := 0; x < cnt; x++ {
		for l, v := range src[off+x*ld : off+x*ld+kb] {
			dst[l*w+x] = v
		}
	}
}

// freeList is a mutex-guarded stack of reusable values (see wsFree for why
// not sync.Pool).
type freeList[T any] struct {
	mu   sync.Mutex
	list []*T
}

func (f *freeList[T]) get() *T {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := len(f.list); n > 0 {
		v := f.list[n-1]
		f.list = f.list[:n-1]
		return v
	}
	return new(T)
}

func (f *freeList[T]) put(v *T) {
	f.mu.Lock()
	f.list = append(f.list, v)
	f.mu.Unlock()
}

package cholesky

import (
	"fmt"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"

	"github.com/pacpfl/pacpfl/linalg"
)

// engine runs the blocked and recursive algorithms on row-major
// lower-triangular matrices (see doc.go). Row-major lower L is column-major
// upper Lᵀ, so every split below is the mirror image of the column-major
// LAPACK one. Recursive halving turns most flops into a few large Dgemm
// calls with long, square-ish operands, the shape a packed multi-core GEMM
// runs fastest; the triangular solves, symmetric updates and triangular
// products are themselves split into Dgemm down to the leaf sizes.
type engine struct {
	b  blas.Float64
	p  params
	ws *workspace
}

// workspace is the scratch memory of the leaf kernels; a Factor keeps one,
// Native takes one from a pool per call.
type workspace struct {
	la       lookahead
	rlt      rltLeaf
	tri, tmp []float64 // trmmLeaf's dense triangle and copy of B
	t        []float64 // lauum's L21ᵀL21 when the halves run concurrently
	halves   halves
	par      [2]*workspace // the halves' own workspaces
}

// params are the recursion leaf sizes (see defaultParams).
type params struct {
	right int // > 0: right-looking with panels of this width at the top level
	// noLookahead keeps the right-looking loop on the BLAS's own threads.
	noLookahead bool
	// noHalves keeps trtri and lauum sequential (see concurrentHalves);
	// halvesMin overrides concurrentHalvesMin (tests).
	noHalves  bool
	halvesMin int
	potrf     int // diagonal blocks factored by potf2
	trsm      int // triangular solves done by the leaf kernel (rltLeaf)
	syrk      int // symmetric updates handed to the BLAS Dsyrk
	trtri     int // triangular inverses done by trti2
	lauum     int // Lᵀ·L products done by lauu2
	trmm      int // triangular products done as GEMMs on a zero-padded triangle
	chunk     int // rows/columns of B per leaf triangular product (trmmLeaf)
}

// defaultParams are the leaf and panel sizes chosen with TestTuneParams
// (see doc.go).
var defaultParams = params{right: 192, potrf: 64, trsm: maxTrsmLeaf, syrk: 1 << 30, trtri: 64, lauum: 64, trmm: 128,
	chunk: 512}

// panel is SetPanel's width (0: defaultParams.right).
var panel atomic.Int64

// maxPanel bounds SetPanel: a panel is a GEMM inner dimension and a
// workspace of panel × n.
const maxPanel = 4096

// SetPanel sets the panel width of the right-looking factorization (the
// inner dimension of its trailing updates) for every Factor and Native
// without parameters of their own; 0 restores the default, 192. A measured
// width comes from package wisdom. The width changes the order of
// additions, so factors differ in their last bits between widths.
func SetPanel(nb int) error {
	if nb < 0 || nb > maxPanel {
		return fmt.Errorf("cholesky: panel width %d outside [0, %d]", nb, maxPanel)
	}
	panel.Store(int64(nb))
	return nil
}

// Panel returns the panel width in force.
func Panel() int { return currentParams().right }

// currentParams are defaultParams with the panel width SetPanel chose.
func currentParams() params {
	p := defaultParams
	if w := panel.Load(); w > 0 {
		p.right = int(w)
	}
	return p
}

// split returns the size of the leading half of a problem of size n > 1: n/2
// rounded up to a multiple of 16 so the sub-blocks start on aligned columns.
func split(n int) int {
	n1 := (n/2 + 15) &^ 15
	if n1 >= n {
		n1 = n / 2
	}
	return n1
}

// potrf factors the n×n lower triangle of a in place. It returns col = −1 on
// success, else the first failing column and its pivot.
func (e engine) potrf(n int, a []float64, lda int) (col int, pivot float64) {
	if e.p.right > 0 && n > e.p.right {
		nb := e.p.right
		if _, native := e.b.(*linalg.Native); native && !e.p.noLookahead {
			if w := threadsOf(e.b); w > 1 {
				return e.potrfLookahead(n, a, lda, nb, w)
			}
		}
		e.p.right = 0 // the diagonal blocks are factored recursively
		return e.potrfRight(n, a, lda, nb)
	}
	if n <= e.p.potrf {
		return potf2(n, a, lda)
	}
	n1 := split(n)
	n2 := n - n1
	if c, p := e.potrf(n1, a, lda); c >= 0 {
		return c, p
	}
	a21 := a[n1*lda:]
	e.trsmRLT(n2, n1, a, lda, a21, lda)                // L21 = A21·L11⁻ᵀ
	e.syrkLN(n2, n1, -1, a21, lda, a[n1*lda+n1:], lda) // A22 −= L21·L21ᵀ
	c, p := e.potrf(n2, a[n1*lda+n1:], lda)
	if c >= 0 {
		return c + n1, p
	}
	return -1, 0
}

// trsmRLT solves X·Lᵀ = B, overwriting the m×n matrix B; L is n×n lower.
func (e engine) trsmRLT(m, n int, l []float64, ldl int, b []float64, ldb int) {
	if m == 0 || n == 0 {
		return
	}
	if n <= e.p.trsm {
		e.ws.rlt.solve(threadsOf(e.b), m, n, l, ldl, b, ldb)
		return
	}
	n1 := split(n)
	n2 := n - n1
	e.trsmRLT(m, n1, l, ldl, b, ldb)
	// B2 −= X1·L21ᵀ
	e.b.Dgemm(blas.NoTrans, blas.Trans, m, n2, n1, -1, b, ldb, l[n1*ldl:], ldl, 1, b[n1:], ldb)
	e.trsmRLT(m, n2, l[n1*ldl+n1:], ldl, b[n1:], ldb)
}

// syrkLN updates the lower triangle of the n×n matrix C += alpha·A·Aᵀ, A n×k.
func (e engine) syrkLN(n, k int, alpha float64, a []float64, lda int, c []float64, ldc int) {
	if n == 0 || k == 0 {
		return
	}
	if n <= e.p.syrk {
		e.b.Dsyrk(blas.Lower, blas.NoTrans, n, k, alpha, a, lda, 1, c, ldc)
		return
	}
	n1 := split(n)
	n2 := n - n1
	e.syrkLN(n1, k, alpha, a, lda, c, ldc)
	e.b.Dgemm(blas.NoTrans, blas.Trans, n2, n1, k, alpha, a[n1*lda:], lda, a, lda, 1, c[n1*ldc:], ldc)
	e.syrkLN(n2, k, alpha, a[n1*lda:], lda, c[n1*ldc+n1:], ldc)
}

// syrkLT updates the lower triangle of the n×n matrix C += alpha·Aᵀ·A, A k×n.
func (e engine) syrkLT(n, k int, alpha float64, a []float64, lda int, c []float64, ldc int) {
	if n == 0 || k == 0 {
		return
	}
	if n <= e.p.syrk {
		e.b.Dsyrk(blas.Lower, blas.Trans, n, k, alpha, a, lda, 1, c, ldc)
		return
	}
	n1 := split(n)
	n2 := n - n1
	e.syrkLT(n1, k, alpha, a, lda, c, ldc)
	e.b.Dgemm(blas.Trans, blas.NoTrans, n2, n1, k, alpha, a[n1:], lda, a, lda, 1, c[n1*ldc:], ldc)
	e.syrkLT(n2, k, alpha, a[n1:], lda, c[n1*ldc+n1:], ldc)
}

// trmmRLN overwrites the m×n matrix B with B·T; T is n×n lower (unit
// diagonal if diag is Unit).
func (e engine) trmmRLN(diag blas.Diag, m, n int, t []float64, ldt int, b []float64, ldb int) {
	if m == 0 || n == 0 {
		return
	}
	if n <= e.p.trmm {
		e.trmmLeaf(blas.Right, blas.NoTrans, diag, m, n, 1, t, ldt, b, ldb)
		return
	}
	n1 := split(n)
	n2 := n - n1
	// [B1 B2]·[T11 0; T21 T22] = [B1·T11 + B2·T21, B2·T22].
	e.trmmRLN(diag, m, n1, t, ldt, b, ldb)
	e.b.Dgemm(blas.NoTrans, blas.NoTrans, m, n1, n2, 1, b[n1:], ldb, t[n1*ldt:], ldt, 1, b, ldb)
	e.trmmRLN(diag, m, n2, t[n1*ldt+n1:], ldt, b[n1:], ldb)
}

// trmmLLN overwrites the m×n matrix B with alpha·T·B; T is m×m lower.
func (e engine) trmmLLN(diag blas.Diag, m, n int, alpha float64, t []float64, ldt int, b []float64, ldb int) {
	if m == 0 || n == 0 {
		return
	}
	if m <= e.p.trmm {
		e.trmmLeaf(blas.Left, blas.NoTrans, diag, m, n, alpha, t, ldt, b, ldb)
		return
	}
	m1 := split(m)
	m2 := m - m1
	// [T11 0; T21 T22]·[B1; B2] = [T11·B1; T21·B1 + T22·B2].
	e.trmmLLN(diag, m2, n, alpha, t[m1*ldt+m1:], ldt, b[m1*ldb:], ldb)
	e.b.Dgemm(blas.NoTrans, blas.NoTrans, m2, n, m1, alpha, t[m1*ldt:], ldt, b, ldb, 1, b[m1*ldb:], ldb)
	e.trmmLLN(diag, m1, n, alpha, t, ldt, b, ldb)
}

// trmmLLT overwrites the m×n matrix B with Lᵀ·B; L is m×m lower.
func (e engine) trmmLLT(m, n int, l []float64, ldl int, b []float64, ldb int) {
	if m == 0 || n == 0 {
		return
	}
	if m <= e.p.trmm {
		e.trmmLeaf(blas.Left, blas.Trans, blas.NonUnit, m, n, 1, l, ldl, b, ldb)
		return
	}
	m1 := split(m)
	m2 := m - m1
	// [L11ᵀ L21ᵀ; 0 L22ᵀ]·[B1; B2]: B1 = L11ᵀ·B1 + L21ᵀ·B2, then B2 = L22ᵀ·B2.
	e.trmmLLT(m1, n, l, ldl, b, ldb)
	e.b.Dgemm(blas.Trans, blas.NoTrans, m1, n, m2, 1, l[m1*ldl:], ldl, b[m1*ldb:], ldb, 1, b, ldb)
	e.trmmLLT(m2, n, l[m1*ldl+m1:], ldl, b[m1*ldb:], ldb)
}

// trmmLeaf computes B = alpha·op(T)·B (side Left, T m×m) or B = alpha·B·T
// (side Right, T n×n) for a small lower-triangular T by copying T into a
// dense square with explicit zeros (and ones on a unit diagonal) and calling
// the BLAS Dgemm on slices of B copied aside: it runs at GEMM speed, unlike
// a triangular product. With linalg's native BLAS the GEMM skips the zero
// half of the triangle per micro-tile (GemmTriangular); with another BLAS it
// does up to twice the leaf's flops.
func (e engine) trmmLeaf(side blas.Side, tr blas.Transpose, diag blas.Diag, m, n int, alpha float64, t []float64,
	ldt int, b []float64, ldb int) {
	k := n
	if side == blas.Left {
		k = m
	}
	ws := e.ws
	trmmChunk := max(e.p.chunk, 64)
	ws.tri = grow(ws.tri, k*k)
	d := ws.tri
	for i := 0; i < k; i++ {
		row := d[i*k : i*k+k]
		copy(row[:i], t[i*ldt:i*ldt+i])
		if diag == blas.Unit {
			row[i] = 1
		} else {
			row[i] = t[i*ldt+i]
		}
		clear(row[i+1:])
	}
	if side == blas.Right {
		ws.tmp = grow(ws.tmp, min(m, trmmChunk)*n)
		for r0 := 0; r0 < m; r0 += trmmChunk {
			rows := min(trmmChunk, m-r0)
			tmp := ws.tmp[:rows*n]
			for i := 0; i < rows; i++ {
				copy(tmp[i*n:i*n+n], b[(r0+i)*ldb:(r0+i)*ldb+n])
			}
			if nat, ok := e.b.(*linalg.Native); ok {
				nat.GemmTriangular(blas.Right, blas.Lower, blas.NoTrans, rows, n, alpha, d, k, tmp, n, 0, b[r0*ldb:],
					ldb)
				continue
			}
			e.b.Dgemm(blas.NoTrans, blas.NoTrans, rows, n, n, alpha, tmp, n, d, k, 0, b[r0*ldb:], ldb)
		}
		return
	}
	ws.tmp = grow(ws.tmp, m*min(n, trmmChunk))
	for c0 := 0; c0 < n; c0 += trmmChunk {
		cols := min(trmmChunk, n-c0)
		tmp := ws.tmp[:m*cols]
		for i := 0; i < m; i++ {
			copy(tmp[i*cols:i*cols+cols], b[i*ldb+c0:i*ldb+c0+cols])
		}
		if nat, ok := e.b.(*linalg.Native); ok {
			nat.GemmTriangular(blas.Left, blas.Lower, tr, m, cols, alpha, d, k, tmp, cols, 0, b[c0:], ldb)
			continue
		}
		e.b.Dgemm(tr, blas.NoTrans, m, cols, m, alpha, d, k, tmp, cols, 0, b[c0:], ldb)
	}
}

// trtri inverts the n×n lower-triangular matrix in a in place. The diagonal
// must be nonzero (callers check).
func (e engine) trtri(diag blas.Diag, n int, a []float64, lda int) {
	if n <= e.p.trtri {
		trti2(diag == blas.Unit, n, a, lda)
		return
	}
	n1 := split(n)
	n2 := n - n1
	// [L11 0; L21 L22]⁻¹ = [L11⁻¹ 0; −L22⁻¹·L21·L11⁻¹ L22⁻¹]: invert the
	// diagonal blocks (independent: concurrently if we may), then two
	// triangular products (LAPACK's Dtrtri also multiplies by the inverted
	// blocks).
	a21 := a[n1*lda:]
	a22 := a[n1*lda+n1:]
	if e.concurrentHalves(n) {
		e.runHalves(halfTrtri, diag, n1, n2, a, a22, lda)
	} else {
		e.trtri(diag, n1, a, lda)
		e.trtri(diag, n2, a22, lda)
	}
	if e.concurrentHalves(n) {
		// The rows (then the columns) of A21 are independent: two halves,
		// each a whole recursive product on one thread.
		e.runSplit(splitRLN, diag, n2, n1, 1, a, a21, lda)
		e.runSplit(splitLLN, diag, n2, n1, -1, a22, a21, lda)
		return
	}
	e.trmmRLN(diag, n2, n1, a, lda, a21, lda)
	e.trmmLLN(diag, n2, n1, -1, a22, lda, a21, lda)
}

// lauum overwrites the n×n lower triangle L in a with the lower triangle of
// Lᵀ·L.
func (e engine) lauum(n int, a []float64, lda int) {
	if n <= e.p.lauum {
		lauu2(n, a, lda)
		return
	}
	n1 := split(n)
	n2 := n - n1
	a21 := a[n1*lda:]
	a22 := a[n1*lda+n1:]
	// Lᵀ·L = [L11ᵀL11 + L21ᵀL21, ·; L22ᵀL21, L22ᵀL22].
	if e.concurrentHalves(n) {
		// T = L21ᵀL21 aside, A21 = L22ᵀ·L21; then the two diagonal
		// products are independent: A11 = lauum(L11) + T ∥ A22 = lauum(L22).
		ws := e.ws
		ws.t = grow(ws.t, n1*n1)
		e.b.Dsyrk(blas.Lower, blas.Trans, n1, n2, 1, a21, lda, 0, ws.t, n1)
		e.runSplit(splitLLT, blas.NonUnit, n2, n1, 1, a22, a21, lda)
		e.runHalves(halfLauum, blas.NonUnit, n1, n2, a, a22, lda)
		return
	}
	e.lauum(n1, a, lda)
	e.syrkLT(n1, n2, 1, a21, lda, a, lda)
	e.trmmLLT(n2, n1, a22, lda, a21, lda)
	e.lauum(n2, a22, lda)
}

// concurrentHalvesMin is the order from which the two independent halves of
// trtri and lauum run on two goroutines.
const concurrentHalvesMin = 256

// concurrentHalves reports whether the independent diagonal halves of a
// recursive step of order n should run concurrently, each on one thread:
// with linalg's native BLAS on two or more threads (the halves then use
// the single-threaded native BLAS, so they never nest).
func (e engine) concurrentHalves(n int) bool {
	least := e.p.halvesMin
	if least == 0 {
		least = concurrentHalvesMin
	}
	if e.p.noHalves || n < least {
		return false
	}
	_, native := e.b.(*linalg.Native)
	return native && threadsOf(e.b) >= 2
}

const (
	halfTrtri = iota
	halfLauum
	splitRLN // B = B·T, rows of B split
	splitLLN // B = alpha·T·B, columns of B split
	splitLLT // B = Tᵀ·B, columns of B split
)

// halves is the shared state of runHalves.
type halves struct {
	op       int
	diag     blas.Diag
	n1, n2   int
	a11, a22 []float64
	lda      int
	t        []float64 // lauum: L21ᵀL21, added to A11
	m, n     int       // split*: B is m×n (in a22, stride lda), T in a11
	alpha    float64
	e        [2]engine
	wg       sync.WaitGroup
}

// runSplit computes a triangular product B = B·T, alpha·T·B or Tᵀ·B (op)
// with the m×n matrix B and triangle T sharing the stride ld, as two
// independent halves of B on two goroutines with the single-threaded BLAS.
func (e engine) runSplit(op int, diag blas.Diag, m, n int, alpha float64, t, b []float64, ld int) {
	ws := e.ws
	h := &ws.halves
	e.prepareHalves()
	h.op, h.diag, h.m, h.n, h.alpha, h.a11, h.a22, h.lda = op, diag, m, n, alpha, t, b, ld
	runParallel(2, h, &h.wg)
	h.a11, h.a22 = nil, nil
}

// prepareHalves gives the two halves their single-threaded engines.
func (e engine) prepareHalves() {
	ws := e.ws
	for i := range ws.par {
		if ws.par[i] == nil {
			ws.par[i] = new(workspace)
		}
		ws.halves.e[i] = engine{b: serialNative(), p: e.p, ws: ws.par[i]}
	}
}

// runHalves runs the diagonal halves of a trtri or lauum step (blocks
// a11 of order n1 and a22 of order n2) on two goroutines.
func (e engine) runHalves(op int, diag blas.Diag, n1, n2 int, a11, a22 []float64, lda int) {
	ws := e.ws
	h := &ws.halves
	e.prepareHalves()
	h.op, h.diag, h.n1, h.n2, h.a11, h.a22, h.lda, h.t = op, diag, n1, n2, a11, a22, lda, ws.t
	runParallel(2, h, &h.wg)
	h.a11, h.a22, h.t = nil, nil, nil
}

func (h *halves) part(id int) {
	e := h.e[id]
	switch h.op {
	case splitRLN:
		lo, hi := h.m*id/2, h.m*(id+1)/2
		e.trmmRLN(h.diag, hi-lo, h.n, h.a11, h.lda, h.a22[lo*h.lda:], h.lda)
		return
	case splitLLN, splitLLT:
		lo, hi := h.n*id/2, h.n*(id+1)/2
		if h.op == splitLLN {
			e.trmmLLN(h.diag, h.m, hi-lo, h.alpha, h.a11, h.lda, h.a22[lo:], h.lda)
		} else {
			e.trmmLLT(h.m, hi-lo, h.a11, h.lda, h.a22[lo:], h.lda)
		}
		return
	}
	switch {
	case h.op == halfTrtri && id == 0:
		e.trtri(h.diag, h.n1, h.a11, h.lda)
	case h.op == halfTrtri:
		e.trtri(h.diag, h.n2, h.a22, h.lda)
	case id == 0:
		e.lauum(h.n1, h.a11, h.lda)
		n1 := h.n1
		for i := 0; i < n1; i++ {
			row := h.a11[i*h.lda : i*h.lda+i+1]
			for j, v := range h.t[i*n1 : i*n1+i+1] {
				row[j] += v
			}
		}
	default:
		e.lauum(h.n2, h.a22, h.lda)
	}
}

// potri overwrites the Cholesky factor L in the lower triangle of a with the
// lower triangle of (L·Lᵀ)⁻¹ = L⁻ᵀ·L⁻¹.
func (e engine) potri(n int, a []float64, lda int) {
	e.trtri(blas.NonUnit, n, a, lda)
	e.lauum(n, a, lda)
}

// potrfRight is the right-looking blocked variant: for each panel of nb
// columns, factor the diagonal block (recursively), solve the panel below it
// with the leaf kernel, and update the whole trailing matrix with one Dsyrk
// of inner dimension nb.
func (e engine) potrfRight(n int, a []float64, lda int, nb int) (col int, pivot float64) {
	for j := 0; j < n; j += nb {
		jb := min(nb, n-j)
		if c, p := e.potrf(jb, a[j*lda+j:], lda); c >= 0 {
			return c + j, p
		}
		rest := n - j - jb
		if rest == 0 {
			break
		}
		a21 := a[(j+jb)*lda+j:]
		e.trsmRLT(rest, jb, a[j*lda+j:], lda, a21, lda)
		e.b.Dsyrk(blas.Lower, blas.NoTrans, rest, jb, -1, a21, lda, 1, a[(j+jb)*lda+j+jb:], lda)
	}
	return -1, 0
}

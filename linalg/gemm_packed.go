package linalg

import (
	"gonum.org/v1/gonum/blas"

	"github.com/pacpfl/pacpfl/asm"
)

// PackedB is a k×n right-hand operand op(B) packed once, in the
// micro-kernel's panel layout and the blocking of the Native that packed
// it, for many products A·op(B) (GemmPacked): a caller that multiplies
// many row blocks by the same B saves packing it again for each. The zero
// value is empty; PackB sizes it and reuses its memory after that.
type PackedB struct {
	k, n   int
	upper  bool
	kern   *asm.GemmKernel
	blk    Blocking
	offs   []int // start of the block (jc, pc), jc-major
	nk     int   // number of pc blocks
	raw    []float64
	data   []float64
	filled bool
}

// PackB packs op(B) (k×n; tB as in Dgemm) into dst for GemmPacked. With
// upper (k == n required) op(B) is taken as upper triangular, as in
// GemmUpperB: the entries below its diagonal are never used. It panics on
// bad arguments as Dgemm does.
func (nat *Native) PackB(dst *PackedB, tB blas.Transpose, k, n int, b []float64, ldb int, upper bool) {
	switch tB {
	default:
		panic(badTranspose)
	case blas.NoTrans, blas.Trans, blas.ConjTrans:
	}
	if k < 0 {
		panic(kLT0)
	}
	if n < 0 {
		panic(nLT0)
	}
	if upper && k != n {
		panic("linalg: PackB: an upper triangular B must be square")
	}
	bTrans := tB != blas.NoTrans
	if bTrans {
		if ldb < max(1, k) {
			panic(badLdB)
		}
		if n > 0 && k > 0 && len(b) < (n-1)*ldb+k {
			panic(shortB)
		}
	} else {
		if ldb < max(1, n) {
			panic(badLdB)
		}
		if n > 0 && k > 0 && len(b) < (k-1)*ldb+n {
			panic(shortB)
		}
	}
	kern := nat.kernel()
	blk := roundBlocking(nat.Blocking(), kern)
	nr, kc, nc := kern.NR, blk.KC, blk.NC
	dst.k, dst.n, dst.upper, dst.kern, dst.blk = k, n, upper, kern, blk
	dst.nk = ceilDiv(k, kc)
	dst.offs = dst.offs[:0]
	total := 0
	for jc := 0; jc < n; jc += nc {
		w := ceilDiv(min(nc, n-jc), nr) * nr
		for pc := 0; pc < k; pc += kc {
			dst.offs = append(dst.offs, total)
			total += w * min(kc, k-pc)
		}
	}
	if len(dst.data) < total {
		dst.raw, dst.data = alignedFloats(total)
	}
	p := gemmProblem{tB: bTrans, k: k, n: n, b: b, ldb: ldb, upperB: upper}
	i := 0
	for jc := 0; jc < n; jc += nc {
		nb := min(nc, n-jc)
		for pc := 0; pc < k; pc += kc {
			kb := min(kc, k-pc)
			packB(dst.data[dst.offs[i]:], &p, pc, kb, jc, nb, nr)
			i++
		}
	}
	dst.filled = true
}

// GemmPacked computes C = alpha·A·op(B) + beta·C for the m×k A, the op(B)
// packed in pb (k×n) and the m×n C, on one goroutine, with the blocking and
// micro-kernel pb was packed for: the result is Dgemm's (GemmUpperB's for a
// triangular pb) on one goroutine with that blocking, to the bit, above
// Dgemm's tiny sizes. It panics on bad arguments as Dgemm does, and if pb
// was never packed.
func (nat *Native) GemmPacked(m int, alpha float64, a []float64, lda int, pb *PackedB, beta float64, c []float64,
	ldc int) {
	if !pb.filled {
		panic("linalg: GemmPacked: B was not packed (PackB)")
	}
	k, n := pb.k, pb.n
	if !checkGemm(false, false, m, n, k, a, lda, nil, 0, c, ldc, false) {
		return
	}
	if alpha == 0 || k == 0 {
		scaleRect(m, n, beta, c, ldc)
		return
	}
	p := gemmProblem{
		m: m, n: n, k: k, alpha: alpha, a: a, lda: lda, beta: beta, c: c, ldc: ldc,
		tri: blas.All, upperB: pb.upper, packed: pb,
	}
	kern, blk := pb.kern, pb.blk
	ws := getWorkspace()
	ws.ensure(min(blk.MC, ceilDiv(m, kern.MR)*kern.MR)*min(blk.KC, k), 0, kern.MR*kern.NR)
	gemmRegion(ws, kern, &p, blk, region{0, m, 0, n})
	putWorkspace(ws)
}

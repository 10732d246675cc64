package asm

import "fmt"

// PackTransposed makes w source rows of kb values, row x starting at
// src[off+x·ld], the columns of one w-wide micro-panel of kb rows:
//
//	dst[l·w + x] = src[off + x·ld + l]  (x < w, l < kb)
//
// It is the packing of a GEMM operand whose panel columns are contiguous
// (op(A) untransposed into MR-wide panels, op(B) transposed into NR-wide
// ones). Values are copied bit for bit, NaN payloads included. At AVX2 and
// AVX512, even widths run the AVX code (4×4 and 2×4 register transposes)
// on the columns up to a multiple of 4 and Go on the rest; elsewhere the
// pure-Go twin.
func PackTransposed(dst, src []float64, off, ld, w, kb int) {
	checkPackT(len(dst), len(src), off, ld, w, kb)
	if w == 0 || kb == 0 {
		return
	}
	l0 := 0
	if w%2 == 0 && kb >= 4 {
		switch Current() {
		case AVX2, AVX512:
			l0 = kb &^ 3
			packTransposedAVX2(dst, src, off, ld, w, l0)
		}
	}
	if l0 < kb {
		packTransposedGo(dst, src, off, ld, w, l0, kb)
	}
}

// checkPackT panics unless every element PackTransposed reads and writes
// lies inside src and dst, without overflowing a product.
func checkPackT(ldst, lsrc, off, ld, w, kb int) {
	if off < 0 || ld < 0 || w < 0 || kb < 0 {
		panic(fmt.Sprintf("asm.PackTransposed: negative argument (off=%d ld=%d w=%d kb=%d)", off, ld, w, kb))
	}
	if w == 0 || kb == 0 {
		return
	}
	if kb > ldst/w {
		panic(fmt.Sprintf("asm.PackTransposed: len(dst)=%d < kb·w = %d·%d", ldst, kb, w))
	}
	if off > lsrc || kb > lsrc-off || (w > 1 && ld > (lsrc-off-kb)/(w-1)) {
		panic(fmt.Sprintf("asm.PackTransposed: len(src)=%d < off + (w−1)·ld + kb = %d + %d·%d + %d",
			lsrc, off, w-1, ld, kb))
	}
}

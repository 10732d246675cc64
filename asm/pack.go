package asm

import "fmt"

// PackPanels copies kb rows of np·w consecutive values, row l starting at
// src[off+l·ld], into np micro-panels of kb rows by w columns:
//
//	dst[q·kb·w + l·w + x] = src[off + l·ld + q·w + x]  (q < np, l < kb, x < w)
//
// It is the packing of a GEMM operand whose panel rows are contiguous in
// memory (op(B) untransposed into NR-wide panels, op(A) transposed into
// MR-wide ones). Values are copied bit for bit, NaN payloads included.
//
// It walks src row by row, so the reads stream along each row: a
// panel-by-panel walk reads kb lines ld apart per panel, which thrashes one
// L1 set (and defeats the prefetcher) when ld·8 is a multiple of 2 KiB
// (measured: copying a 2000×256 B took 28% of a 128×256×2000 GEMM).
// At AVX2 and AVX512 it runs the AVX code (256-bit moves); elsewhere the
// pure-Go twin.
func PackPanels(dst, src []float64, off, ld, np, kb, w int) {
	checkPack(len(dst), len(src), off, ld, np, kb, w)
	if np == 0 || kb == 0 || w == 0 {
		return
	}
	switch Current() {
	case AVX2, AVX512:
		packPanelsAVX2(dst, src, off, ld, np, kb, w)
	default:
		PackPanelsGeneric(dst, src, off, ld, np, kb, w)
	}
}

// checkPack panics unless every element PackPanels reads and writes lies
// inside src and dst. Products are bounded by divisions first, so no
// argument can overflow them.
func checkPack(ldst, lsrc, off, ld, np, kb, w int) {
	if off < 0 || ld < 0 || np < 0 || kb < 0 || w < 0 {
		panic(fmt.Sprintf("asm.PackPanels: negative argument (off=%d ld=%d np=%d kb=%d w=%d)", off, ld, np, kb, w))
	}
	if np == 0 || kb == 0 || w == 0 {
		return
	}
	if np > ldst/w || np*w > ldst/kb {
		panic(fmt.Sprintf("asm.PackPanels: len(dst)=%d < np·kb·w = %d·%d·%d", ldst, np, kb, w))
	}
	rowLen := np * w // ≤ len(dst), no overflow
	if off > lsrc || rowLen > lsrc-off || (kb > 1 && ld > (lsrc-off-rowLen)/(kb-1)) {
		panic(fmt.Sprintf("asm.PackPanels: len(src)=%d < off + (kb−1)·ld + np·w = %d + %d·%d + %d·%d",
			lsrc, off, kb-1, ld, np, w))
	}
}

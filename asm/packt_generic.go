package asm

// PackTransposedGeneric is the pure-Go twin of PackTransposed.
func PackTransposedGeneric(dst, src []float64, off, ld, w, kb int) {
	checkPackT(len(dst), len(src), off, ld, w, kb)
	if w == 0 || kb == 0 {
		return
	}
	packTransposedGo(dst, src, off, ld, w, 0, kb)
}

// packTransposedGo packs columns l0 ≤ l < kb of the w source rows. The
// micro-kernel widths read all rows in step and write each panel row at
// once, each case written out: one loop over an array of row slices with
// the width switched inside measured 1.6× slower (9.1 against 14.5 GB/s,
// BenchmarkPackTransposed with -tags purego), and this is the packing of
// every build without the AVX code (arm64 included).
func packTransposedGo(dst, src []float64, off, ld, w, l0, kb int) {
	switch w {
	case 6:
		r0 := src[off : off+kb]
		r1 := src[off+ld : off+ld+kb]
		r2 := src[off+2*ld : off+2*ld+kb]
		r3 := src[off+3*ld : off+3*ld+kb]
		r4 := src[off+4*ld : off+4*ld+kb]
		r5 := src[off+5*ld : off+5*ld+kb]
		for l := l0; l < kb; l++ {
			d := dst[l*6 : l*6+6 : l*6+6]
			d[0], d[1], d[2], d[3], d[4], d[5] = r0[l], r1[l], r2[l], r3[l], r4[l], r5[l]
		}
	case 8:
		r0 := src[off : off+kb]
		r1 := src[off+ld : off+ld+kb]
		r2 := src[off+2*ld : off+2*ld+kb]
		r3 := src[off+3*ld : off+3*ld+kb]
		r4 := src[off+4*ld : off+4*ld+kb]
		r5 := src[off+5*ld : off+5*ld+kb]
		r6 := src[off+6*ld : off+6*ld+kb]
		r7 := src[off+7*ld : off+7*ld+kb]
		for l := l0; l < kb; l++ {
			d := dst[l*8 : l*8+8 : l*8+8]
			d[0], d[1], d[2], d[3] = r0[l], r1[l], r2[l], r3[l]
			d[4], d[5], d[6], d[7] = r4[l], r5[l], r6[l], r7[l]
		}
	case 4:
		r0 := src[off : off+kb]
		r1 := src[off+ld : off+ld+kb]
		r2 := src[off+2*ld : off+2*ld+kb]
		r3 := src[off+3*ld : off+3*ld+kb]
		for l := l0; l < kb; l++ {
			d := dst[l*4 : l*4+4 : l*4+4]
			d[0], d[1], d[2], d[3] = r0[l], r1[l], r2[l], r3[l]
		}
	default:
		for x := 0; x < w; x++ {
			for l, v := range src[off+x*ld+l0 : off+x*ld+kb] {
				dst[(l0+l)*w+x] = v
			}
		}
	}
}

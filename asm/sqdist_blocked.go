package asm

import "math"

// sqdistPack is the size in float64s of the stack buffer that holds a block
// of b transposed (feature-major), 16 KiB: it stays in L1 while every row of
// a streams past it, and a SIMD kernel reads each feature of 4 (or 2)
// consecutive b rows as one vector.
const sqdistPack = 2048

// sqdistBlocked computes scale*||a_i - b_j||^2 into dst, then, if withExp,
// exp of it in place while the row block is still in L1 (the SE kernel
// uses scale = -0.5, an exact multiplication). l is a SIMD level; the
// kernels are called directly (not through function values) so that the
// pack buffer stays on the stack. d must be >= 1; the arguments must have
// passed checkSqDist.
func sqdistBlocked(l Level, dst []float64, ldd int, a []float64, lda int, b []float64, ldb int, m, n, d int,
	scale float64, withExp bool) {
	var pack [sqdistPack]float64
	jb := max(sqdistPack/d, 1)
	if d > sqdistPack {
		// Wider than the buffer (not a case the project needs): generic.
		sqdistRows(dst, ldd, a, lda, b, ldb, m, n, d, scale, withExp)
		return
	}
	for j0 := 0; j0 < n; j0 += jb {
		w := min(jb, n-j0)
		bT := pack[:d*w]
		for j := 0; j < w; j++ {
			bj := b[(j0+j)*ldb : (j0+j)*ldb+d]
			for k, v := range bj {
				bT[k*w+j] = v
			}
		}
		for i := 0; i < m; i++ {
			out := dst[i*ldd+j0 : i*ldd+j0+w]
			ai := a[i*lda : i*lda+d]
			switch l {
			case AVX512:
				sqdistRowAVX512(out, ai, bT, scale)
				if withExp {
					expBlocks(out, out, 8, expAVX512) // the kernel does every element
				}
			case AVX2:
				sqdistRowAVX2(out, ai, bT, scale)
				if withExp {
					expBlocks(out, out, 4, expAVX2)
				}
			case NEON:
				sqdistRowNEON(out, ai, bT, scale)
				if withExp {
					expBlocks(out, out, 2, expNEON)
				}
			}
		}
	}
}

// sqdistRows is the generic computation with a scale, for d beyond the
// pack buffer.
func sqdistRows(dst []float64, ldd int, a []float64, lda int, b []float64, ldb int, m, n, d int, scale float64,
	withExp bool) {
	for i := 0; i < m; i++ {
		ai := a[i*lda : i*lda+d]
		row := dst[i*ldd : i*ldd+n]
		for j := range row {
			v := scale * sqDist(ai, b[j*ldb:j*ldb+d])
			if withExp {
				v = expScalar(v)
			}
			row[j] = v
		}
	}
}

// sqdistRowGo is what the SIMD row kernels compute, in Go; it stands in for
// a kernel on architectures that lack it (never reached: see stubs_*.go).
func sqdistRowGo(dst, a, bT []float64, scale float64) {
	w := len(dst)
	for j := range dst {
		var s float64
		for k, v := range a {
			diff := v - bT[k*w+j]
			s = math.FMA(diff, diff, s)
		}
		dst[j] = scale * s
	}
}

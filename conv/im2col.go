package conv

// geom is the geometry of one convolution (or pooling) window sweep.
type geom struct {
	C, H, W     int // input channels and size
	KH, KW      int
	Stride, Pad int
	OH, OW      int
	owLo, owHi  []int // per kernel column kj: output columns whose input column is inside the image
	ohLo, ohHi  []int // per kernel row ki: likewise for rows
}

func newGeom(c, h, w, kh, kw, stride, pad int) geom {
	g := geom{C: c, H: h, W: w, KH: kh, KW: kw, Stride: stride, Pad: pad,
		OH: (h+2*pad-kh)/stride + 1, OW: (w+2*pad-kw)/stride + 1}
	g.owLo, g.owHi = validRange(kw, w, g.OW, stride, pad)
	g.ohLo, g.ohHi = validRange(kh, h, g.OH, stride, pad)
	return g
}

// validRange returns, for each kernel offset k, the output positions o with
// 0 ≤ o·stride + k − pad < size.
func validRange(ksize, size, osize, stride, pad int) (lo, hi []int) {
	lo, hi = make([]int, ksize), make([]int, ksize)
	for k := 0; k < ksize; k++ {
		l := 0
		if pad > k {
			l = (pad - k + stride - 1) / stride
		}
		h := 0
		if size+pad-k > 0 {
			h = (size+pad-k-1)/stride + 1
		}
		l, h = min(l, osize), min(h, osize)
		if h < l {
			h = l
		}
		lo[k], hi[k] = l, h
	}
	return lo, hi
}

// im2col writes the patches of one image x (C×H×W) as the columns of col
// ((C·KH·KW) × (OH·OW), row-major with row stride ld ≥ OH·OW): row
// (c, ki, kj), column (oh, ow) holds x[c, oh·stride+ki−pad, ow·stride+kj−pad],
// zero outside the image. A stride above OH·OW lets several images share
// one column matrix, side by side.
func (g *geom) im2col(x, col []float64, ld int) {
	P := g.OH * g.OW
	r := 0
	for c := 0; c < g.C; c++ {
		xc := x[c*g.H*g.W : (c+1)*g.H*g.W]
		for ki := 0; ki < g.KH; ki++ {
			ohLo, ohHi := g.ohLo[ki], g.ohHi[ki]
			for kj := 0; kj < g.KW; kj++ {
				row := col[r*ld : r*ld+P]
				r++
				owLo, owHi := g.owLo[kj], g.owHi[kj]
				// (Guarded clears: an empty clear still costs a
				// call, and rows here are as short as 8.)
				if ohLo > 0 {
					clear(row[:ohLo*g.OW])
				}
				if ohHi < g.OH {
					clear(row[ohHi*g.OW:])
				}
				for oh := ohLo; oh < ohHi; oh++ {
					dst := row[oh*g.OW : (oh+1)*g.OW]
					ih := oh*g.Stride + ki - g.Pad
					src := xc[ih*g.W : (ih+1)*g.W]
					if owLo > 0 {
						clear(dst[:owLo])
					}
					if owHi < g.OW {
						clear(dst[owHi:])
					}
					iw0 := owLo*g.Stride + kj - g.Pad
					if g.Stride == 1 {
						// Rows are short (8 in the paper's
						// conv2): a loop beats memmove's call.
						d := dst[owLo:owHi]
						s := src[iw0 : iw0+len(d)]
						for i := range d {
							d[i] = s[i]
						}
						continue
					}
					for ow, iw := owLo, iw0; ow < owHi; ow, iw = ow+1, iw+g.Stride {
						dst[ow] = src[iw]
					}
				}
			}
		}
	}
}

// col2im adds the columns of col (row stride ld) back onto the image x (the
// adjoint of im2col); x must be zeroed by the caller if it is to hold just
// the sum.
func (g *geom) col2im(col, x []float64, ld int) {
	P := g.OH * g.OW
	r := 0
	for c := 0; c < g.C; c++ {
		xc := x[c*g.H*g.W : (c+1)*g.H*g.W]
		for ki := 0; ki < g.KH; ki++ {
			ohLo, ohHi := g.ohLo[ki], g.ohHi[ki]
			for kj := 0; kj < g.KW; kj++ {
				row := col[r*ld : r*ld+P]
				r++
				owLo, owHi := g.owLo[kj], g.owHi[kj]
				if owHi <= owLo {
					continue
				}
				for oh := ohLo; oh < ohHi; oh++ {
					ih := oh*g.Stride + ki - g.Pad
					iw0 := owLo*g.Stride + kj - g.Pad
					if g.Stride == 1 {
						src := row[oh*g.OW+owLo : oh*g.OW+owHi]
						dst := xc[ih*g.W+iw0 : ih*g.W+iw0+len(src)]
						for i, v := range src {
							dst[i] += v
						}
						continue
					}
					dst := xc[ih*g.W : (ih+1)*g.W]
					for ow, iw := owLo, iw0; ow < owHi; ow, iw = ow+1, iw+g.Stride {
						dst[iw] += row[oh*g.OW+ow]
					}
				}
			}
		}
	}
}

package asm

// PackPanelsGeneric is the pure-Go twin of PackPanels.
func PackPanelsGeneric(dst, src []float64, off, ld, np, kb, w int) {
	checkPack(len(dst), len(src), off, ld, np, kb, w)
	if np == 0 || kb == 0 || w == 0 {
		return
	}
	stride := kb * w
	for l := 0; l < kb; l++ {
		row := src[off+l*ld : off+l*ld+np*w]
		d := dst[l*w:]
		switch w {
		case 8:
			for q := 0; q < np; q++ {
				s := row[q*8 : q*8+8 : q*8+8]
				t := d[q*stride : q*stride+8 : q*stride+8]
				t[0], t[1], t[2], t[3] = s[0], s[1], s[2], s[3]
				t[4], t[5], t[6], t[7] = s[4], s[5], s[6], s[7]
			}
		case 6:
			for q := 0; q < np; q++ {
				s := row[q*6 : q*6+6 : q*6+6]
				t := d[q*stride : q*stride+6 : q*stride+6]
				t[0], t[1], t[2], t[3], t[4], t[5] = s[0], s[1], s[2], s[3], s[4], s[5]
			}
		default:
			for q := 0; q < np; q++ {
				copy(d[q*stride:q*stride+w], row[q*w:q*w+w])
			}
		}
	}
}

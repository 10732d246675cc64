package linalg

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestPackPanels checks packA and packB against their definitions (the
// micro-panel layouts in asm/gemm_generic.go) for both transpositions, every
// kernel width, full and partial edge panels, and leading dimensions that are
// multiples of 2 KiB (the row-by-row copy exists for those).
func TestPackPanels(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	const garbage = -777.0
	for _, w := range []int{4, 6, 8, 12} {
		for _, trans := range []bool{false, true} {
			for _, ld := range []int{40, 47, 256, 257} {
				for _, cnt := range []int{0, 1, w - 1, w, w + 1, 3*w - 2, 3 * w} {
					for _, kb := range []int{1, 5, 17} {
						// Rows [off0, off0+cnt) of op(X) and columns [pc, pc+kb).
						const off0, pc = 3, 2
						if !trans && (pc+kb > ld) || trans && off0+cnt > ld {
							continue
						}
						rows, cols := off0+cnt, pc+kb // op(X) is rows×cols
						var x []float64
						at := func(i, l int) float64 { // op(X)[i][l]
							if trans {
								return x[l*ld+i]
							}
							return x[i*ld+l]
						}
						if trans {
							x = make([]float64, (cols-1)*ld+rows)
						} else {
							x = make([]float64, (rows-1)*ld+cols)
						}
						for i := range x {
							x[i] = rnd.Float64()
						}
						np := ceilDiv(cnt, w)
						dst := make([]float64, np*kb*w+5)
						for i := range dst {
							dst[i] = garbage
						}
						name := fmt.Sprintf("w=%d trans=%v ld=%d cnt=%d kb=%d", w, trans, ld, cnt, kb)
						// packA packs rows of op(A); packB packs rows of op(B)ᵀ, so
						// op(B) = op(X)ᵀ: B transposed is X untransposed.
						pa := &gemmProblem{tA: trans, a: x, lda: ld}
						packA(dst, pa, off0, cnt, pc, kb, w)
						checkPacked(t, "packA "+name, dst, at, off0, cnt, pc, kb, w, garbage)
						for i := range dst {
							dst[i] = garbage
						}
						pb := &gemmProblem{tB: !trans, b: x, ldb: ld}
						packB(dst, pb, pc, kb, off0, cnt, w)
						checkPacked(t, "packB "+name, dst, at, off0, cnt, pc, kb, w, garbage)
					}
				}
			}
		}
	}
}

func checkPacked(t *testing.T, name string, dst []float64, at func(i, l int) float64, off0, cnt, pc, kb, w int,
	garbage float64) {
	t.Helper()
	np := ceilDiv(cnt, w)
	for q := 0; q < np; q++ {
		for l := 0; l < kb; l++ {
			for r := 0; r < w; r++ {
				want := 0.0
				if i := q*w + r; i < cnt {
					want = at(off0+i, pc+l)
				}
				if got := dst[q*kb*w+l*w+r]; got != want {
					t.Fatalf("%s: panel %d [l=%d][%d] = %v, want %v", name, q, l, r, got, want)
				}
			}
		}
	}
	for i := np * kb * w; i < len(dst); i++ {
		if dst[i] != garbage {
			t.Fatalf("%s: wrote past the panels at %d", name, i)
		}
	}
}

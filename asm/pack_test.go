package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestPackPanels compares PackPanels at every level with its pure-Go twin
// and with the definition, bit for bit, on odd and even widths, zero sizes,
// offsets, strides wider and narrower than a row, and NaN payloads; guard
// values around dst must survive.
func TestPackPanels(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(61, 62))
		for w := 0; w <= 17; w++ {
			for _, np := range []int{0, 1, 2, 3, 5} {
				for _, kb := range []int{0, 1, 2, 7} {
					for _, extra := range []int{0, 1, 5, -1} { // ld − np·w; −1: rows overlap
						off := rng.IntN(3)
						ld := max(0, np*w+extra)
						n := off + max(0, kb-1)*ld + np*w + rng.IntN(2)
						src := make([]float64, n)
						for i := range src {
							src[i] = rng.NormFloat64()
						}
						if n > 2 {
							src[rng.IntN(n)] = math.Float64frombits(0x7ff4_0000_0000_1234) // signalling NaN
							src[rng.IntN(n)] = math.Inf(-1)
						}
						const guard = 3
						size := np * kb * w
						got := make([]float64, size+2*guard)
						want := make([]float64, size+2*guard)
						for i := range got {
							got[i], want[i] = guardFinite, guardFinite
						}
						PackPanels(got[guard:guard+size], src, off, ld, np, kb, w)
						PackPanelsGeneric(want[guard:guard+size], src, off, ld, np, kb, w)
						name := fmt.Sprintf("w=%d np=%d kb=%d off=%d ld=%d", w, np, kb, off, ld)
						for i := range got {
							if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
								t.Fatalf("%s: dst[%d] = %v, generic %v", name, i-guard, got[i], want[i])
							}
						}
						for q := 0; q < np; q++ {
							for l := 0; l < kb; l++ {
								for x := 0; x < w; x++ {
									d := got[guard+q*kb*w+l*w+x]
									s := src[off+l*ld+q*w+x]
									if math.Float64bits(d) != math.Float64bits(s) {
										t.Fatalf("%s: panel %d row %d col %d = %v, want src %v", name, q, l, x, d, s)
									}
								}
							}
						}
					}
				}
			}
		}
	})
}

// TestPackPanelsBounds: arguments that would reach outside a slice panic
// with a message naming the problem, at every level, before any access.
func TestPackPanelsBounds(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		for _, c := range []struct {
			name               string
			ldst, lsrc         int
			off, ld, np, kb, w int
			want               string
		}{
			{"dst short", 47, 100, 0, 8, 1, 6, 8, "len(dst)"},
			{"src short", 48, 47, 0, 8, 1, 6, 8, "len(src)"},
			{"src short by the offset", 48, 48, 1, 8, 1, 6, 8, "len(src)"},
			{"wide stride", 48, 100, 0, 20, 1, 6, 8, "len(src)"},
			{"negative w", 48, 100, 0, 8, 1, 6, -8, "negative"},
			{"negative off", 48, 100, -1, 8, 1, 6, 8, "negative"},
			{"overflowing np", 48, 100, 0, 8, math.MaxInt / 4, 6, 8, "len(dst)"},
			{"overflowing ld", 48, 100, 0, math.MaxInt / 2, 1, 6, 8, "len(src)"},
		} {
			func() {
				defer func() {
					r := recover()
					if r == nil || !strings.Contains(fmt.Sprint(r), c.want) {
						t.Errorf("%s: recover() = %v, want a panic naming %q", c.name, r, c.want)
					}
				}()
				PackPanels(make([]float64, c.ldst), make([]float64, c.lsrc), c.off, c.ld, c.np, c.kb, c.w)
			}()
		}
		// Exactly in bounds: no panic.
		PackPanels(make([]float64, 48), make([]float64, 48), 0, 8, 1, 6, 8)
		PackPanels(nil, nil, 0, 0, 0, 5, 8)
	})
}

func TestPackPanelsNoAllocs(t *testing.T) {
	dst, src := make([]float64, 8*64*3), make([]float64, 64*24)
	if a := testing.AllocsPerRun(20, func() { PackPanels(dst, src, 0, 24, 3, 64, 8) }); a != 0 {
		t.Fatalf("PackPanels allocates %v times per call", a)
	}
}

func BenchmarkPackPanels(b *testing.B) {
	// A KC×NC block of a row-major B with a leading dimension of 2000,
	// into NR = 8 panels, as the GEMM packs it.
	const kb, nb, ld = 256, 1024, 2000
	src := make([]float64, kb*ld)
	dst := make([]float64, kb*nb)
	benchTwins(b, 8*kb*nb, func() { PackPanels(dst, src, 0, ld, nb/8, kb, 8) },
		func() { PackPanelsGeneric(dst, src, 0, ld, nb/8, kb, 8) })
}

// benchTwins times a kernel at the current level and its pure-Go twin as
// two sub-benchmarks moving bytes each.
func benchTwins(b *testing.B, bytes int64, simd, generic func()) {
	for _, c := range []struct {
		name string
		run  func()
	}{{"asm", simd}, {"generic", generic}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(bytes)
			for i := 0; i < b.N; i++ {
				c.run()
			}
		})
	}
}

// TestPackTransposed compares PackTransposed at every level with its
// pure-Go twin and with the definition, bit for bit, on even and odd
// widths, column counts on and off multiples of 4, offsets, strides and
// NaN payloads; guard values around dst must survive.
func TestPackTransposed(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(63, 64))
		for w := 0; w <= 17; w++ {
			for _, kb := range []int{0, 1, 3, 4, 5, 8, 11, 64} {
				for _, extra := range []int{0, 1, 7} { // ld − kb
					off := rng.IntN(3)
					ld := kb + extra
					n := off + max(0, w-1)*ld + kb + rng.IntN(2)
					src := make([]float64, n)
					for i := range src {
						src[i] = rng.NormFloat64()
					}
					if n > 2 {
						src[rng.IntN(n)] = math.Float64frombits(0x7ff4_0000_0000_1234)
						src[rng.IntN(n)] = math.Inf(1)
					}
					const guard = 3
					size := kb * w
					got := make([]float64, size+2*guard)
					want := make([]float64, size+2*guard)
					for i := range got {
						got[i], want[i] = guardFinite, guardFinite
					}
					PackTransposed(got[guard:guard+size], src, off, ld, w, kb)
					PackTransposedGeneric(want[guard:guard+size], src, off, ld, w, kb)
					name := fmt.Sprintf("w=%d kb=%d off=%d ld=%d", w, kb, off, ld)
					for i := range got {
						if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
							t.Fatalf("%s: dst[%d] = %v, generic %v", name, i-guard, got[i], want[i])
						}
					}
					for l := 0; l < kb; l++ {
						for x := 0; x < w; x++ {
							d, s := got[guard+l*w+x], src[off+x*ld+l]
							if math.Float64bits(d) != math.Float64bits(s) {
								t.Fatalf("%s: panel row %d col %d = %v, want src %v", name, l, x, d, s)
							}
						}
					}
				}
			}
		}
	})
}

func TestPackTransposedBounds(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		for _, c := range []struct {
			name           string
			ldst, lsrc     int
			off, ld, w, kb int
			want           string
		}{
			{"dst short", 47, 100, 0, 8, 6, 8, "len(dst)"},
			{"src short", 48, 47, 0, 8, 6, 8, "len(src)"},
			{"src short by the offset", 48, 48, 1, 8, 6, 8, "len(src)"},
			{"negative ld", 48, 100, 0, -8, 6, 8, "negative"},
			{"overflowing kb", 48, 100, 0, 8, 6, math.MaxInt / 2, "len(dst)"},
			{"overflowing ld", 48, 100, 0, math.MaxInt / 2, 6, 8, "len(src)"},
		} {
			func() {
				defer func() {
					r := recover()
					if r == nil || !strings.Contains(fmt.Sprint(r), c.want) {
						t.Errorf("%s: recover() = %v, want a panic naming %q", c.name, r, c.want)
					}
				}()
				PackTransposed(make([]float64, c.ldst), make([]float64, c.lsrc), c.off, c.ld, c.w, c.kb)
			}()
		}
		PackTransposed(make([]float64, 48), make([]float64, 48), 0, 8, 6, 8)
		PackTransposed(nil, nil, 0, 0, 6, 0)
	})
}

func TestPackTransposedNoAllocs(t *testing.T) {
	dst, src := make([]float64, 6*256), make([]float64, 6*2000)
	if a := testing.AllocsPerRun(20, func() { PackTransposed(dst, src, 0, 2000, 6, 256) }); a != 0 {
		t.Fatalf("PackTransposed allocates %v times per call", a)
	}
}

func BenchmarkPackTransposed(b *testing.B) {
	// An MC×KC block of a row-major A with a leading dimension of 2000 into
	// MR = 6 panels, as the GEMM packs it.
	const mb, kb, ld = 126, 256, 2000
	src := make([]float64, mb*ld)
	dst := make([]float64, mb*kb)
	benchTwins(b, 8*mb*kb, func() {
		for r := 0; r < mb; r += 6 {
			PackTransposed(dst[r*kb:], src, r*ld, ld, 6, kb)
		}
	}, func() {
		for r := 0; r < mb; r += 6 {
			PackTransposedGeneric(dst[r*kb:], src, r*ld, ld, 6, kb)
		}
	})
}

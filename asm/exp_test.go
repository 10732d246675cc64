package asm

import (
	"math"
	"math/big"
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestExpTable checks every table entry is 2^(j/64) correctly rounded:
// (T - ulp/2)^64 < 2^j < (T + ulp/2)^64, in exact big-float arithmetic.
func TestExpTable(t *testing.T) {
	pow64 := func(v *big.Float) *big.Float {
		r := new(big.Float).SetPrec(4096).Set(v)
		for i := 0; i < 6; i++ { // v^(2^6), exact at this precision
			r.Mul(r, r)
		}
		return r
	}
	for j, b := range exp2Table {
		y := math.Float64frombits(b)
		half := (math.Nextafter(y, 2) - y) / 2
		lo := new(big.Float).SetPrec(4096).SetFloat64(y)
		lo.Sub(lo, big.NewFloat(half))
		hi := new(big.Float).SetPrec(4096).SetFloat64(y)
		hi.Add(hi, big.NewFloat(half))
		two := new(big.Float).SetPrec(4096).SetMantExp(big.NewFloat(1), j)
		if pow64(lo).Cmp(two) >= 0 || pow64(hi).Cmp(two) <= 0 {
			t.Errorf("exp2Table[%d] = %v is not 2^(%d/64) correctly rounded", j, y, j)
		}
		if expTab[j]+uint64(j)<<46 != b {
			t.Errorf("expTab[%d] inconsistent", j)
		}
	}
}

// expEdges are the inputs at the edges of every region Exp distinguishes:
// NaNs (two payloads, one signalling), infinities, zeros, subnormals, the
// fast-path bound ±expFastMax and its neighbours, the overflow and
// underflow thresholds and their neighbours, and huge values.
var expEdges = []float64{
	math.NaN(), math.Float64frombits(0x7ff0_0000_0000_0bad), math.Float64frombits(0xfff8_0000_0000_0123),
	math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 0x1p-1074, -0x1p-1074, 0x1p-1022, -0x1p-1030,
	expFastMax, -expFastMax, math.Nextafter(expFastMax, 709), math.Nextafter(-expFastMax, -709),
	math.Nextafter(expFastMax, 0), math.Nextafter(-expFastMax, 0),
	expOverflow, math.Nextafter(expOverflow, 0), math.Nextafter(expOverflow, 710), 709.78, 709.79,
	expUnderflow, math.Nextafter(expUnderflow, 0), math.Nextafter(expUnderflow, -746), -745.13, -745.14,
	-744.44, -744.45, -740, -720, -708.4, 708.4, 709, 1e300, -1e300, math.MaxFloat64, -math.MaxFloat64,
}

// expInputs returns n values spread over every region Exp distinguishes.
func expInputs(rng *rand.Rand, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		switch rng.IntN(8) {
		case 0:
			x[i] = -745.2 + 45*rng.Float64() // subnormal/underflow end
		case 1:
			x[i] = 700 + 10*rng.Float64() // overflow end
		case 2:
			x[i] = (2*rng.Float64() - 1) * 1e-3
		case 3:
			x[i] = expEdges[rng.IntN(len(expEdges))]
		default:
			x[i] = -750 + 1460*rng.Float64()
		}
	}
	return x
}

// TestExpMatchesGeneric: every level gives the generic twin's results bit
// for bit (same operations in the same order), on every length and
// alignment, with NaN/Inf/huge inputs in any lane, without writing outside
// dst, and with dst aliasing x.
func TestExpMatchesGeneric(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(17, 18))
		for _, n := range testLengths() {
			for off := 0; off < 4; off++ {
				src := newStrided(rng, n, 1, off)
				copy(src.view, expInputs(rng, n))
				dst := newStrided(rng, n, 1, 3-off).withGuard(guardFinite)
				want := make([]float64, n)
				ExpGeneric(want, src.view)
				Exp(dst.view, src.view)
				dst.checkGuards(t, "Exp dst")
				src.checkGuards(t, "Exp x")
				for i := range n {
					if math.Float64bits(dst.view[i]) != math.Float64bits(want[i]) &&
						!(math.IsNaN(want[i]) && math.IsNaN(dst.view[i])) {
						t.Fatalf("n=%d off=%d: Exp(%v) = %v, generic %v", n, off, src.view[i], dst.view[i], want[i])
					}
				}
				Exp(src.view, src.view) // in place
				for i := range n {
					if !sameFloat(src.view[i], want[i]) {
						t.Fatalf("n=%d in place: element %d = %v, want %v", n, i, src.view[i], want[i])
					}
				}
			}
		}
	})
}

const smallestNormal = 0x1p-1022

// refExp is math.Exp, except near the ends of the range where math.Exp
// itself is unreliable (on amd64 Go's assembly math.Exp returns +Inf for
// x > ~709.43; on arm64 the pure-Go one returns 0 for exp(-745.1)): there it
// is math.Exp of the reduced argument r = x - k*ln2 (|r| <= ln2/2, reduced
// with a double-length ln2 by FMA), scaled by 2^k with math.Ldexp.
func refExp(x float64) float64 {
	if x > -708 && x < 709 {
		return math.Exp(x)
	}
	k := math.Round(x / math.Ln2)
	r := math.FMA(-k, 0.6931471805599453, x)
	r = math.FMA(-k, 2.3190468138462996e-17, r)
	return math.Ldexp(math.Exp(r), int(k))
}

// TestExpAccuracy measures the error against math.Exp (refExp) over
// [-745, 709] on millions of points, dense near both ends: relative where
// the result is normal, absolute (in subnormal ulps, 2^-1074) below.
func TestExpAccuracy(t *testing.T) {
	n := 1 << 22
	if modestSizes() {
		n = 1 << 17
	}
	rng := rand.New(rand.NewPCG(19, 20))
	x := make([]float64, n)
	for i := range x {
		switch i % 4 {
		case 0:
			x[i] = -745 + 1454*rng.Float64()
		case 1:
			x[i] = -745.14 + 40*rng.Float64()
		case 2:
			x[i] = 670 + 39.79*rng.Float64()
		default:
			x[i] = (2*rng.Float64() - 1) * math.Ldexp(1, -rng.IntN(40)) // near 0
		}
	}
	want := make([]float64, n)
	for i, v := range x {
		want[i] = refExp(v)
	}
	got := make([]float64, n)
	forEachLevel(t, func(t *testing.T) {
		Exp(got, x)
		var maxRel, maxSub float64
		var argRel float64
		for i := range x {
			g, w := got[i], want[i]
			if g == w {
				continue
			}
			if math.IsInf(w, 1) || w == 0 || math.Abs(w) < smallestNormal {
				if d := math.Abs(g-w) / 0x1p-1074; d > maxSub || math.IsNaN(d) {
					maxSub = d
				}
				if math.IsInf(w, 1) != math.IsInf(g, 1) {
					t.Fatalf("Exp(%v) = %v, reference %v", x[i], g, w)
				}
				continue
			}
			if e := math.Abs(g-w) / w; e > maxRel || math.IsNaN(e) {
				maxRel, argRel = e, x[i]
			}
		}
		t.Logf("Exp max relative error vs math.Exp over %d points in [-745.14, 709.79]: %.3g (%.2f ulp of 1, at "+
			"x=%v); subnormal results within %.0f subnormal ulp",
			n, maxRel, maxRel/0x1p-52, argRel, maxSub)
		if !(maxRel <= 1e-15) {
			t.Errorf("max relative error %g > 1e-15 (at x=%v)", maxRel, argRel)
		}
		if !(maxSub <= 3) {
			t.Errorf("subnormal results off by %v subnormal ulps", maxSub)
		}
	})
}

func TestExpSpecialValues(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		cases := []struct{ x, want float64 }{
			{math.Inf(-1), 0},
			{math.Inf(1), math.Inf(1)},
			{0, 1},
			{math.Copysign(0, -1), 1},
			{1, math.E},
			{709.79, math.Inf(1)},
			{1e308, math.Inf(1)},
			{-745.14, 0},
			{-1e308, 0},
			{-745.13, 0x1p-1074},
			{-740, refExp(-740)},
			{709.78, refExp(709.78)},
		}
		for _, c := range cases {
			// Place the value in every lane of a block and in the tail.
			for n := 1; n <= 9; n++ {
				for p := 0; p < n; p++ {
					x := make([]float64, n)
					x[p] = c.x
					dst := make([]float64, n)
					Exp(dst, x)
					if dst[p] != c.want && math.Abs(dst[p]-c.want) > 2e-16*c.want {
						t.Fatalf("Exp(%v) = %v, want %v (n=%d, lane %d)", c.x, dst[p], c.want, n, p)
					}
					for i := range dst {
						if i != p && dst[i] != 1 {
							t.Fatalf("Exp(0) next to %v = %v", c.x, dst[i])
						}
					}
				}
			}
		}
		nan := []float64{math.NaN(), 1, 2, 3, 4}
		dst := make([]float64, 5)
		Exp(dst, nan)
		if !math.IsNaN(dst[0]) || math.Abs(dst[1]-math.E) > 1e-15 {
			t.Fatalf("Exp(NaN, 1, ...) = %v", dst)
		}
	})
}

func TestExpPanicsOnShortDst(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Exp with short dst did not panic")
		}
	}()
	Exp(make([]float64, 2), make([]float64, 3))
}

// TestExpKernelsDoTheWork guards against a SIMD kernel that silently leaves
// work to the Go fallback (the results would still be right). A blocked
// kernel (AVX2, NEON) must process every whole block of ordinary inputs and
// stop at the block holding a NaN. A complete one (AVX-512: masked tail,
// special values in the kernel) must return len(x) and, called directly
// without expBlocks, write the generic twin's results bit for bit (NaN
// payloads included) for every length 0..70, with specials in any lane.
func TestExpKernelsDoTheWork(t *testing.T) {
	kernels := map[Level]struct {
		f        func(dst, x []float64) int
		block    int
		complete bool
	}{AVX2: {expAVX2, 4, false}, AVX512: {expAVX512, 8, true}, NEON: {expNEON, 2, false}}
	ran := false
	for _, l := range ArchLevels() {
		k, ok := kernels[l]
		if !ok {
			continue
		}
		if why := Unsupported(l); why != "" {
			t.Logf("skipped: %s", why)
			continue
		}
		ran = true
		rng := rand.New(rand.NewPCG(21, 22))
		if k.complete {
			for n := 0; n <= 70; n++ {
				for rep := 0; rep < 20; rep++ {
					x := expInputs(rng, n)
					if rep%2 == 0 {
						for i := range x { // mostly ordinary, one special
							x[i] = -700 + 1400*rng.Float64()
						}
						if n > 0 {
							x[rng.IntN(n)] = expInputs(rng, 1)[0]
						}
					}
					dst := make([]float64, n+1)
					for i := range dst {
						dst[i] = guardFinite
					}
					want := make([]float64, n)
					ExpGeneric(want, x)
					if got := k.f(dst[:n], x); got != n {
						t.Fatalf("%v: exp kernel did %d of %d elements", l, got, n)
					}
					for i := range n {
						if math.Float64bits(dst[i]) != math.Float64bits(want[i]) {
							t.Fatalf("%v: exp kernel, n=%d: exp(%v) = %v (%#x), generic %v (%#x)",
								l, n, x[i], dst[i], math.Float64bits(dst[i]), want[i], math.Float64bits(want[i]))
						}
					}
					if dst[n] != guardFinite {
						t.Fatalf("%v: exp kernel, n=%d: wrote past the end", l, n)
					}
				}
			}
			continue
		}
		x := make([]float64, 67)
		for i := range x {
			x[i] = -700 + 1400*rng.Float64()
		}
		dst := make([]float64, len(x))
		if got, want := k.f(dst, x), len(x)/k.block*k.block; got != want {
			t.Errorf("%v: exp kernel did %d of %d elements, want %d", l, got, len(x), want)
		}
		x[10] = math.NaN()
		if got, want := k.f(dst, x), 10/k.block*k.block; got != want {
			t.Errorf("%v: exp kernel with NaN at 10 did %d elements, want %d", l, got, want)
		}
	}
	if !ran && !purego && (runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64") && Detected() != Generic {
		t.Error("no SIMD exp kernel checked")
	}
}

// bigExp returns exp(x) to about 250 bits: x = k*ln2 + r with a 300-bit
// ln2, exp(r) by its Taylor series, times 2^k. It is independent of every
// floating-point exp.
func bigExp(x float64, ln2 *big.Float) *big.Float {
	const prec = 300
	bx := new(big.Float).SetPrec(prec).SetFloat64(x)
	k := math.Round(x / math.Ln2)
	r := new(big.Float).SetPrec(prec).Mul(ln2, big.NewFloat(k))
	r.Sub(bx, r)
	sum := new(big.Float).SetPrec(prec).SetInt64(1)
	term := new(big.Float).SetPrec(prec).SetInt64(1)
	eps := new(big.Float).SetMantExp(big.NewFloat(1), -280)
	for i := int64(1); ; i++ {
		term.Mul(term, r)
		term.Quo(term, new(big.Float).SetPrec(prec).SetInt64(i))
		sum.Add(sum, term)
		if new(big.Float).Abs(term).Cmp(eps) < 0 {
			break
		}
	}
	return sum.SetMantExp(sum, int(k))
}

func bigLn2() *big.Float {
	// ln2 = sum_{i>=1} 1/(i 2^i)
	const prec = 320
	s := new(big.Float).SetPrec(prec)
	for i := 1; i <= 330; i++ {
		d := new(big.Float).SetPrec(prec).SetMantExp(big.NewFloat(float64(i)), i)
		s.Add(s, new(big.Float).SetPrec(prec).Quo(big.NewFloat(1).SetPrec(prec), d))
	}
	return s
}

// TestExpUlpError measures the true error in ulps of the result (not
// relative to math.Exp, which has its own) on a sample, against bigExp.
func TestExpUlpError(t *testing.T) {
	n := 20000
	if modestSizes() {
		n = 2000
	}
	ln2 := bigLn2()
	if f, _ := ln2.Float64(); f != math.Ln2 {
		t.Fatalf("big ln2 = %v", f)
	}
	rng := rand.New(rand.NewPCG(23, 24))
	x := make([]float64, n)
	for i := range x {
		switch i % 6 {
		case 0, 2, 4:
			x[i] = (2*rng.Float64() - 1) * 3
		case 1:
			x[i] = -708 + 1417*rng.Float64()
		case 3: // beyond the fast path: results up to the overflow edge
			x[i] = expFastMax + (expOverflow-expFastMax)*rng.Float64()
		default: // subnormal results down to the underflow edge
			x[i] = expUnderflow + (-expFastMax-expUnderflow)*rng.Float64()
		}
	}
	exact := make([]*big.Float, n)
	for i, v := range x {
		exact[i] = bigExp(v, ln2)
	}
	got := make([]float64, n)
	forEachLevel(t, func(t *testing.T) {
		Exp(got, x)
		var maxUlp, mathUlp float64
		for i := range x {
			w, _ := exact[i].Float64()
			ulp := math.Nextafter(w, math.Inf(1)) - w
			ulpErr := func(v float64) float64 {
				d := new(big.Float).SetPrec(300).SetFloat64(v)
				d.Sub(d, exact[i])
				f, _ := d.Float64()
				return math.Abs(f) / ulp
			}
			maxUlp = max(maxUlp, ulpErr(got[i]))
			mathUlp = max(mathUlp, ulpErr(refExp(x[i])))
		}
		t.Logf("Exp max error vs a 300-bit reference over %d points in [expUnderflow, expOverflow]: %.3f ulp "+
			"(math.Exp, rescaled near the ends as in refExp: %.3f ulp)", n, maxUlp, mathUlp)
		if maxUlp > 2 {
			t.Errorf("Exp max error %.3f ulp > 2", maxUlp)
		}
	})
}

func TestKernelsNoAllocs(t *testing.T) {
	x := make([]float64, 1003)
	y := make([]float64, 1003)
	forEachLevel(t, func(t *testing.T) {
		for name, f := range map[string]func(){
			"Exp":         func() { Exp(y, x) },
			"DotUnitary":  func() { benchSinkTest += DotUnitary(x, y) },
			"DotInc":      func() { benchSinkTest += DotInc(x, y, 500, 2, 2, 0, 1) },
			"AxpyUnitary": func() { AxpyUnitary(0.5, x, y) },
			"AxpyInc":     func() { AxpyInc(0.5, x, y, 500, 2, 2, 0, 1) },
			"ScalUnitary": func() { ScalUnitary(0.5, x) },
			"ScalInc":     func() { ScalInc(0.5, x, 500, 2) },
		} {
			if n := testing.AllocsPerRun(10, f); n != 0 {
				t.Errorf("%s allocates %v times per call", name, n)
			}
		}
	})
}

var benchSinkTest float64

package asm

import "math"

// The exponential is computed as exp(x) = 2^(k/64) * exp(r):
//
//	k = round(x * 64/ln2), r = x - k*ln2/64 (|r| <= ln2/128),
//
// where the reduction subtracts k*ln2/64 in two fused steps (a double-length
// ln2/64), 2^(k/64) = 2^(k>>6) * T[k&63] comes from a 64-entry table of
// correctly rounded 2^(j/64), and exp(r)-1 is the degree-5 Taylor polynomial
// (truncation error below r^6/720 < 3.5e-17). The result is T*(1+p) formed
// with one final FMA: about one ulp in all (table rounding + final rounding).
//
// The generic twin performs exactly the operations of the SIMD kernels, in
// the same order and with the same fusions (math.FMA where they use FMA), so
// all implementations return bit-identical results; only |x| > expFastMax
// and NaN leave the fast path, in every implementation through expSpecial.

const (
	expInvLn2N = 92.33248261689366       // 64/ln2
	expShift   = 0x1.8p52                // 1.5*2^52: adding it rounds to an integer kept in the low mantissa bits
	expLn2HiN  = 0.6931471805599453 / 64 // ln2 rounded to double, over 64
	expLn2LoN  = 2.3190468138462996e-17 / 64
	expC2      = 1.0 / 2
	expC3      = 1.0 / 6
	expC4      = 1.0 / 24
	expC5      = 1.0 / 120

	// expFastMax bounds the fast path: for |x| <= 708 the result and the
	// scale 2^(k>>6) are normal numbers.
	expFastMax = 708.0
	// Beyond these math.Exp overflows to +Inf or underflows to 0.
	expOverflow  = 7.09782712893383973096e+02
	expUnderflow = -7.45133219101941108420e+02
)

// exp2Table holds the bits of 2^(j/64) correctly rounded, j = 0..63
// (generated with 60-digit decimal arithmetic; TestExpTable checks them).
var exp2Table = [64]uint64{
	0x3ff0000000000000, 0x3ff02c9a3e778061, 0x3ff059b0d3158574, 0x3ff0874518759bc8,
	0x3ff0b5586cf9890f, 0x3ff0e3ec32d3d1a2, 0x3ff11301d0125b51, 0x3ff1429aaea92de0,
	0x3ff172b83c7d517b, 0x3ff1a35beb6fcb75, 0x3ff1d4873168b9aa, 0x3ff2063b88628cd6,
	0x3ff2387a6e756238, 0x3ff26b4565e27cdd, 0x3ff29e9df51fdee1, 0x3ff2d285a6e4030b,
	0x3ff306fe0a31b715, 0x3ff33c08b26416ff, 0x3ff371a7373aa9cb, 0x3ff3a7db34e59ff7,
	0x3ff3dea64c123422, 0x3ff4160a21f72e2a, 0x3ff44e086061892d, 0x3ff486a2b5c13cd0,
	0x3ff4bfdad5362a27, 0x3ff4f9b2769d2ca7, 0x3ff5342b569d4f82, 0x3ff56f4736b527da,
	0x3ff5ab07dd485429, 0x3ff5e76f15ad2148, 0x3ff6247eb03a5585, 0x3ff6623882552225,
	0x3ff6a09e667f3bcd, 0x3ff6dfb23c651a2f, 0x3ff71f75e8ec5f74, 0x3ff75feb564267c9,
	0x3ff7a11473eb0187, 0x3ff7e2f336cf4e62, 0x3ff82589994cce13, 0x3ff868d99b4492ed,
	0x3ff8ace5422aa0db, 0x3ff8f1ae99157736, 0x3ff93737b0cdc5e5, 0x3ff97d829fde4e50,
	0x3ff9c49182a3f090, 0x3ffa0c667b5de565, 0x3ffa5503b23e255d, 0x3ffa9e6b5579fdbf,
	0x3ffae89f995ad3ad, 0x3ffb33a2b84f15fb, 0x3ffb7f76f2fb5e47, 0x3ffbcc1e904bc1d2,
	0x3ffc199bdd85529c, 0x3ffc67f12e57d14b, 0x3ffcb720dcef9069, 0x3ffd072d4a07897c,
	0x3ffd5818dcfba487, 0x3ffda9e603db3285, 0x3ffdfc97337b9b5f, 0x3ffe502ee78b3ff6,
	0x3ffea4afa2a490da, 0x3ffefa1bee615a27, 0x3fff50765b6e4540, 0x3fffa7c1819e90d8,
}

// expTab[j] = bits(2^(j/64)) - j<<46. With z = x*64/ln2 + expShift, the low
// 18 bits of bits(z) are k mod 2^18, so bits(z)<<46 carries j = k&63 in bits
// 46..51 and k>>6 in the exponent field: expTab[j] + bits(z)<<46 is the bit
// pattern of 2^(k>>6) * 2^(j/64) with integer adds and shifts only (the
// exponent wraps modulo 2^12, harmless while the result is normal). The
// kernels read it as an unsigned 64-bit table.
var expTab [64]uint64

// expConsts holds the constants the SIMD kernels broadcast, each repeated
// four times (one 256-bit vector); see the offsets in exp_amd64.s/exp_arm64.s.
var expConsts [11][4]uint64

func init() {
	for j, b := range exp2Table {
		expTab[j] = b - uint64(j)<<46
	}
	for i, c := range []uint64{
		0x7fffffffffffffff, // |x| mask
		math.Float64bits(expFastMax),
		math.Float64bits(expInvLn2N),
		math.Float64bits(expShift),
		math.Float64bits(expLn2HiN),
		math.Float64bits(expLn2LoN),
		63, // j mask
		math.Float64bits(expC2),
		math.Float64bits(expC3),
		math.Float64bits(expC4),
		math.Float64bits(expC5),
	} {
		expConsts[i] = [4]uint64{c, c, c, c}
	}
}

// ExpGeneric is the pure-Go twin of Exp: dst[i] = exp(x[i]) for i < len(x).
func ExpGeneric(dst, x []float64) {
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = expScalar(v)
	}
}

// expScalar is exp(x) by the method above: the fast path, operation for
// operation as in the SIMD kernels, or expSpecial.
func expScalar(x float64) float64 {
	if !(math.Abs(x) <= expFastMax) {
		return expSpecial(x)
	}
	z := math.FMA(x, expInvLn2N, expShift)
	kd := z - expShift
	r := math.FMA(-kd, expLn2HiN, x)
	r = math.FMA(-kd, expLn2LoN, r)
	ki := math.Float64bits(z)
	s := math.Float64frombits(expTab[ki&63] + ki<<46)
	q := math.FMA(expC5, r, expC4)
	q = math.FMA(q, r, expC3)
	q = math.FMA(q, r, expC2)
	r2 := r * r
	p := math.FMA(q, r2, r)
	return math.FMA(s, p, s)
}

// expSpecial handles NaN, ±Inf and |x| > expFastMax, where 2^(k>>6) or the
// result is not a normal number: overflow to +Inf, underflow to 0, and the
// subnormal range, which is scaled by math.Ldexp (one more rounding, so
// results there are within a subnormal ulp or so of the exact value).
func expSpecial(x float64) float64 {
	switch {
	case x != x:
		return x
	case x > expOverflow:
		return math.Inf(1)
	case x < expUnderflow:
		return 0
	}
	z := math.FMA(x, expInvLn2N, expShift)
	kd := z - expShift
	r := math.FMA(-kd, expLn2HiN, x)
	r = math.FMA(-kd, expLn2LoN, r)
	k := int64(kd)
	j := k & 63
	t := math.Float64frombits(exp2Table[j])
	q := math.FMA(expC5, r, expC4)
	q = math.FMA(q, r, expC3)
	q = math.FMA(q, r, expC2)
	r2 := r * r
	p := math.FMA(q, r2, r)
	return math.Ldexp(math.FMA(t, p, t), int(k>>6))
}

// expBlocks runs a SIMD exp kernel that processes whole blocks of `block`
// elements and stops early (returning how many it did) at the end of its
// input or at a block holding a NaN or a |x| > expFastMax; such a block and
// the final partial block are finished here in Go.
func expBlocks(dst, x []float64, block int, kernel func(dst, x []float64) int) {
	for i := 0; i < len(x); {
		i += kernel(dst[i:], x[i:])
		end := min(i+block, len(x))
		for ; i < end; i++ {
			dst[i] = expScalar(x[i])
		}
	}
}

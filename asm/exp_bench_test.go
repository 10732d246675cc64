package asm

import (
	"math"
	"testing"
)

// BenchmarkExp reports elements/s (as "MB/s" of 8-byte inputs, and the
// elem/s metric) for Exp at each level and for a math.Exp loop.
func BenchmarkExp(b *testing.B) {
	const n = 4096
	x := make([]float64, n)
	for i := range x {
		x[i] = -20 + 40*float64(i)/n
	}
	dst := make([]float64, n)
	report := func(b *testing.B) {
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "elem/s")
	}
	benchEachLevel(b, func(b *testing.B) {
		b.SetBytes(8 * n)
		for b.Loop() {
			Exp(dst, x)
		}
		report(b)
	})
	b.Run("math.Exp", func(b *testing.B) {
		b.SetBytes(8 * n)
		for b.Loop() {
			for i, v := range x {
				dst[i] = math.Exp(v)
			}
		}
		report(b)
	})
}

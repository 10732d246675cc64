package asm

import (
	"fmt"
	"testing"
)

// BenchmarkSEKernel: the GP's m×m kernel matrix from m×2 features, fused
// (SEKernel) and as SqDist followed by Exp over the whole matrix.
func BenchmarkSEKernel(b *testing.B) {
	for _, m := range []int{256, 1000} {
		a := make([]float64, 2*m)
		for i := range a {
			a[i] = float64(i%31) * 0.1
		}
		k := make([]float64, m*m)
		b.Run(fmt.Sprint("m=", m, "/fused"), func(b *testing.B) {
			benchEachLevel(b, func(b *testing.B) {
				for b.Loop() {
					SEKernel(k, m, a, 2, a, 2, m, m, 2)
				}
				b.ReportMetric(float64(m*m)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
			})
		})
		b.Run(fmt.Sprint("m=", m, "/sqdist+exp"), func(b *testing.B) {
			benchEachLevel(b, func(b *testing.B) {
				for b.Loop() {
					SqDist(k, m, a, 2, a, 2, m, m, 2)
					ScalUnitary(-0.5, k)
					Exp(k, k)
				}
				b.ReportMetric(float64(m*m)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
			})
		})
	}
}

package asm

import (
	"fmt"
	"testing"
)

var benchSink float64

func benchVec(n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = float64(i%17) * 0.25
	}
	return x
}

func BenchmarkDotUnitary(b *testing.B) {
	for _, n := range []int{64, 1024, 65536} {
		x, y := benchVec(n), benchVec(n)
		b.Run(fmt.Sprint("n=", n), func(b *testing.B) {
			benchEachLevel(b, func(b *testing.B) {
				b.SetBytes(int64(16 * n))
				for b.Loop() {
					benchSink += DotUnitary(x, y)
				}
			})
		})
	}
}

func BenchmarkDotInc(b *testing.B) {
	const n = 1024
	x, y := benchVec(2*n), benchVec(2*n)
	benchEachLevel(b, func(b *testing.B) {
		b.SetBytes(16 * n)
		for b.Loop() {
			benchSink += DotInc(x, y, n, 2, 2, 0, 0)
		}
	})
}

func BenchmarkAxpyUnitary(b *testing.B) {
	for _, n := range []int{64, 1024, 65536} {
		x, y := benchVec(n), benchVec(n)
		b.Run(fmt.Sprint("n=", n), func(b *testing.B) {
			benchEachLevel(b, func(b *testing.B) {
				b.SetBytes(int64(24 * n))
				for b.Loop() {
					AxpyUnitary(1e-9, x, y)
				}
			})
		})
	}
}

func BenchmarkAxpyInc(b *testing.B) {
	const n = 1024
	x, y := benchVec(2*n), benchVec(2*n)
	benchEachLevel(b, func(b *testing.B) {
		b.SetBytes(24 * n)
		for b.Loop() {
			AxpyInc(1e-9, x, y, n, 2, 2, 0, 0)
		}
	})
}

func BenchmarkScalUnitary(b *testing.B) {
	const n = 1024
	x := benchVec(n)
	benchEachLevel(b, func(b *testing.B) {
		b.SetBytes(16 * n)
		for b.Loop() {
			ScalUnitary(1, x)
		}
	})
}

func BenchmarkScalInc(b *testing.B) {
	const n = 1024
	x := benchVec(2 * n)
	benchEachLevel(b, func(b *testing.B) {
		b.SetBytes(16 * n)
		for b.Loop() {
			ScalInc(1, x, n, 2)
		}
	})
}

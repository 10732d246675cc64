package asm

import "strconv"

// GEMM micro-kernels. A micro-kernel multiplies one packed MR×k panel of A by
// one packed k×NR panel of B and merges the MR×NR product into C:
//
//	C = beta*C + alpha*(A·B)     (beta == 0: C is overwritten, never read)
//
// Packed layouts (what linalg's packing routines write):
//
//	a[l*MR + r] = A[r][l]   for r < MR, l < k   (column l of the panel is contiguous)
//	b[l*NR + c] = B[l][c]   for c < NR, l < k   (row l of the panel is contiguous)
//
// C is row-major with leading dimension ldc. The register-blocked shape MR×NR
// depends on the SIMD level; callers ask GemmKernelFor once per operation and
// pack for that shape, so a concurrent SetLevel cannot mix shapes.

// GemmKernel is a micro-kernel and the tile shape it computes.
type GemmKernel struct {
	MR, NR int
	Level  Level
	fn     func(k int, a, b, c []float64, ldc int, alpha, beta float64)
}

// Run computes C[0:MR, 0:NR] (row-major, leading dimension ldc) =
// beta*C + alpha*a·b on packed panels a (k×MR) and b (k×NR). It panics if a
// slice is too short: the assembly must never read or write out of bounds.
func (g *GemmKernel) Run(k int, a, b, c []float64, ldc int, alpha, beta float64) {
	if k < 0 || len(a) < k*g.MR || len(b) < k*g.NR || ldc < g.NR || len(c) < (g.MR-1)*ldc+g.NR {
		panic("asm: gemm micro-kernel: bad panel or tile size")
	}
	g.fn(k, a, b, c, ldc, alpha, beta)
}

// GemmKernelFor returns the micro-kernel used at level l.
func GemmKernelFor(l Level) *GemmKernel {
	if ks := gemmKernelsAsm(l); len(ks) > 0 {
		return ks[0]
	}
	return &gemmGeneric4x4
}

// gemmKernelsFor lists every micro-kernel compiled for level l (tests run
// them all), the default first.
func gemmKernelsFor(l Level) []*GemmKernel {
	if ks := gemmKernelsAsm(l); len(ks) > 0 {
		return ks
	}
	return []*GemmKernel{&gemmGeneric4x4}
}

// GemmKernelGenericFor returns the pure-Go reference kernel with the same
// shape as k (the twin an assembly kernel is tested against).
func GemmKernelGenericFor(k *GemmKernel) *GemmKernel {
	mr, nr := k.MR, k.NR
	return &GemmKernel{MR: mr, NR: nr, Level: Generic,
		fn: func(kk int, a, b, c []float64, ldc int, alpha, beta float64) {
			GemmGeneric(mr, nr, kk, a, b, c, ldc, alpha, beta)
		}}
}

// GemmGeneric is the reference micro-kernel for any shape mr×nr.
func GemmGeneric(mr, nr, k int, a, b, c []float64, ldc int, alpha, beta float64) {
	var acc [16 * 16]float64
	if mr*nr > len(acc) {
		panic("asm: GemmGeneric: tile larger than 16×16")
	}
	for l := 0; l < k; l++ {
		ap := a[l*mr : l*mr+mr]
		bp := b[l*nr : l*nr+nr]
		for r, av := range ap {
			row := acc[r*nr : r*nr+nr]
			for j, bv := range bp {
				row[j] += av * bv
			}
		}
	}
	for r := 0; r < mr; r++ {
		crow := c[r*ldc : r*ldc+nr]
		row := acc[r*nr : r*nr+nr]
		if beta == 0 {
			for j := range crow {
				crow[j] = alpha * row[j]
			}
		} else {
			for j := range crow {
				crow[j] = beta*crow[j] + alpha*row[j]
			}
		}
	}
}

// gemmGeneric4x4 is the kernel of the generic level: 16 scalar accumulators,
// about what the Go compiler keeps in registers.
var gemmGeneric4x4 = GemmKernel{MR: 4, NR: 4, Level: Generic, fn: gemm4x4Go}

func gemm4x4Go(k int, a, b, c []float64, ldc int, alpha, beta float64) {
	var c00, c01, c02, c03, c10, c11, c12, c13 float64
	var c20, c21, c22, c23, c30, c31, c32, c33 float64
	a = a[:4*k]
	b = b[:4*k]
	for l := 0; l < 4*k; l += 4 {
		ap := a[l : l+4 : l+4]
		bp := b[l : l+4 : l+4]
		b0, b1, b2, b3 := bp[0], bp[1], bp[2], bp[3]
		a0 := ap[0]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		a1 := ap[1]
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		a2 := ap[2]
		c20 += a2 * b0
		c21 += a2 * b1
		c22 += a2 * b2
		c23 += a2 * b3
		a3 := ap[3]
		c30 += a3 * b0
		c31 += a3 * b1
		c32 += a3 * b2
		c33 += a3 * b3
	}
	store4(c[0:4:4], c00, c01, c02, c03, alpha, beta)
	store4(c[ldc:ldc+4:ldc+4], c10, c11, c12, c13, alpha, beta)
	store4(c[2*ldc:2*ldc+4:2*ldc+4], c20, c21, c22, c23, alpha, beta)
	store4(c[3*ldc:3*ldc+4:3*ldc+4], c30, c31, c32, c33, alpha, beta)
}

func store4(c []float64, x0, x1, x2, x3, alpha, beta float64) {
	if beta == 0 {
		c[0], c[1], c[2], c[3] = alpha*x0, alpha*x1, alpha*x2, alpha*x3
		return
	}
	c[0] = beta*c[0] + alpha*x0
	c[1] = beta*c[1] + alpha*x1
	c[2] = beta*c[2] + alpha*x2
	c[3] = beta*c[3] + alpha*x3
}

// Name is the kernel's name: its level and tile, e.g. "avx2-6x8".
func (g *GemmKernel) Name() string {
	return g.Level.String() + "-" + strconv.Itoa(g.MR) + "x" + strconv.Itoa(g.NR)
}

// GemmKernels lists every micro-kernel that runs at level l, the default
// (GemmKernelFor) first. A tuner picks among them.
func GemmKernels(l Level) []*GemmKernel { return append([]*GemmKernel(nil), gemmKernelsFor(l)...) }

// GemmKernelNamed returns the kernel of GemmKernels(l) called name.
func GemmKernelNamed(l Level, name string) (*GemmKernel, bool) {
	for _, k := range gemmKernelsFor(l) {
		if k.Name() == name {
			return k, true
		}
	}
	return nil, false
}

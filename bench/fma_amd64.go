//go:build !purego

package bench

// fmaChainsAVX2 runs n iterations of 12 independent 256-bit FMAs.
func fmaChainsAVX2(n int)

// fmaProbe is the throughput loop of the widest FMA this build can measure:
// 256-bit (4 doubles), 12 per iteration. AVX2+FMA is present on every CPU
// whose level is avx2 or avx512.
var fmaProbe = &fmaLoop{run: fmaChainsAVX2, perIter: 12, lanes: 4, what: "256-bit FMA loop"}

// fmaChainsAVX512 runs n iterations of 24 independent 512-bit FMAs.
func fmaChainsAVX512(n int)

// fmaProbe512 measures 512-bit FMA throughput; only run where the CPU has
// AVX-512F.
var fmaProbe512 = &fmaLoop{run: fmaChainsAVX512, perIter: 24, lanes: 8, what: "512-bit FMA loop"}

// Package cholesky factors symmetric positive-definite matrices: blocked,
// parallel Cholesky with solves, log-determinant and inverse, and explicit
// errors for matrices that are not positive definite.
//
// Two layers:
//
//   - Factor, for model code: Factorize / FactorizeWithJitter copy the lower
//     triangle of a row-major matrix and factor it; SolveVec, Solve,
//     SolveLower, SolveUpper, LogDet and Inverse use the factor. Bad input is
//     an error, never a panic: ErrNonFinite for NaN/Inf entries (or an
//     overflowing factorization), *NotPDError (errors.Is
//     ErrNotPositiveDefinite) naming the failing column and pivot otherwise.
//     A reused Factor allocates nothing in steady state.
//   - Lapack, the Cholesky subset of gonum's lapack.Float64 with exactly its
//     semantics (row-major, both triangles, gonum's panics on bad arguments,
//     ok=false for non-PD input). Backend returns "native" (this package),
//     "gonum" or, in builds with -tags netlib, "openblas" (LAPACKE).
//
// # Algorithms
//
// Row-major lower L is column-major upper Lᵀ; everything works on the lower
// triangle, whose rows are contiguous (the upper triangle of the LAPACK
// entry points is transposed into a pooled workspace and back, O(n²)).
//
// Dpotrf is right-looking and blocked: for each panel of NB columns the
// diagonal block is factored recursively (halves, down to potf2 on blocks
// of at most 64), the panel below it is solved by the leaf triangular solve,
// and the whole trailing matrix is updated by one Dsyrk of inner dimension
// NB — a single large, well-shaped GEMM per step that the BLAS spreads over
// all cores. The leaf solve X·Lᵀ = B (leaf_trsm.go) is the packed-GEMM
// technique of optimized BLAS libraries: MR-row tiles of B, NR-column
// blocks, the updates by the SIMD GEMM micro-kernel of package asm on packed
// operands, the NR×NR diagonal blocks applied as their (tiny) inverses by
// the same micro-kernel, row tiles spread over goroutines. Measured
// alternatives (TestTuneParams with PACPFL_TUNE=1): a fully recursive
// variant (trailing updates split into GEMMs of inner dimension up to n/2)
// was 3–8% slower than the right-looking one with the native BLAS, and
// panel widths 96…256 were within noise of each other; NB = 192 is the
// default (a multiple of the micro-kernel tiles, under the GEMM's KC = 256
// so each update is one pass over C).
//
// Dpotri is Dtrtri followed by the Dlauum product Lᵀ·L, both recursive:
// halves, with the coupling blocks computed by GEMMs and triangular products
// whose small leaves (≤ 64) run as GEMMs against a zero-padded copy of the
// triangle, so that almost every flop runs in the BLAS GEMM; leaves of the
// inversion and of the product (≤ 64) are the unblocked trti2/lauu2.
//
// Parallelism comes from the BLAS (linalg's native BLAS by default; pass a
// single-threaded one with Factor.SetBLAS to keep a Factor on one core) and
// from the leaf solve's own goroutines, which follow the BLAS's thread
// setting.
package cholesky

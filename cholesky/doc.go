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
//     FactorizeInPlace / FactorizeInPlaceWithJitter factor a symmetric
//     matrix held in both triangles where it lies (L below the diagonal,
//     the strict upper triangle kept, and read back to restore A before a
//     jitter retry), and InverseInPlace overwrites L with the lower
//     triangle of A⁻¹, so a model needs one n×n matrix for A, L and A⁻¹
//     (Footprint counts what the Factor itself holds).
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
// diagonal block is factored recursively (halves, down to a 2×2
// register-blocked potf2 on blocks of at most 64), the panel below it is
// solved by the leaf triangular solve, and the trailing matrix is updated
// with the panel (Dsyrk/Dgemm of inner dimension NB). The leaf solve
// X·Lᵀ = B (leaf_trsm.go) is the packed-GEMM technique of optimized BLAS
// libraries: MR-row tiles of B, NR-column blocks, the updates by the SIMD
// GEMM micro-kernel of package asm on packed operands, the NR×NR diagonal
// blocks applied as their (tiny) inverses by the same micro-kernel, row
// tiles spread over goroutines.
//
// With linalg's native BLAS on more than one thread the steps run with
// look-ahead (lookahead.go): each step is a pool of NB×NB tile tasks on
// single-threaded BLAS calls over our own goroutines; one worker takes the
// critical path (update the next panel, factor its diagonal block) while
// the others update the rest of the trailing matrix, and the next panel's
// solve is handed out as soon as its diagonal block is ready — one barrier
// per step and no core idle through the serial parts. With another BLAS, or
// one thread, the same loop runs with the BLAS's own parallel Dsyrk.
//
// NB = 192: a multiple of the 6×8 micro-tile, under the GEMM's KC = 256 so
// that each update is one pass over C. Look-ahead is kept over the plain
// right-looking loop because it does not depend on how well the BLAS
// parallelizes one mid-sized call. TestTuneParams (PACPFL_TUNE=1) measures
// the block sizes; the measurements behind these choices are in
// docs/performance.md §2.
//
// Dpotri is Dtrtri followed by the Dlauum product Lᵀ·L, both recursive:
// halves, with the coupling blocks computed by GEMMs, one Dsyrk, and
// triangular products whose leaves (≤ 128) run as GEMMs against a
// zero-padded copy of the triangle, so that almost every flop runs in the
// BLAS GEMM (with linalg's native BLAS, GemmTriangular, which skips the
// zero half per micro-tile); the leaves of the inversion and of the product
// (≤ 64) are the unblocked trti2/lauu2. The two diagonal halves of a step are independent
// (for Dlauum after setting L21ᵀL21 aside), and the rows (or columns) of
// the coupling block are independent in each triangular product; so from
// order 256 on, with the native BLAS on two or more threads, the top-level
// step runs the two halves, and each product as two halves of the block,
// on two goroutines with the single-threaded native BLAS (a 2-way split,
// sized for the 2-core development machine; TestTuneParams with
// PACPFL_TUNE_OP=potri measures the choices, docs/performance.md §2 has the
// figures).
//
// Parallelism comes from the BLAS (linalg's native BLAS by default; pass a
// single-threaded one with Factor.SetBLAS to keep a Factor on one core) and
// from the leaf solve's own goroutines, which follow the BLAS's thread
// setting.
package cholesky

// Package linalg is pacpfl's BLAS: a packed, cache-blocked, multi-core
// implementation of gonum's blas.Float64 ("native"), and the registry that
// hands out it or one of the reference backends ("gonum", pure Go; "openblas",
// cgo, build tag netlib) by name.
//
// # Use
//
// Backend(name) returns a blas.Float64 by name (Backends lists what this
// binary has; an unknown or missing backend is an error that says what is
// available and how to get it). Native is the type behind "native";
// DefaultNative uses every core, NewNative(1) one thread. Because Native
// implements gonum's blas.Float64, blas64.Use(linalg.DefaultNative) makes
// gonum's mat package (and everything built on it) run its matrix products
// on this BLAS — see the package examples.
//
// # What is accelerated
//
// Dgemm (all four transpose combinations), Dsyrk, Dtrsm (all sixteen
// side/uplo/transpose/diag combinations), Dgemv and the level-1 Ddot,
// Daxpy and Dscal: GotoBLAS/BLIS structure, A and B packed into MC×KC and
// KC×NC panels (Blocking; sizes from the CPU's caches, SetBlocking to
// override), a register-blocked SIMD micro-kernel from package asm, the
// macro loops in Go, parallel over blocks of C: a grid of independent
// blocks, each goroutine packing its own panels, or, for a small C with a
// long inner dimension, one packed KC×NC block of B shared by the goroutines
// and its row blocks shared out (gemm_shared.go). The default blocks follow
// the SIMD level in force. Every other routine is gonum's (Native embeds
// gonum.Implementation).
//
// # Semantics, concurrency and allocation
//
// Results follow the reference BLAS, including its scalar rules (α = 0 or
// k = 0 reads neither A nor B, β = 0 overwrites C without reading it); the
// openblas backend is wrapped to keep them on every OpenBLAS kernel. Bad
// arguments (negative sizes, short slices, bad leading dimensions) panic
// with gonum's messages, exactly as gonum does, since the blas.Float64
// contract leaves no error return; callers that take sizes from users
// check them first. A Native is safe for concurrent use by many goroutines,
// and takes its packing buffers from a shared pool, so calls do not
// allocate in steady state. An unusable PACPFL_SIMD setting makes Backend
// return an error instead of falling back silently.
package linalg

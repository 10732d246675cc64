// Package cholesky factors symmetric positive-definite matrices: blocked,
// parallel Cholesky with solves, log-determinant and inverse, and explicit
// errors for matrices that are not positive definite.
package cholesky

package cholesky

import (
	"errors"
	"fmt"
)

// ErrNonFinite reports a matrix with a NaN or an infinity among the entries
// that were read, or a factorization that overflowed.
var ErrNonFinite = errors.New("cholesky: matrix has NaN or Inf entries")

// ErrNotPositiveDefinite is the sentinel matched (through errors.Is) by every
// *NotPDError.
var ErrNotPositiveDefinite = errors.New("cholesky: matrix is not positive definite")

// errNotFactorized is returned by the methods of a Factor that needs a
// successful factorization first.
var errNotFactorized = errors.New("cholesky: no successful factorization (call Factorize first)")

// NotPDError says where a Cholesky factorization broke down: the 0-based
// Column whose pivot A_jj − Σ_k L_jk² was not positive (Pivot holds it; it
// may be NaN after cancellation), and the largest diagonal Jitter that had
// been added when it did (0 for a plain factorization).
type NotPDError struct {
	Column int
	Pivot  float64
	Jitter float64
}

func (e *NotPDError) Error() string {
	if e.Jitter == 0 {
		return fmt.Sprintf("cholesky: matrix is not positive definite: pivot %g at column %d (no jitter added)",
			e.Pivot, e.Column)
	}
	return fmt.Sprintf("cholesky: matrix is not positive definite: pivot %g at column %d with the largest jitter "+
		"tried, %g, added to the diagonal",
		e.Pivot, e.Column, e.Jitter)
}

// Is makes errors.Is(err, ErrNotPositiveDefinite) true.
func (e *NotPDError) Is(target error) bool { return target == ErrNotPositiveDefinite }

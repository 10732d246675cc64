package cholesky

// In-place factorization: the factor lives in the caller's matrix, so that a
// model holding one n×n matrix can build A in it, factor it, solve with it
// and invert it without a second n×n buffer.

// FactorizeInPlace computes A = L·Lᵀ in the caller's memory: a (n×n,
// row-major, stride lda) must hold the symmetric A in both triangles. L
// overwrites the lower triangle of a; the strict upper triangle is neither
// read nor written, so it still holds A's afterwards (a model can keep
// what it needs there). The Factor keeps a reference to a: L, the solves,
// LogDet, Inverse and InverseInPlace work on it until the next
// factorization, and the caller must not modify its lower triangle
// meanwhile.
//
// Errors are those of Factorize. On error the lower triangle of a is
// restored from the strict upper triangle and the diagonal (saved before
// factoring), so a holds A again.
func (f *Factor) FactorizeInPlace(a []float64, n, lda int) error {
	return f.factorizeInPlace(a, n, lda, false)
}

// FactorizeInPlaceWithJitter is FactorizeInPlace with the jitter ladder of
// FactorizeWithJitter: before each retry the lower triangle of a is restored
// from its strict upper triangle and the saved diagonal, and the jitter
// added to the diagonal. Success allocates nothing.
func (f *Factor) FactorizeInPlaceWithJitter(a []float64, n, lda int) error {
	return f.factorizeInPlace(a, n, lda, true)
}

func (f *Factor) factorizeInPlace(a []float64, n, lda int, withJitter bool) error {
	f.ok = false
	f.l = nil
	if err := checkInput(a, n, lda); err != nil {
		return err
	}
	if _, err := f.blasImpl(); err != nil {
		return err
	}
	f.n, f.ldl = n, lda
	f.l = a[:f.span()]
	f.diag = grow(f.diag, n)
	mean := 0.0
	for i := 0; i < n; i++ {
		d := a[i*lda+i]
		f.diag[i] = d
		mean += d
	}
	mean /= float64(n)
	col, piv, err := f.run(0)
	if err == nil && col < 0 {
		return nil
	}
	jitter := 0.0
	if err == nil && withJitter && mean > 0 {
		ladder := defaultLadder
		if f.ladderSet {
			ladder = f.ladder
		}
		for _, eps := range ladder {
			jitter = eps * mean
			f.restore(jitter)
			if col, piv, err = f.run(jitter); err != nil {
				break
			}
			if col < 0 {
				return nil
			}
		}
	}
	f.restore(0)
	if err != nil {
		return err
	}
	return &NotPDError{Column: col, Pivot: piv, Jitter: jitter}
}

// restore rebuilds the lower triangle of the in-place matrix from its strict
// upper triangle and the saved diagonal plus jitter.
func (f *Factor) restore(jitter float64) {
	n, l, ldl := f.n, f.l, f.ldl
	transposeUpperToLower(n, l, ldl, l, ldl)
	for i := 0; i < n; i++ {
		l[i*ldl+i] = f.diag[i] + jitter
	}
}

// InverseInPlace overwrites L with the lower triangle of (A + jitter·I)⁻¹
// where L is stored (the slice L returns; its strict upper triangle is not
// touched) and returns that matrix and its stride. It needs no second n×n
// matrix, unlike Inverse. The factorization is consumed: until the next
// factorization N returns 0, LogDet NaN, and the solves an error.
func (f *Factor) InverseInPlace() (inv []float64, stride int, err error) {
	if !f.ok {
		return nil, 0, errNotFactorized
	}
	l, ldl := f.L()
	f.ok = false
	if f.n > 0 {
		f.engine().potri(f.n, l, ldl)
	}
	return l, ldl, nil
}

// Release drops every buffer the Factor owns (its copy of the matrix, the
// saved diagonal and the algorithms' scratch) and its reference to an
// in-place matrix, keeping the settings (BLAS, jitter ladder). The
// factorization is gone; the next one allocates again.
func (f *Factor) Release() {
	f.ok = false
	f.l, f.own, f.diag = nil, nil, nil
	f.n, f.ldl = 0, 0
	f.ws = workspace{}
}

// Footprint returns the number of float64 values held in buffers the
// Factor owns: its copy of the matrix (after Factorize; none after
// FactorizeInPlace), the saved diagonal and the scratch of the blocked
// algorithms (at most about n²/4 values, for the concurrent halves of the
// inverse on several threads). The caller's matrix is not counted.
func (f *Factor) Footprint() int {
	return cap(f.own) + cap(f.diag) + f.ws.floats()
}

// floats counts the float64 values of the workspace and of every workspace
// it owns.
func (w *workspace) floats() int {
	if w == nil {
		return 0
	}
	s := cap(w.tri) + cap(w.tmp) + cap(w.t)
	s += cap(w.rlt.dinv) + cap(w.rlt.lpack)
	for i := range w.rlt.ws {
		s += cap(w.rlt.ws[i].t) + cap(w.rlt.ws[i].x)
	}
	for _, p := range w.par {
		s += p.floats()
	}
	for _, p := range w.la.wks {
		s += p.floats()
	}
	return s
}

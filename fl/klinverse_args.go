package fl

import (
	"fmt"
	"strconv"
)

// ArgError is an argument of KLInverseArgs that is not a number or lies
// outside its domain.
type ArgError struct{ Err error }

func (e *ArgError) Error() string { return e.Err.Error() }
func (e *ArgError) Unwrap() error { return e.Err }

// KLInverseArgs is kl⁻¹(Q, C) (KLInverse) of the arguments as text, as
// pacpfl bound kl-inverse Q C takes them: an empirical risk Q in [0, 1]
// and a complexity C ≥ 0. An argument that is not such a number is an
// *ArgError naming it.
func KLInverseArgs(q, c string) (float64, error) {
	var v [2]float64
	for i, a := range [2]struct{ name, text string }{{"Q", q}, {"C", c}} {
		x, err := strconv.ParseFloat(a.text, 64)
		if err != nil {
			return 0, &ArgError{fmt.Errorf("%s = %q is not a number", a.name, a.text)}
		}
		v[i] = x
	}
	if !(v[0] >= 0 && v[0] <= 1) {
		return 0, &ArgError{fmt.Errorf("Q = %v must lie in [0, 1] (an empirical risk)", v[0])}
	}
	if !(v[1] >= 0) {
		return 0, &ArgError{fmt.Errorf("C = %v must be ≥ 0 (a complexity term)", v[1])}
	}
	return KLInverse(v[0], v[1])
}

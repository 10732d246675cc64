package fl

import (
	"errors"
	"math"
	"testing"
)

// KLInverseArgs is KLInverse of the parsed numbers, and refuses text
// that is not a number in its domain with an ArgError naming it.
func TestKLInverseArgs(t *testing.T) {
	got, err := KLInverseArgs("0", "1")
	want, _ := KLInverse(0, 1)
	if err != nil || got != want || math.Abs(got-(1-math.Exp(-1))) > 1e-12 {
		t.Fatalf("kl⁻¹(0, 1) = %v, %v; want %v", got, err, want)
	}
	for args, msg := range map[[2]string]string{
		{"x", "1"}:    `Q = "x" is not a number`,
		{"0.1", "y"}:  `C = "y" is not a number`,
		{"1.5", "1"}:  "Q = 1.5 must lie in [0, 1] (an empirical risk)",
		{"NaN", "1"}:  "Q = NaN must lie in [0, 1] (an empirical risk)",
		{"0.1", "-1"}: "C = -1 must be ≥ 0 (a complexity term)",
	} {
		_, err := KLInverseArgs(args[0], args[1])
		var ae *ArgError
		if !errors.As(err, &ae) || err.Error() != msg {
			t.Errorf("%v: error %v, want ArgError %q", args, err, msg)
		}
	}
}

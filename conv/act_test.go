package conv

import (
	"math"
	"testing"
)

func TestPositiveMask(t *testing.T) {
	for _, c := range []struct {
		y    float64
		want bool
	}{{1, true}, {5e-324, true}, {math.MaxFloat64, true}, {math.Inf(1), true},
		{0, false}, {math.Copysign(0, -1), false}, {-1, false}, {-5e-324, false}, {math.Inf(-1), false},
		{math.NaN(), false}, {-math.NaN(), false}, {math.Float64frombits(0x7FF0000000000001), false},
		{math.Float64frombits(0xFFFFFFFFFFFFFFFF), false}} {
		m := positiveMask(c.y)
		if (m == ^uint64(0)) != c.want || (m != 0 && m != ^uint64(0)) {
			t.Errorf("positiveMask(%v / %#x) = %#x, want %v", c.y, math.Float64bits(c.y), m, c.want)
		}
	}
}

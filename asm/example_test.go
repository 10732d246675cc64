package asm_test

import (
	"fmt"
	"math"
	"slices"

	"github.com/pacpfl/pacpfl/asm"
)

// The SIMD level the kernels run at is chosen once from the CPU; the
// environment variable PACPFL_SIMD (or SetLevel) can force a lower one, and
// a level the CPU lacks is refused rather than silently replaced.
func ExampleCurrent() {
	cur := asm.Current() // e.g. avx512 on a Zen 4, avx2 with PACPFL_SIMD=avx2
	fmt.Println("the CPU supports the level in use:", slices.Contains(asm.Supported(), cur))
	_, err := asm.ParseLevel("sse9")
	fmt.Println(err != nil)
	// Output:
	// the CPU supports the level in use: true
	// true
}

// Exp is the vectorised exponential: within about one ulp of math.Exp and
// identical at every SIMD level, with IEEE special values.
func ExampleExp() {
	x := []float64{0, 1, -745.2, math.Inf(1), math.NaN()}
	dst := make([]float64, len(x))
	asm.Exp(dst, x)
	fmt.Printf("%.15f %v %v %v\n", dst[1], dst[2], dst[3], dst[4])
	fmt.Println(math.Abs(dst[1]-math.E) <= 2*math.Nextafter(math.E, 3)-2*math.E)
	// Output:
	// 2.718281828459045 0 +Inf NaN
	// true
}

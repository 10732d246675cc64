package fl

import "github.com/pacpfl/pacpfl/data"

// smallPoly is a small Polynomial data set (8 existing clients with 3
// personalisation samples, 4 new, 50 test points) for fast tests.
func smallPoly(seed uint64) data.PolynomialConfig {
	c := data.DefaultPolynomial()
	c.Existing, c.New, c.Test, c.Extra = 8, 4, 50, 3
	c.Seed = seed
	return c
}

package report

import (
	"fmt"
	"math"
)

// Text is s as "mean ± CI" with format for both figures: "–" for an
// undefined mean, "mean ± –" for an undefined interval (one seed).
func (s Summary) Text(format string) string {
	if math.IsNaN(float64(s.Mean)) {
		return "–"
	}
	if math.IsNaN(float64(s.CI95)) {
		return fmt.Sprintf(format+" ± –", float64(s.Mean))
	}
	return fmt.Sprintf(format+" ± "+format, float64(s.Mean), float64(s.CI95))
}

// text2 is s with two decimals, the precision of the tables.
func text2(s Summary) string { return s.Text("%.2f") }

// DatasetTitle is the name the paper gives the data set with key key
// (polynomial, pv-<variant>-<samples>); other keys are their own title.
func DatasetTitle(key string) string {
	switch key {
	case "polynomial":
		return "Polynomial"
	case "pv-s-150":
		return "PV-S(150)"
	case "pv-ew-150":
		return "PV-EW(150)"
	case "pv-s-610":
		return "PV-S(610)"
	case "pv-ew-610":
		return "PV-EW(610)"
	}
	return key
}

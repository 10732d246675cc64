package report

import (
	"encoding/json"
	"math"

	"github.com/pacpfl/pacpfl/fl"
)

// Float is a figure of a report: a float64 written as null where it is NaN
// or ±Inf, and read back from null as NaN. A metric with nothing to average
// (a group without clients, a run of zero rounds) is NaN, and it has to
// survive the file both ways: encoding/json refuses to write NaN, and a
// reader that took null for 0 would plot a perfect score.
type Float float64

// MarshalJSON writes x, or null where it is not finite.
func (x Float) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(x))
}

// UnmarshalJSON reads a number, or null as NaN.
func (x *Float) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*x = Float(math.NaN())
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*x = Float(f)
	return nil
}

// Floats is xs as report figures.
func Floats(xs []float64) []Float {
	out := make([]Float, len(xs))
	for i, x := range xs {
		out[i] = Float(x)
	}
	return out
}

// Float64s is xs as plain numbers (NaN where the report has null).
func Float64s(xs []Float) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}

// Summary is a figure over the seeds: the mean and the half-width of its
// 95 % confidence interval (fl.Summarise). CI95 is null for one seed, both
// are null for none.
type Summary struct {
	Mean Float `json:"mean"`
	CI95 Float `json:"ci95"`
}

// NewSummary is s as written.
func NewSummary(s fl.Summary) Summary { return Summary{Float(s.Mean), Float(s.CI95)} }

// Summarise is the Summary of the per-seed values xs.
func Summarise(xs []float64) Summary { return NewSummary(fl.Summarise(xs)) }

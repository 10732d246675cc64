package fl

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pacpfl/pacpfl/option"
)

// Temperature is the client temperature β of the Gibbs posterior
// Q*(P, S) ∝ P·exp(−(β/|S|)·Σ_S ℓ) and of ln Z^C_β (docs/math.md §1.2, eq. 5).
//
// With the NLL as loss, β = |S| makes Q* the Bayes posterior and ln Z^C the
// log marginal likelihood (the paper's choice). A smaller β tempers the
// likelihood: the posterior is wider and the PAC-Bayes bounds, whose
// β(b−a)²/8 terms grow with β, tighten.
type Temperature struct {
	Rule  TemperatureRule
	Value float64 // the β of TemperatureValue
}

// TemperatureRule says how β follows from a client's sample count m.
type TemperatureRule int

const (
	TemperatureM     TemperatureRule = iota // β = m (default: Bayes posterior, LML)
	TemperatureSqrt                         // β = √m
	TemperatureValue                        // β = Value for every client
)

// ParseTemperature reads "m", "sqrt" or a positive number.
func ParseTemperature(s string) (Temperature, error) {
	switch strings.TrimSpace(strings.ToLower(s)) {
	case "", "m":
		return Temperature{Rule: TemperatureM}, nil
	case "sqrt":
		return Temperature{Rule: TemperatureSqrt}, nil
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return Temperature{}, fmt.Errorf("β = %q: want m, sqrt or a positive finite number", s)
	}
	return Temperature{Rule: TemperatureValue, Value: v}, nil
}

// For returns β for a client with m samples.
func (t Temperature) For(m int) float64 {
	switch t.Rule {
	case TemperatureSqrt:
		return math.Sqrt(float64(m))
	case TemperatureValue:
		return t.Value
	default:
		return float64(m)
	}
}

// String is the form ParseTemperature reads.
func (t Temperature) String() string {
	switch t.Rule {
	case TemperatureSqrt:
		return "sqrt"
	case TemperatureValue:
		return strconv.FormatFloat(t.Value, 'g', -1, 64)
	default:
		return "m"
	}
}

// Common returns the single β that clients with sample counts ms share
// under t, as Theorem 4.2 and Lemma 4.6 need, or an error if their
// temperatures differ (an *option.FieldError naming the options' Beta).
func (t Temperature) Common(ms []int) (float64, error) {
	if len(ms) == 0 {
		return 0, fmt.Errorf("bounds: no clients")
	}
	b := t.For(ms[0])
	for i, m := range ms {
		if t.For(m) != b {
			return 0, option.Format("", []string{"Beta"}, "bounds: clients use different temperatures (β = %[2]g for "+
				"client 0, %[3]g for client %[4]d with m_i = %[5]d); Theorem 4.2 needs one β: pass a number to %[1]s",
				b, t.For(m), i, m)
		}
	}
	return b, nil
}

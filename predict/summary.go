package predict

import (
	"math"

	"github.com/pacpfl/pacpfl/lml"
)

// Summary is the regression predictive at one point, in the data's units:
// its mean and standard deviation, and its 2.5 % and 97.5 % quantiles (the
// central 95 % interval).
type Summary struct {
	Mean, Std  float64
	Q025, Q975 float64
}

// Summary is row i of the standardised mixture predictive mix (an
// Output's Mixture) in the data's units.
func (p *Predictor) Summary(mix *lml.Mixture, i int) Summary {
	f := p.file
	un := func(v float64) float64 { return f.YMean + f.YStd*v }
	return Summary{
		Mean: un(mix.Mean(i)), Std: f.YStd * math.Sqrt(mix.Variance(i)),
		Q025: un(Quantile(mix, i, 0.025)), Q975: un(Quantile(mix, i, 0.975)),
	}
}

// Quantile is the q-quantile of the mixture predictive at row i (in the
// mixture's units), by bisection on its CDF to a relative width of 1e-13
// of the components' spread: a mixture of Gaussians has no closed-form
// quantile.
func Quantile(mix *lml.Mixture, i int, q float64) float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for κ := range mix.K {
		m, s := mix.Means[i*mix.K+κ], math.Sqrt(mix.Vars[i*mix.K+κ])
		lo, hi = math.Min(lo, m-40*s), math.Max(hi, m+40*s)
	}
	tol := 1e-13 * math.Max(hi-lo, math.SmallestNonzeroFloat64)
	for range 200 {
		mid := lo + (hi-lo)/2
		if hi-lo <= tol || mid == lo || mid == hi {
			break
		}
		if mix.CDF(i, mid) < q {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo + (hi-lo)/2
}

package report

import (
	"fmt"
	"io"
	"math"

	"github.com/pacpfl/pacpfl/fl"
)

// MetricsLegend says what the metrics of the group lines are.
const MetricsLegend = "  (RSMSE: test error relative to the targets' spread, lower is better; " +
	"CE: calibration error, 0 is calibrated)"

// writeShort prints the short report: the setting, the metrics, the DP
// guarantee in one line, one line per bound and per certificate.
func (t *TrainText) writeShort(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("%s\n", t.Setting)
	t.writeTraining(ew)
	ew.printf("existing clients: %s\nnew clients:      %s\n%s\n", t.Existing.text(), t.New.text(), MetricsLegend)
	ew.printf("%s\n", ShortPrivacy(t.Train.Privacy))
	if t.Bounds != nil {
		for _, l := range BoundLines(t.Bounds) {
			ew.printf("%s\n", l)
		}
	}
	writeCertification(ew, t.Certification, false)
	ew.printf("every setting, the derivation of each bound and its terms: --explain\n")
	return ew.err
}

// ShortPrivacy is the DP guarantee of a training run in one line (the
// full statement is fl.Privacy.Statement).
func ShortPrivacy(p fl.Privacy) string {
	if math.IsInf(p.Epsilon, 1) {
		return "differential privacy: none (deterministic SVGD; use --dp-epsilon)"
	}
	s := fmt.Sprintf("differential privacy: (ε = %.4g, δ = %g) for the released particles (%s)", p.Epsilon, p.Delta,
		p.Mechanism)
	if p.NominalEpsilon != p.Epsilon {
		s = fmt.Sprintf("differential privacy: ε = %.4g holds (not the ε = %g asked for), δ = %g, %s mechanism",
			p.Epsilon, p.NominalEpsilon, p.Delta, p.Mechanism)
	}
	if !p.SecretNoise {
		s += "; seeded noise: see --explain"
	}
	return s
}

// BoundLines are the paper's bounds of res (Theorem 4.2, Lemma 4.6) one
// line each: what each bounds, its value and probability, whether it is
// vacuous; and a line for each bound that is missing, saying why.
func BoundLines(res *fl.MethodResult) []string {
	var out []string
	if res.BoundsUnavailable != "" {
		out = append(out, "paper's bounds: not computed: "+res.BoundsUnavailable)
	}
	b, lb := res.Bounds, res.Learned
	if b == nil && lb == nil {
		if res.LearnedUnavailable != "" {
			out = append(out, "paper's bound for the trained hyper-posterior: "+res.LearnedUnavailable)
		}
		return out
	}
	lo, hi := 0.0, 0.0
	if b != nil {
		lo, hi = b.A, b.B
	} else {
		lo, hi = lb.A, lb.B
	}
	out = append(out, fmt.Sprintf("paper's bounds (expected Gaussian NLL of Gibbs posteriors, clipped to [%g, %g]; "+
		"vacuous if ≥ %g):", lo, hi, hi))
	vac := func(v, b float64) string {
		if v >= b {
			return "vacuous"
		}
		return "not vacuous"
	}
	if b != nil {
		prob := fmt.Sprintf("prob. ≥ %.4g %%", 100*(1-b.Delta))
		out = append(out,
			fmt.Sprintf("  Thm 4.2, existing clients, exact Gibbs 𝒬* (ln Z^S estimated): ≈ %.4g, %s; %s; "+
				"not measured", b.Server, prob, vac(b.Server, b.B)),
			fmt.Sprintf("  Lemma 4.6, a new client, exact Gibbs 𝒬* (ln Z^S estimated): ≈ %.4g, %s; %s; "+
				"not measured", b.NewClient, prob, vac(b.NewClient, b.B)))
	}
	if lb != nil {
		out = append(out, fmt.Sprintf("  Thm 4.2, existing clients, trained 𝒬: %.4g, prob. ≥ %.4g %%; %s; "+
			"its training-data term %.4g", lb.Server, 100*(1-lb.Delta-lb.DeltaSampling), vac(lb.Server, lb.B),
			lb.EmpiricalTerm))
	} else if res.LearnedUnavailable != "" {
		out = append(out, "  Thm 4.2, trained 𝒬: "+res.LearnedUnavailable)
	}
	return out
}

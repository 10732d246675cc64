package report

import (
	"fmt"
	"io"

	"github.com/pacpfl/pacpfl/fl"
)

// Certification is what a training run reports of its certificates
// (docs/math.md §2.18): every term of them, or why they are missing, and
// what they cost.
type Certification struct {
	// Certificates are fl.CertifyGP's, with every term of the bounds;
	// nil when Unavailable says why there are none.
	Certificates *fl.GPCertificates `json:"certificates,omitempty"`
	Unavailable  string             `json:"unavailable,omitempty"`
	// Seconds is the time certification took: a second training run on
	// half the existing clients, then the bounds.
	Seconds float64 `json:"seconds"`
}

// CertificateAssumptions is the line above the one-line certificates:
// what all of them assume and the loss they bound.
func CertificateAssumptions(c *fl.GPCertificates) string {
	return fmt.Sprintf("certificates (assume i.i.d. clients and samples; loss = squared error clipped at %g, "+
		"divided by %g, in [0, 1]):", c.Clip, c.Clip)
}

// CertificateLines are the certificates of c, one short line each: which
// model and clients it covers, the loss and its range, the bound, its
// probability and the same loss measured on the test data.
func CertificateLines(c *fl.GPCertificates) []string {
	prob := fmt.Sprintf("prob. ≥ %.4g %%", 100*(1-c.Delta))
	line := func(what string, bound, measured float64) string {
		return fmt.Sprintf("%s: expected clipped sq. error (0–1) ≤ %.3f, %s (measured %.3f)", what, bound, prob,
			measured)
	}
	n := len(c.Split.A) + len(c.Split.B)
	out := []string{
		line(fmt.Sprintf("trained model, clients B (%d of %d)", len(c.Split.B), n), c.Existing.Bound,
			c.ExistingMeasured),
		line(fmt.Sprintf("deployed predictor, all %d existing clients", n), c.TestSetExisting,
			c.ExistingDeployedAll),
	}
	if c.TestSetNew > 0 {
		out = append(out, line("deployed predictor, a new client", c.TestSetNew, c.NewDeployed))
	}
	return out
}

// writeCertification prints the certificates of c: one line each, or
// with explain also their sentences and every term.
func writeCertification(w io.Writer, c *Certification, explain bool) {
	if c == nil {
		return
	}
	if c.Certificates == nil {
		fmt.Fprintf(w, "certificates: not computed: %s\n", c.Unavailable)
		return
	}
	g := c.Certificates
	fmt.Fprintln(w, CertificateAssumptions(g))
	for _, l := range CertificateLines(g) {
		fmt.Fprintf(w, "  %s\n", l)
	}
	fmt.Fprintf(w, "certification: %.1fs (a second training run on the %d clients of A, then the bounds)\n",
		c.Seconds, len(g.Split.A))
	if explain {
		WriteCertificateTerms(w, g)
	}
}

// WriteCertificateTerms prints what each certificate of c states in full
// and every term behind it: the PAC-Bayes bound's loss, KL and confidence
// terms, the grid point it chose, δ's split and the test-set bounds'
// inputs (docs/math.md §2.18).
func WriteCertificateTerms(w io.Writer, c *fl.GPCertificates) {
	e := c.Existing
	fmt.Fprintf(w, "certificates in full (docs/math.md §2.18; δ = %g: δ/2 for the PAC-Bayes bound, δ/4 for each "+
		"of its two Monte Carlo means, δ for each test-set bound):\n", c.Delta)
	for _, s := range c.Sentences() {
		fmt.Fprintf(w, "  %s\n", s)
	}
	fmt.Fprintf(w, "  PAC-Bayes (kl form, both levels), clients B %v, hyper-prior trained on A %v:\n", c.Split.B,
		c.Split.A)
	fmt.Fprintf(w, "    bound %.4g = kl⁻¹(empirical loss upper %.4g, complexity %.4g); empirical loss: "+
		"Monte Carlo mean %.4g over %d draws of 𝒬, empirical-Bernstein upper %.4g\n",
		e.Bound, e.LossUpper, e.Complexity, e.Loss, e.Draws, e.LossUpper)
	fmt.Fprintf(w, "    complexity %.4g = (KL(𝒬‖𝒫_A) ≤ %.4g + E_𝒬 Σ_i KL(Q_i‖P) upper %.4g (mean %.4g) + "+
		"ln(2√N·G_𝒫/(δ/2)) %.4g) / N %d (%d clients)\n",
		e.Complexity, e.HyperKL, e.ClientKLUpper, e.ClientKL, e.LogTerm, e.N, e.Clients)
	fmt.Fprintf(w, "    chosen on %d grid points: hyper-posterior width s_Q %g, hyper-prior width s_P %g, "+
		"temperature β/m %g; KL cap %.4g, %d fallbacks; δ %g\n",
		e.Grid, e.Width, e.PriorWidth, e.Scale, e.KLCap, e.Fallbacks, e.Delta)
	fmt.Fprintf(w, "    measured on B's test data: certified (randomised) model %.4g, deployed predictor %.4g\n",
		c.ExistingMeasured, c.ExistingDeployed)
	fmt.Fprintf(w, "  test set (Langford, kl form): existing clients %.4g (pooled test loss %.4g)", c.TestSetExisting,
		c.ExistingDeployedAll)
	if c.TestSetNew > 0 {
		fmt.Fprintf(w, "; a new client %.4g (mean of the new clients' test losses %.4g); these new clients, "+
			"pooled, %.4g", c.TestSetNew, c.NewDeployed, c.TestSetNewPooled)
	}
	fmt.Fprintln(w)
}

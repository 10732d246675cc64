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
	// TestSet are the test-set certificates of the deployed predictor
	// (docs/math.md §2.18.4), computed on every run: they need only the
	// test data.
	TestSet *fl.TestSetCertificates `json:"test_set,omitempty"`
	// TestSetUnavailable says why TestSet is nil.
	TestSetUnavailable string `json:"test_set_unavailable,omitempty"`
	// Certificates are fl.CertifyGP's (train --certify), with every term
	// of the PAC-Bayes bound; their test-set part is TestSet, reported
	// there only. Nil when not asked for, or when Unavailable says why.
	Certificates *fl.GPCertificates `json:"certificates,omitempty"`
	Unavailable  string             `json:"unavailable,omitempty"`
	// Seconds is the time the PAC-Bayes certificate took: a second
	// training run on half the existing clients, then the bound.
	Seconds float64 `json:"seconds,omitempty"`
}

// TestSetAssumptions is the line above the one-line test-set
// certificates: where they come from and what they assume.
func TestSetAssumptions(ts *fl.TestSetCertificates) string {
	return fmt.Sprintf("certificates from the test data, prob. ≥ %.4g %% each (test data unseen in training; "+
		"test points, new clients i.i.d.):", 100*(1-ts.Delta))
}

// TestSetLines are the test-set certificates of ts, one short line each:
// which predictor and clients, the loss, the bound and the same loss
// measured on the test data. model names the predictor ("deployed
// predictor", "personalised BNNs").
func TestSetLines(ts *fl.TestSetCertificates, model string) []string {
	loss := "0–1 error"
	if ts.Loss != "zero_one" {
		loss = fmt.Sprintf("sq. error clipped at %g", ts.Clip)
		if ts.Clip != 1 {
			loss += fmt.Sprintf(", /%g", ts.Clip)
		}
	}
	line := func(who string, t *fl.TestSetTerms) string {
		return fmt.Sprintf("%s, %s: expected %s ≤ %.3f (measured %.3f)", model, who, loss,
			t.Bound, t.Mean)
	}
	out := []string{line("existing clients", &ts.Existing)}
	if ts.New != nil {
		// The bound is over new clients, not their test points: few of
		// them make it loose, and the line says how many.
		who := fmt.Sprintf("a new client (%d new clients)", ts.New.N)
		if ts.New.N == 1 {
			who = "a new client (1 new client)"
		}
		out = append(out, line(who, ts.New))
	}
	return out
}

// CertificateAssumptions is the line above the one-line PAC-Bayes
// certificate: what it assumes and the loss it bounds.
func CertificateAssumptions(c *fl.GPCertificates) string {
	return fmt.Sprintf("PAC-Bayes certificate (assumes i.i.d. clients and samples; loss = squared error clipped "+
		"at %g, divided by %g, in [0, 1]):", c.Clip, c.Clip)
}

// CertificateLines are the PAC-Bayes certificates of c, one short line
// each: which model and clients it covers, the loss and its range, the
// bound, its probability and the same loss measured on the test data.
func CertificateLines(c *fl.GPCertificates) []string {
	n := len(c.Split.A) + len(c.Split.B)
	return []string{fmt.Sprintf("trained model, clients B (%d of %d): expected clipped sq. error (0–1) ≤ %.3f, "+
		"prob. ≥ %.4g %% (measured %.3f)", len(c.Split.B), n, c.Existing.Bound, 100*(1-c.Delta),
		c.ExistingMeasured)}
}

// writeCertification prints the certificates of c: one line each, or
// with explain also their sentences and every term.
func writeCertification(w io.Writer, c *Certification, explain bool) {
	if c == nil {
		return
	}
	switch {
	case c.TestSet != nil:
		fmt.Fprintln(w, TestSetAssumptions(c.TestSet))
		model := "deployed predictor"
		if c.TestSet.Loss == "zero_one" {
			model = "personalised BNNs"
		}
		for _, l := range TestSetLines(c.TestSet, model) {
			fmt.Fprintf(w, "  %s\n", l)
		}
		if explain {
			WriteTestSetTerms(w, c.TestSet)
		}
	case c.TestSetUnavailable != "":
		fmt.Fprintf(w, "certificates from the test data: not computed: %s\n", c.TestSetUnavailable)
	}
	if c.Certificates == nil {
		if c.Unavailable != "" {
			fmt.Fprintf(w, "PAC-Bayes certificate: not computed: %s\n", c.Unavailable)
		}
		return
	}
	g := c.Certificates
	fmt.Fprintln(w, CertificateAssumptions(g))
	for _, l := range CertificateLines(g) {
		fmt.Fprintf(w, "  %s\n", l)
	}
	fmt.Fprintf(w, "certification: %.1fs (a second training run on the %d clients of A, then the bound)\n",
		c.Seconds, len(g.Split.A))
	if explain {
		WriteCertificateTerms(w, g)
	}
}

// WriteTestSetTerms prints what each test-set certificate of ts states in
// full and its terms: the number of losses, their mean, δ and the bound
// kl⁻¹(mean, ln(1/δ)/n) (docs/math.md §2.18.4).
func WriteTestSetTerms(w io.Writer, ts *fl.TestSetCertificates) {
	fmt.Fprintf(w, "test-set certificates in full (docs/math.md §2.18.4; Langford's bound, kl form, δ = %g each):\n",
		ts.Delta)
	for _, s := range ts.Sentences() {
		fmt.Fprintf(w, "  %s\n", s)
	}
	terms := func(what string, t *fl.TestSetTerms) {
		fmt.Fprintf(w, "    %s: bound %.4g = kl⁻¹(mean %.4g, ln(1/δ)/n with n = %d, δ = %g)\n", what, t.Bound,
			t.Mean, t.N, t.Delta)
	}
	terms("existing clients, pooled test points", &ts.Existing)
	if ts.New != nil {
		terms("a new client, one mean loss per new client", ts.New)
		terms("these new clients only, pooled test points", ts.NewPooled)
	}
}

// WriteCertificateTerms prints what the PAC-Bayes certificate of c states
// in full and every term behind it: its loss, KL and confidence terms, the
// grid point it chose and δ's split (docs/math.md §2.18), and the test-set
// certificates of c when it holds them.
func WriteCertificateTerms(w io.Writer, c *fl.GPCertificates) {
	e := c.Existing
	fmt.Fprintf(w, "PAC-Bayes certificate in full (docs/math.md §2.18; δ = %g: δ/2 for the bound, δ/4 for each "+
		"of its two Monte Carlo means):\n", c.Delta)
	pb := *c
	pb.TestSet = nil // its sentences come with its terms, below
	for _, s := range pb.Sentences() {
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
	if c.TestSet != nil {
		WriteTestSetTerms(w, c.TestSet)
	}
}

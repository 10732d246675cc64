package report

import (
	"fmt"
	"io"
	"math"

	"github.com/pacpfl/pacpfl/fl"
)

// NoRounds is the training line of a run without rounds.
const NoRounds = "training: none (--rounds 0): the particles are the initial draws from the hyper-prior"

// TrainText is the text report of a PAC-PFL training run, as pacpfl train
// and pacpfl server print it: a header, the training rounds, the test
// metrics of the existing and the new clients, the DP guarantee and the
// bounds.
type TrainText struct {
	Header string // the first line of --explain: data set and configuration
	// Setting is the first line of the short report (a GP run): the data
	// set and the main settings. Without it the report is the long one.
	Setting string
	// Explain prints the long report: every setting, the derivation of
	// each bound and every term of the certificates.
	Explain bool
	// LML names the figure of the training line: "mean client LML" (GP)
	// or "mean client LML estimate (38)" (BNN).
	LML   string
	Train *fl.Result
	// NoRounds: the run had none; Private: a differentially private run,
	// whose client LMLs are not shown (the guarantee does not cover them).
	NoRounds, Private bool
	Existing, New     GroupLine
	// Bounds are printed with what each bounds and why one is missing;
	// BNNBounds, for BNN clients on Fashion-MNIST, with δ and the loss
	// range instead.
	Bounds    *fl.MethodResult
	BNNBounds *fl.Bounds
	// Certification holds the certificates of a GP run (nil: not asked
	// for).
	Certification *Certification
}

// GroupLine is one group's line of the text report.
type GroupLine struct {
	Clients int
	Metrics string // the metrics; not shown for a group without clients
}

// RegressionLine is a group of GP clients: mean RSMSE and CE.
func RegressionLine(clients int, rsmse, ce float64) GroupLine {
	return GroupLine{clients, "RSMSE " + Metric("%.3f", rsmse) + "  CE " + Metric("%.3f", ce)}
}

// ClassLine is a group of BNN clients: mean accuracy (%) and CE.
func ClassLine(clients int, accuracy, ce float64) GroupLine {
	return GroupLine{clients, "accuracy " + Metric("%.2f%%", accuracy) + "  CE " + Metric("%.4f", ce)}
}

func (g GroupLine) text() string {
	if g.Clients == 0 {
		return "none"
	}
	return g.Metrics
}

// Metric formats x, or "–" for an undefined (NaN) figure: printed, a NaN
// looks like a failed result of a run that succeeded.
func Metric(format string, x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return fmt.Sprintf(format, x)
}

// WriteText prints the report: the short one (a line for the setting, the
// metrics, one line per bound and certificate) unless Explain is set or
// there is no Setting.
func (t *TrainText) WriteText(w io.Writer) error {
	if !t.Explain && t.Setting != "" && t.BNNBounds == nil {
		return t.writeShort(w)
	}
	ew := &errWriter{w: w}
	ew.printf("%s\n", t.Header)
	t.writeTraining(ew)
	ew.printf("existing clients: %s\nnew clients:      %s\n", t.Existing.text(), t.New.text())
	WritePrivacy(ew, t.Train.Privacy)
	if t.Bounds != nil {
		WriteBounds(ew, t.Bounds)
	}
	if bd := t.BNNBounds; bd != nil {
		ew.printf("bounds (δ=%g, %s):\n", bd.Delta, bd.Description)
		ew.printf("  ln Z^S ≈ %.4g, λ = %.4g, ε_i of the exact Gibbs hyper-posterior ≤ %.4g\n",
			bd.LogZS, bd.Lambda, bd.EpsilonMax)
		ew.printf("  server-level (Thm 4.2):  %.4g   (loss range [%g, %.3g])\n  new-client (Lemma 4.6):  %.4g\n",
			bd.Server, bd.A, bd.B, bd.NewClient)
	}
	writeCertification(ew, t.Certification, t.Explain)
	return ew.err
}

// WritePrivacy prints the DP guarantee of a training run.
func WritePrivacy(w io.Writer, p fl.Privacy) {
	if !math.IsInf(p.Epsilon, 1) {
		fmt.Fprintf(w, "differential privacy: %s\n", p.Statement)
		return
	}
	fmt.Fprintln(w, "differential privacy: none (deterministic SVGD; use --dp-epsilon)")
}

// WriteBounds prints both kinds of bound of res, each saying what it
// bounds and whether it is vacuous (above b, the largest loss), and why
// one is missing.
func WriteBounds(w io.Writer, res *fl.MethodResult) {
	vac := func(v, b float64) string {
		if v >= b {
			return fmt.Sprintf("  (vacuous: ≥ b = %g)", b)
		}
		return ""
	}
	if res.BoundsUnavailable != "" {
		fmt.Fprintf(w, "bounds: not computed: %s\n", res.BoundsUnavailable)
	}
	if b := res.Bounds; b != nil {
		fmt.Fprintf(w, "bounds %s:\n", b.Description)
		fmt.Fprintf(w, "  ln Z^S ≈ %.4g, λ = %.4g, ε_i of sampling from 𝒬* ≤ %.4g\n", b.LogZS, b.Lambda, b.EpsilonMax)
		fmt.Fprintf(w, "  server-level (Thm 4.2) at 𝒬*:  %.4g%s\n", b.Server, vac(b.Server, b.B))
		fmt.Fprintf(w, "  new-client (Lemma 4.6) at 𝒬*:  %.4g%s\n", b.NewClient, vac(b.NewClient, b.B))
	}
	if lb := res.Learned; lb != nil {
		fmt.Fprintf(w, "bound for the trained hyper-posterior: %s\n", lb.Description)
		fmt.Fprintf(w, "  server-level (Thm 4.2), trained 𝒬:  %.4g = %.4g (loss) + %.4g (sampling) + "+
			"%.4g × KL %.4g + %.4g (constants)%s\n",
			lb.Server, lb.EmpiricalTerm, lb.SamplingTerm, lb.KLWeight, lb.KL, lb.Constants, vac(lb.Server, lb.B))
	} else if res.LearnedUnavailable != "" {
		fmt.Fprintf(w, "bound for the trained hyper-posterior: %s\n", res.LearnedUnavailable)
	}
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, a ...any) { fmt.Fprintf(e, format, a...) }

// writeTraining prints the training line of both reports: the time and
// the clients' mean LML of the last rounds, which a DP run does not show.
func (t *TrainText) writeTraining(ew *errWriter) {
	switch {
	case t.NoRounds:
		ew.printf("%s\n", NoRounds)
	case t.Private:
		ew.printf("training: %.1fs (client LMLs not shown: they are not covered by the DP guarantee)\n",
			t.Train.Elapsed.Seconds())
	default:
		ew.printf("training: %.1fs, %s of the last rounds %s\n", t.Train.Elapsed.Seconds(), t.LML,
			Metric("%.3f", FinalLML(t.Train.MeanLML)))
	}
}

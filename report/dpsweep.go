package report

import (
	"fmt"
	"io"
	"math"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/harness"
)

// NewDPSweep is the report of hr, a DP sweep on the data set named dataset
// with clients existing clients: hr.Methods[i] is the run at guaranteed
// level eps[i], 0 the non-private run (ε +Inf in the report), with
// mechanism (and δ for the Gaussian one). Seconds is left for the
// caller's wall time.
func NewDPSweep(dataset string, clients int, eps []float64, mechanism string, delta float64,
	hr *harness.Report) (*Sweep, error) {
	if len(eps) != len(hr.Methods) {
		return nil, fmt.Errorf("report: %d privacy levels for %d runs", len(eps), len(hr.Methods))
	}
	s := &Sweep{Dataset: dataset, Seeds: hr.Seeds, Clients: clients}
	for i, mr := range hr.Methods {
		if len(mr.Results) == 0 || mr.Results[0] == nil {
			return nil, fmt.Errorf("report: privacy level %d has no run", i)
		}
		l := DPLevel{Epsilon: Float(eps[i]), Mechanism: mechanism, Statement: mr.Results[0].Train.Privacy.Statement,
			Seconds: mr.Seconds, PerSeed: PerSeed(mr.PerSeed)}
		l.Existing, l.New = Groups(mr)
		switch {
		case eps[i] == 0:
			l.Epsilon, l.Mechanism = Float(math.Inf(1)), ""
		case mechanism == string(fl.DPGaussian):
			l.Delta = delta
		}
		s.DP = append(s.DP, l)
	}
	return s, nil
}

// WriteDPTable writes a DP sweep as pacpfl prints it: a row per level, the
// privacy statement of the first private level and the wall time;
// mechanism names the private rows' mechanism.
func (s *Sweep) WriteDPTable(w io.Writer, mechanism string) {
	fmt.Fprintf(w,
		"PAC-PFL under differential privacy (%s mechanism), %s, %d existing clients, mean ± 95%% CI over %d seeds; "+
			"ε is the guarantee that holds (see the statement below)\n\n", mechanism, DatasetTitle(s.Dataset),
		s.Clients,
		len(s.Seeds))
	fmt.Fprintln(w, "| ε | RSMSE existing | RSMSE new | CE existing | CE new |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, x := range s.DP {
		lab := "no DP"
		if !math.IsInf(float64(x.Epsilon), 1) {
			lab = fmt.Sprintf("%g", float64(x.Epsilon))
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", lab, text2(x.Existing.RSMSE), text2(x.New.RSMSE),
			text2(x.Existing.CE), text2(x.New.CE))
	}
	if len(s.DP) > 1 {
		fmt.Fprintf(w, "\nguarantee (ε = %g shown): %s\n", float64(s.DP[1].Epsilon), s.DP[1].Statement)
	}
	fmt.Fprintf(w, "wall time %.0fs\n", s.Seconds)
}

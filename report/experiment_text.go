package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/harness"
	"github.com/pacpfl/pacpfl/methods"
	"github.com/pacpfl/pacpfl/papers"
)

// WriteText writes the report as pacpfl experiment polynomial and pv print
// it: the methods' rows (in the order of names) beside the paper's Table 6,
// the mixtures' mode specialisation, the setting (clients existing and new
// clients) and the timings.
func (r *Experiment) WriteText(w io.Writer, names []string, clients, newClients int) {
	r.writeTable(w, names)
	for _, m := range names {
		if line := ModeLine(perSeed64(r.Methods[m].PerSeed)); line != "" {
			fmt.Fprintf(w, "%s %s\n", methods.Label(m), line)
		}
	}
	first, n := uint64(0), uint64(len(r.Seeds))
	if n > 0 {
		first = r.Seeds[0]
	}
	fmt.Fprintf(w,
		"\n%d seeds (%d..%d), %d existing and %d new clients (the paper's Table 6: %d and %d), wall time %.0fs\n",
		n, first, first+n-1, clients, newClients, papers.Table6Clients, papers.Table6NewClients, r.Seconds)
	fmt.Fprint(w, "time per method (all seeds):")
	for _, m := range names {
		fmt.Fprintf(w, " %s %.0fs", methods.Label(m), r.Methods[m].Seconds)
	}
	fmt.Fprintln(w)
	if strings.HasPrefix(r.Dataset, "pv-") {
		fmt.Fprintln(w, "PV is simulated here (no PVGIS data): see docs/math.md, \"PV data set\", for the simulator "+
			"and its deviations from the paper")
	}
}

func (r *Experiment) writeTable(w io.Writer, names []string) {
	fmt.Fprintf(w, "%s: mean ± 95%% CI over %d seeds (ours | paper, Table 6); CE only for probabilistic methods\n\n",
		DatasetTitle(r.Dataset), len(r.Seeds))
	fmt.Fprintln(w, "| method | RSMSE existing | RSMSE new | CE existing | CE new |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, m := range names {
		x := r.Methods[m]
		p, ok := papers.Table6(r.Dataset, m)
		if !ok {
			nan := fl.Summary{Mean: math.NaN(), CI95: math.NaN()}
			p = papers.Table6Row{ExistingRSMSE: nan, ExistingCE: nan, NewRSMSE: nan, NewCE: nan}
		}
		fmt.Fprintf(w, "| %s | %s (paper %s) | %s (paper %s) | %s (paper %s) | %s (paper %s) |\n", methods.Label(m),
			text2(x.Existing.RSMSE), text2(NewSummary(p.ExistingRSMSE)), text2(x.New.RSMSE),
			text2(NewSummary(p.NewRSMSE)),
			text2(x.Existing.CE), text2(NewSummary(p.ExistingCE)), text2(x.New.CE), text2(NewSummary(p.NewCE)))
	}
}

func perSeed64(v map[string][]Float) map[string][]float64 {
	out := make(map[string][]float64, len(v))
	for k, xs := range v {
		out[k] = Float64s(xs)
	}
	return out
}

// ModeLine describes the mode specialisation among a method's per-seed
// values (harness.SeedValues), or is empty when there is none.
func ModeLine(v map[string][]float64) string {
	if len(v[harness.ExistingModePurity]) == 0 {
		return ""
	}
	return fmt.Sprintf("mixture weights against the data's modes (purity, fl.Specialisation: 1 = each particle "+
		"serves one mode; chance = no specialisation): existing %s (chance %.2f), new %s (chance %.2f)",
		text2(Summarise(v[harness.ExistingModePurity])), fl.Mean(v[harness.ExistingModeChance]),
		text2(Summarise(v[harness.NewModePurity])), fl.Mean(v[harness.NewModeChance]))
}

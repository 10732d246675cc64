package report

import (
	"fmt"
	"io"
	"math"
)

// DPSweep is the --json report of pacpfl experiment --dp-sweep: PAC-PFL's
// utility at each guaranteed ε, beside the non-private run.
type DPSweep struct {
	Dataset string       `json:"dataset"`
	Seeds   []uint64     `json:"seeds"`
	Clients int          `json:"clients"`
	Rows    []DPSweepRow `json:"dp_sweep"`
	Seconds float64      `json:"seconds"`
	// Mechanism is the DP mechanism of the private rows (the text's).
	Mechanism string `json:"-"`
}

// DPSweepRow is one privacy level of a DPSweep.
type DPSweepRow struct {
	Epsilon   Float   `json:"epsilon"` // the guaranteed ε; +Inf (null): the non-private run
	Delta     float64 `json:"delta"`
	Mechanism string  `json:"mechanism"`
	Statement string  `json:"statement"`
	Existing  Group   `json:"existing"`
	New       Group   `json:"new"`
	Seconds   float64 `json:"seconds"`
	// PerSeed: metric key → one value per seed (the group averages).
	PerSeed map[string][]Float `json:"per_seed"`
}

// WriteText writes the sweep as pacpfl prints it: a row per level, the
// privacy statement of the first private level and the wall time.
func (r *DPSweep) WriteText(w io.Writer) {
	fmt.Fprintf(w, "PAC-PFL under differential privacy (%s mechanism), %s, %d existing clients, mean ± 95%% CI over %d seeds; ε is the guarantee that holds (see the statement below)\n\n",
		r.Mechanism, DatasetTitle(r.Dataset), r.Clients, len(r.Seeds))
	fmt.Fprintln(w, "| ε | RSMSE existing | RSMSE new | CE existing | CE new |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, x := range r.Rows {
		lab := "no DP"
		if !math.IsInf(float64(x.Epsilon), 1) {
			lab = fmt.Sprintf("%g", float64(x.Epsilon))
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", lab, text2(x.Existing.RSMSE), text2(x.New.RSMSE), text2(x.Existing.CE), text2(x.New.CE))
	}
	if len(r.Rows) > 1 {
		fmt.Fprintf(w, "\nguarantee (ε = %g shown): %s\n", float64(r.Rows[1].Epsilon), r.Rows[1].Statement)
	}
	fmt.Fprintf(w, "wall time %.0fs\n", r.Seconds)
}

package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/pacpfl/pacpfl/harness"
)

// Sweep is the --json report of pacpfl experiment --k-sweep and --dp-sweep:
// PAC-PFL's test metrics at each setting of one parameter, over the seeds.
// Exactly one of K and DP is set; pacpfl plot sweep draws either.
type Sweep struct {
	Dataset string    `json:"dataset"` // polynomial, pv-s-150, …
	Seeds   []uint64  `json:"seeds"`
	Clients int       `json:"clients"` // the existing clients
	K       []KLevel  `json:"k_sweep,omitempty"`
	DP      []DPLevel `json:"dp_sweep,omitempty"`
	Seconds float64   `json:"seconds"` // wall time of the whole sweep
}

// KLevel is one number of particles k of a k-sweep.
type KLevel struct {
	K        int     `json:"k"`
	Existing Group   `json:"existing"`
	New      Group   `json:"new"`
	Seconds  float64 `json:"seconds"`
	// PerSeed: metric key → one value per seed (the group averages, and
	// the mode specialisation for k ≥ 2 on data with known modes).
	PerSeed map[string][]Float `json:"per_seed"`
}

// DPLevel is one privacy level of a DP sweep.
type DPLevel struct {
	// Epsilon is the guaranteed ε; for the non-private run it is not
	// finite: null in the file, NaN when read back.
	Epsilon   Float   `json:"epsilon"`
	Delta     float64 `json:"delta"`     // the Gaussian mechanism's δ, else 0
	Mechanism string  `json:"mechanism"` // "" for the non-private run
	Statement string  `json:"statement"` // the privacy statement of the first seed's run
	Existing  Group   `json:"existing"`
	New       Group   `json:"new"`
	Seconds   float64 `json:"seconds"`
	// PerSeed: metric key → one value per seed (the group averages).
	PerSeed map[string][]Float `json:"per_seed"`
}

// undefinedGroup is a Group with every figure NaN: what a level reads as
// where its file leaves a group or a figure out, so that a missing figure
// is never taken for 0.
func undefinedGroup() Group {
	nan := Float(math.NaN())
	return Group{RSMSE: Summary{nan, nan}, CE: Summary{nan, nan}}
}

// UnmarshalJSON reads a level, a group or figure it leaves out as NaN.
func (l *KLevel) UnmarshalJSON(b []byte) error {
	type plain KLevel
	p := plain{Existing: undefinedGroup(), New: undefinedGroup()}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*l = KLevel(p)
	return nil
}

// UnmarshalJSON reads a level, a group or figure it leaves out as NaN and
// a level without an ε as the non-private run.
func (l *DPLevel) UnmarshalJSON(b []byte) error {
	type plain DPLevel
	p := plain{Epsilon: Float(math.NaN()), Existing: undefinedGroup(), New: undefinedGroup()}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*l = DPLevel(p)
	return nil
}

// NewKSweep is the report of hr, a k-sweep on the data set named dataset
// with clients existing clients: hr.Methods[i] is the run with ks[i]
// particles. Seconds is left for the caller's wall time.
func NewKSweep(dataset string, clients int, ks []int, hr *harness.Report) (*Sweep, error) {
	if len(ks) != len(hr.Methods) {
		return nil, fmt.Errorf("report: %d values of k for %d runs", len(ks), len(hr.Methods))
	}
	s := &Sweep{Dataset: dataset, Seeds: hr.Seeds, Clients: clients, K: make([]KLevel, len(ks))}
	for i, mr := range hr.Methods {
		l := KLevel{K: ks[i], Seconds: mr.Seconds, PerSeed: PerSeed(mr.PerSeed)}
		l.Existing, l.New = Groups(mr)
		s.K[i] = l
	}
	return s, nil
}

// WriteText writes the sweep as pacpfl prints it: a DP sweep by
// WriteDPTable with its private levels' mechanism; a k-sweep by
// WriteKTable, with each level's mode specialisation (ModeLine of its
// per-seed values), then the wall time.
func (s *Sweep) WriteText(w io.Writer) {
	if len(s.DP) > 0 {
		mechanism := ""
		for _, l := range s.DP {
			mechanism = cmp.Or(mechanism, l.Mechanism)
		}
		s.WriteDPTable(w, mechanism)
		return
	}
	s.WriteKTable(w, func(i int) string {
		v := make(map[string][]float64, len(s.K[i].PerSeed))
		for key, xs := range s.K[i].PerSeed {
			v[key] = Float64s(xs)
		}
		return ModeLine(v)
	})
	fmt.Fprintf(w, "wall time %.0fs\n", s.Seconds)
}

// WriteKTable writes a k-sweep, titled by its data set, as a Markdown table of the groups' RSMSE
// and CE (mean ± 95 % CI) and time per k, then modes(i) for each level i
// where it is not empty (the mode specialisation line). Wall time is the
// caller's.
func (s *Sweep) WriteKTable(w io.Writer, modes func(i int) string) {
	fmt.Fprintf(w, "PAC-PFL against the number of particles k (the paper's Fig. 3), %s, %d existing clients, "+
		"mean ± 95%% CI over %d seeds\n\n", DatasetTitle(s.Dataset), s.Clients, len(s.Seeds))
	fmt.Fprintln(w, "| k | RSMSE existing | RSMSE new | CE existing | CE new | time |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, l := range s.K {
		fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %.0fs |\n", l.K,
			l.Existing.RSMSE.Text("%.2f"), l.New.RSMSE.Text("%.2f"),
			l.Existing.CE.Text("%.2f"), l.New.CE.Text("%.2f"), l.Seconds)
	}
	for i, l := range s.K {
		if line := modes(i); line != "" {
			fmt.Fprintf(w, "k = %d: %s\n", l.K, line)
		}
	}
}

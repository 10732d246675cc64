package main

import (
	"fmt"
	"io"
	"time"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/harness"
	"github.com/pacpfl/pacpfl/methods"
	"github.com/pacpfl/pacpfl/report"
)

// sweepLevel is one setting of a PAC-PFL sweep (--dp-sweep, --k-sweep): a
// row label and the training flags at that setting.
type sweepLevel struct {
	label   string
	hideLML bool // under DP the client LMLs are not covered by the guarantee
	flags   trainFlags
}

// sweepResult is one level's metrics over the seeds.
type sweepResult struct {
	existing, new report.Group
	seconds       float64
	statement     string // the privacy statement of the first seed's run
	// perSeed holds the per-seed group averages (existing_rsmse, …) and,
	// for mixtures on data with modes, the mode specialisation (harness.SeedValues).
	perSeed map[string][]float64
}

// sweepRuns trains PAC-PFL at every level on every seed (the data of a seed
// shared by all levels) and summarises each level. Every level's options
// are validated on the first seed's data before any training.
func sweepRuns(name string, levels []sweepLevel, seeds int, seedBase uint64, quiet bool, stderr io.Writer) ([]sweepResult, []uint64, error) {
	f0 := &levels[0].flags
	ds0, err := f0.dataset(seedBase)
	if err != nil {
		return nil, nil, err
	}
	exp := harness.Experiment{Data: f0.dataset, Seeds: seedRange(seeds, seedBase)}
	byName := map[string]*sweepLevel{}
	for i := range levels {
		lv := &levels[i]
		lv.flags.boundSamples, lv.flags.learnedSamples = 0, 0
		hm, err := lv.flags.pacpflMethod(fl.MethodPACPFL, ds0, seedBase)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", lv.label, err)
		}
		m := hm.(methods.PACPFL)
		m.Key = lv.label
		exp.Methods = append(exp.Methods, m)
		byName[lv.label] = lv
	}
	obs := &progressObserver{w: stderr, quiet: quiet,
		label: func(ev harness.Event) string {
			return fmt.Sprintf("%s seed %d/%d %s", name, ev.SeedIndex+1, ev.Seeds, ev.Method)
		},
		hideLML: func(ev harness.Event) bool { return byName[ev.Method].hideLML },
	}
	ctx, stop := signalContext()
	defer stop()
	rep, err := harness.Run(ctx, exp, obs)
	if err != nil {
		return nil, nil, err
	}
	out := make([]sweepResult, len(levels))
	for li, mr := range rep.Methods {
		out[li] = sweepResult{
			seconds:   mr.Seconds,
			statement: mr.Results[0].Train.Privacy.Statement,
			perSeed:   mr.PerSeed,
		}
		out[li].existing, out[li].new = report.Groups(mr)
	}
	return out, rep.Seeds, nil
}

// kSweepRow is one k of `experiment --k-sweep`.
type kSweepRow struct {
	K        int          `json:"k"`
	Existing report.Group `json:"existing"`
	New      report.Group `json:"new"`
	Seconds  float64      `json:"seconds"`
	// PerSeed: metric key → one value per seed (the group averages, and
	// the mode specialisation for k ≥ 2 on data with known modes).
	PerSeed map[string][]report.Float `json:"per_seed"`
}

type kSweepReport struct {
	Dataset string      `json:"dataset"`
	Seeds   []uint64    `json:"seeds"`
	Clients int         `json:"clients"`
	Rows    []kSweepRow `json:"k_sweep"`
	Seconds float64     `json:"seconds"`
}

// runKSweep trains PAC-PFL with each number of particles k on every seed:
// the paper's Fig. 3 (existing-client RSMSE against k).
func runKSweep(ks []int, f *trainFlags, seeds int, seedBase uint64, quiet bool, jsonPath string, stdout, stderr io.Writer) int {
	stdout, jsonOut := reportStreams(jsonPath, stdout, stderr)
	start := time.Now()
	var levels []sweepLevel
	for _, k := range ks {
		g := *f
		g.k = k
		levels = append(levels, sweepLevel{label: fmt.Sprintf("k=%d", k), flags: g})
	}
	res, seedList, err := sweepRuns("k-sweep", levels, seeds, seedBase, quiet, stderr)
	if err != nil {
		return fail(stderr, "experiment", err)
	}
	rep := kSweepReport{Dataset: f.datasetKey(), Seeds: seedList, Clients: f.clients}
	fmt.Fprintf(stdout, "PAC-PFL against the number of particles k (the paper's Fig. 3), %s, %d existing clients, mean ± 95%% CI over %d seeds\n\n", datasetTitle(rep.Dataset), f.clients, seeds)
	fmt.Fprintln(stdout, "| k | RSMSE existing | RSMSE new | CE existing | CE new | time |")
	fmt.Fprintln(stdout, "|---|---|---|---|---|---|")
	for i, k := range ks {
		r := res[i]
		rep.Rows = append(rep.Rows, kSweepRow{K: k, Existing: r.existing, New: r.new, Seconds: r.seconds, PerSeed: report.PerSeed(r.perSeed)})
		fmt.Fprintf(stdout, "| %d | %s | %s | %s | %s | %.0fs |\n", k, fmtSummary(r.existing.RSMSE), fmtSummary(r.new.RSMSE), fmtSummary(r.existing.CE), fmtSummary(r.new.CE), r.seconds)
	}
	for i, k := range ks {
		if line := modeLine(res[i].perSeed); line != "" {
			fmt.Fprintf(stdout, "k = %d: %s\n", k, line)
		}
	}
	rep.Seconds = time.Since(start).Seconds()
	fmt.Fprintf(stdout, "wall time %.0fs\n", rep.Seconds)
	if jsonPath != "" {
		if err := writeJSON(jsonOut, jsonPath, rep); err != nil {
			return fail(stderr, "experiment", err)
		}
	}
	return exitOK
}

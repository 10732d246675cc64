package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
)

func init() {
	register(&command{
		name:    "experiment",
		summary: "compare PAC-PFL with its baselines over several seeds (pacpfl experiment polynomial|fmnist)",
		run:     runExperiment,
	})
}

// paperTable6 is the Polynomial column of the paper's Table 6: RSMSE and CE,
// existing / new clients, mean ± 95% CI over 5 seeds.
var paperTable6 = map[string][4]fl.Summary{
	fl.MethodPACPFL:  {{Mean: 0.58, CI95: 0.05}, {Mean: 0.14, CI95: 0.02}, {Mean: 0.65, CI95: 0.02}, {Mean: 0.16, CI95: 0.01}},
	fl.MethodPFedGP:  {{Mean: 0.80, CI95: 0.15}, {Mean: 0.12, CI95: 0.01}, {Mean: 0.87, CI95: 0.41}, {Mean: 0.15, CI95: 0.02}},
	fl.MethodVanilla: {{Mean: 0.73, CI95: 0.07}, {Mean: 0.18, CI95: 0.01}, {Mean: 0.76, CI95: 0.05}, {Mean: 0.24, CI95: 0.03}},
	fl.MethodPooled:  {{Mean: 2.33, CI95: 0.55}, {Mean: 0.33, CI95: 0.04}, {Mean: 2.32, CI95: 0.37}, {Mean: 0.36, CI95: 0.02}},
}

// paperTable6Clients is the setting of the paper's Table 6 Polynomial
// column: 24 existing clients (12 per mode) and 24 new ones; its DP
// experiment (Fig. 4) used 120 existing clients (paperDPClients).
const (
	paperTable6Clients = 24
	paperDPClients     = 120
)

var methodLabel = map[string]string{
	fl.MethodPACPFL: "PAC-PFL", fl.MethodPFedGP: "pFedGP", fl.MethodVanilla: "Vanilla", fl.MethodPooled: "Pooled",
}

// groupSummary is one group's metrics over the seeds.
type groupSummary struct {
	RSMSE fl.Summary `json:"rsmse"`
	CE    fl.Summary `json:"ce"`
}

// MarshalJSON writes NaN (a group with no clients) and ±Inf as null.
func (g groupSummary) MarshalJSON() ([]byte, error) {
	type summary struct {
		Mean jsonFloat `json:"mean"`
		CI95 jsonFloat `json:"ci95"`
	}
	return json.Marshal(struct {
		RSMSE summary `json:"rsmse"`
		CE    summary `json:"ce"`
	}{summary{jsonFloat(g.RSMSE.Mean), jsonFloat(g.RSMSE.CI95)}, summary{jsonFloat(g.CE.Mean), jsonFloat(g.CE.CI95)}})
}

type methodSummary struct {
	Existing groupSummary `json:"existing"`
	New      groupSummary `json:"new"`
	// Per-seed group averages, in seed order.
	PerSeed map[string][]jsonFloat `json:"per_seed"`
	Seconds float64                `json:"seconds"`
}

type experimentReport struct {
	Dataset string                    `json:"dataset"`
	Seeds   []uint64                  `json:"seeds"`
	Methods map[string]*methodSummary `json:"methods"`
	Seconds float64                   `json:"seconds"`
}

func runExperiment(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || isHelp(args[0]) {
		if len(args) == 0 {
			fmt.Fprintln(stderr, "usage: pacpfl experiment polynomial|fmnist [flags]   (pacpfl experiment -h for the flags)")
			return exitUsage
		}
		fmt.Fprintln(stdout, "usage: pacpfl experiment polynomial [--seeds 5] [--seed-base N] [--methods pacpfl,pfedgp,vanilla,pooled] [--json FILE] [train flags]")
		fmnistUsage(stdout)
		fmt.Fprintln(stdout, "\nThe flags of experiment polynomial (pacpfl experiment fmnist -h lists those of fmnist):")
		return runExperiment([]string{"polynomial", "-h"}, stdout, stderr)
	}
	if args[0] == dataFMNIST {
		return runExperimentFMNIST(args[1:], stdout, stderr)
	}
	if args[0] != "polynomial" {
		if strings.HasPrefix(args[0], "-") {
			fmt.Fprintf(stderr, "pacpfl experiment: the data set comes before the flags: pacpfl experiment polynomial|fmnist [flags] (got %q first)\n", args[0])
		} else {
			fmt.Fprintf(stderr, "pacpfl experiment: unknown dataset %q (available: polynomial, fmnist)\n", args[0])
		}
		return exitUsage
	}
	fs := newFlagSet("experiment polynomial", stderr)
	var f trainFlags
	addTrainFlags(fs, &f)
	seeds := fs.Int("seeds", 5, "number of seeds")
	seedBase := fs.Uint64("seed-base", 1, "first seed; seeds are seed-base, seed-base+1, …")
	methods := stringList(slices.Clone(fl.Methods))
	fs.Var(&methods, "methods", "comma-separated methods to run")
	fs.IntVar(&f.baselineSteps, "baseline-steps", fl.DefaultVanillaOptions().Steps, "Adam steps of the Vanilla and Pooled fits")
	fs.StringVar(&f.pfedgpMean, "pfedgp-mean", "linear", "pFedGP's GP mean: linear (chosen by the paper's cross-validation), zero (the original pFedGP) or nn (PAC-PFL's mean network)")
	var dpSweep floatList
	fs.Var(&dpSweep, "dp-sweep", "instead of the method table: PAC-PFL's utility at each of these guaranteed ε (e.g. 1,10,100; --dp-mechanism, --dp-delta, --dp-clip apply), beside the non-private run; default data: the paper's Fig. 4 setting, 120 existing clients")
	setDefault(fs, "clients", strconv.Itoa(paperTable6Clients))
	quiet := fs.Bool("quiet", false, "no progress output")
	jsonPath := fs.String("json", "", "also write the results as JSON to `FILE`")
	// The comparison computes no bounds, and its seeds are --seeds and
	// --seed-base: those flags would be accepted and ignored.
	fs = dropFlags(fs, append([]string{"seed"}, boundFlags...)...)
	if st, ok := parseFlags(fs, args[1:], false); !ok {
		return st
	}
	f.dpSweep = len(dpSweep) > 0
	if err := f.checkExperiment(fs, methods, *seeds, *seedBase); err != nil {
		return fail(stderr, "experiment", err)
	}
	if err := f.afterParse(fs, *jsonPath); err != nil {
		return fail(stderr, "experiment", err)
	}
	f.boundSamples, f.learnedSamples = 0, 0
	if f.dpSweep {
		if !flagSet(fs, "clients") {
			f.clients = paperDPClients
		}
		return runDPSweep(dpSweep, &f, *seeds, *seedBase, *quiet, *jsonPath, stdout, stderr)
	}
	// Every method's options on the first seed's data, before any work (a
	// bad flag used to surface after the methods before it had run).
	ds0, err := f.dataset(*seedBase)
	if err != nil {
		return fail(stderr, "experiment", err)
	}
	if _, err := f.options(ds0, *seedBase); err != nil {
		return fail(stderr, "experiment", err)
	}
	stdout, jsonOut := reportStreams(*jsonPath, stdout, stderr)
	start := time.Now()
	rep := experimentReport{Dataset: "polynomial", Methods: map[string]*methodSummary{}}
	vals := map[string]map[string][]float64{} // method → metric key → per-seed values
	secs := map[string]float64{}
	for s := 0; s < *seeds; s++ {
		seed := *seedBase + uint64(s)
		rep.Seeds = append(rep.Seeds, seed)
		ds, err := f.dataset(seed)
		if err != nil {
			return fail(stderr, "experiment", err)
		}
		g := fl.NewGPModel(ds.D)
		for _, m := range methods {
			res, err := runMethod(m, ds, g, &f, seed, *quiet, stderr, s, *seeds)
			if err != nil {
				return fail(stderr, "experiment", fmt.Errorf("%s, seed %d: %w", m, seed, err))
			}
			if vals[m] == nil {
				vals[m] = map[string][]float64{}
			}
			v := vals[m]
			v["existing_rsmse"] = append(v["existing_rsmse"], res.Existing.MeanRSMSE)
			v["existing_ce"] = append(v["existing_ce"], res.Existing.MeanCE)
			v["new_rsmse"] = append(v["new_rsmse"], res.New.MeanRSMSE)
			v["new_ce"] = append(v["new_ce"], res.New.MeanCE)
			secs[m] += res.Seconds
			if !*quiet {
				fmt.Fprintf(stderr, "experiment: seed %d %-8s existing RSMSE %s CE %s | new RSMSE %s CE %s (%.1fs)\n",
					seed, m, fmtMetric("%.3f", res.Existing.MeanRSMSE), fmtMetric("%.3f", res.Existing.MeanCE),
					fmtMetric("%.3f", res.New.MeanRSMSE), fmtMetric("%.3f", res.New.MeanCE), res.Seconds)
			}
		}
	}
	for _, m := range methods {
		v := vals[m]
		rep.Methods[m] = &methodSummary{
			Existing: groupSummary{fl.Summarise(v["existing_rsmse"]), fl.Summarise(v["existing_ce"])},
			New:      groupSummary{fl.Summarise(v["new_rsmse"]), fl.Summarise(v["new_ce"])},
			PerSeed:  map[string][]jsonFloat{}, Seconds: secs[m],
		}
		for key, xs := range v {
			rep.Methods[m].PerSeed[key] = jsonFloats(xs)
		}
		if *seeds == 1 {
			// One seed has no spread to estimate: fl.Summarise's 0 would
			// print as "± 0.00", a claim of no uncertainty at all.
			ms := rep.Methods[m]
			for _, s := range []*fl.Summary{&ms.Existing.RSMSE, &ms.Existing.CE, &ms.New.RSMSE, &ms.New.CE} {
				s.CI95 = math.NaN()
			}
		}
	}
	rep.Seconds = time.Since(start).Seconds()
	printTable(stdout, &rep, methods)
	fmt.Fprintf(stdout, "\n%d seeds (%d..%d), %d existing and %d new clients (the paper's Table 6: %d and 24), wall time %.0fs\n",
		*seeds, *seedBase, *seedBase+uint64(*seeds)-1, f.clients, f.newClients, paperTable6Clients, rep.Seconds)
	if *jsonPath != "" {
		if err := writeJSON(jsonOut, *jsonPath, rep); err != nil {
			return fail(stderr, "experiment", err)
		}
	}
	return exitOK
}

// checkExperiment validates the flags of experiment polynomial that train
// does not have.
func (f *trainFlags) checkExperiment(fs *flag.FlagSet, methods []string, seeds int, seedBase uint64) error {
	if err := checkSeeds(seeds, seedBase); err != nil {
		return err
	}
	if f.dpSweep {
		for _, name := range []string{"methods", "baseline-steps", "pfedgp-mean"} {
			if flagSet(fs, name) {
				return usagef("--%s does not apply to --dp-sweep (which trains PAC-PFL only)", name)
			}
		}
		return nil
	}
	switch {
	case f.pfedgpMean != "zero" && f.pfedgpMean != "nn" && f.pfedgpMean != "linear":
		return usagef("unknown --pfedgp-mean %q (want linear, zero or nn)", f.pfedgpMean)
	case f.baselineSteps < 1:
		return usagef("--baseline-steps %d must be at least 1", f.baselineSteps)
	}
	// A repeated method would pool its runs as if they were more seeds and
	// print a confidence interval that is too narrow.
	return checkNames("--methods", methods, fl.Methods)
}

// runMethod runs one method on one seed's data with the flags' settings.
func runMethod(m string, ds *data.Dataset, g *fl.GPModel, f *trainFlags, seed uint64, quiet bool, stderr io.Writer, s, seeds int) (*fl.MethodResult, error) {
	switch m {
	case fl.MethodPACPFL, fl.MethodPFedGP:
		o, err := f.options(ds, seed)
		if err != nil {
			return nil, err
		}
		if m == fl.MethodPFedGP {
			p := fl.DefaultPFedGPOptions()
			o.Server.K, o.SigmaP, o.InitSigma, o.ZeroMean = p.Server.K, p.SigmaP, f.sigmaP, f.pfedgpMean == "zero"
			if f.pfedgpMean == "linear" {
				g = fl.NewLinearMeanGPModel(ds.D)
			}
		}
		prog := newProgress(stderr, fmt.Sprintf("%s seed %d/%d", m, s+1, seeds), o.Server.Rounds, quiet)
		o.Server.Progress = prog.update
		r, err := fl.RunPACPFL(ds, g, o, m)
		prog.done()
		return r, err
	case fl.MethodVanilla:
		o := fl.DefaultVanillaOptions()
		o.Seed, o.Steps = seed, f.baselineSteps
		return fl.RunVanilla(ds, g, o)
	case fl.MethodPooled:
		o := fl.DefaultPooledOptions()
		o.Seed, o.Steps = seed, f.baselineSteps
		return fl.RunPooled(ds, g, o)
	}
	return nil, usagef("unknown method %q", m)
}

func fmtSummary(s fl.Summary) string {
	if math.IsNaN(s.Mean) {
		return "–"
	}
	if math.IsNaN(s.CI95) {
		return fmt.Sprintf("%.2f ± –", s.Mean)
	}
	return fmt.Sprintf("%.2f ± %.2f", s.Mean, s.CI95)
}

func printTable(w io.Writer, rep *experimentReport, methods []string) {
	fmt.Fprintf(w, "Polynomial: mean ± 95%% CI over %d seeds (ours | paper, Table 6)\n\n", len(rep.Seeds))
	fmt.Fprintln(w, "| method | RSMSE existing | RSMSE new | CE existing | CE new |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, m := range methods {
		r := rep.Methods[m]
		p := paperTable6[m]
		fmt.Fprintf(w, "| %s | %s (paper %s) | %s (paper %s) | %s (paper %s) | %s (paper %s) |\n", methodLabel[m],
			fmtSummary(r.Existing.RSMSE), fmtSummary(p[0]), fmtSummary(r.New.RSMSE), fmtSummary(p[2]),
			fmtSummary(r.Existing.CE), fmtSummary(p[1]), fmtSummary(r.New.CE), fmtSummary(p[3]))
	}
}

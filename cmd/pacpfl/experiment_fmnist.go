package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/fedvi"
	"github.com/pacpfl/pacpfl/fl/genfl"
)

// bnnMethods are the methods of pacpfl experiment fmnist, in table order.
var bnnMethods = []string{fl.MethodPACPFL, fl.MethodVanilla, fl.MethodPooled}

// pFedBayesFMNIST are the FMNIST rows of the pFedBayes paper's Table 1
// (SPEC §11): personalised-model accuracy (%) on the labels5 protocol with
// the 784-100-10 MLP, mean ± its reported spread, per split.
var pFedBayesFMNIST = []struct {
	method string
	acc    map[string]fl.Summary
}{
	{"pFedBayes", map[string]fl.Summary{"small": {Mean: 89.05, CI95: 0.17}, "medium": {Mean: 91.95, CI95: 0.02}, "large": {Mean: 93.01, CI95: 0.10}}},
	{"pFedMe", map[string]fl.Summary{"small": {Mean: 88.63, CI95: 0.07}, "medium": {Mean: 91.32, CI95: 0.08}, "large": {Mean: 92.02, CI95: 0.07}}},
	{"pFedGP", map[string]fl.Summary{"small": {Mean: 86.99, CI95: 0.41}, "medium": {Mean: 90.53, CI95: 0.35}, "large": {Mean: 92.22, CI95: 0.13}}},
	{"HeurFedAMP", map[string]fl.Summary{"small": {Mean: 86.38, CI95: 0.24}, "medium": {Mean: 89.82, CI95: 0.16}, "large": {Mean: 92.17, CI95: 0.12}}},
	{"Per-FedAvg", map[string]fl.Summary{"small": {Mean: 79.79, CI95: 0.83}, "medium": {Mean: 84.90, CI95: 0.47}, "large": {Mean: 88.51, CI95: 0.28}}},
}

// classSummary is one group's metrics over the seeds: accuracy in percent.
type classSummary struct {
	Accuracy fl.Summary `json:"accuracy"`
	CE       fl.Summary `json:"ce"`
}

// MarshalJSON writes NaN (a group with no clients, or the CI of one seed)
// and ±Inf as null.
func (c classSummary) MarshalJSON() ([]byte, error) {
	type summary struct {
		Mean jsonFloat `json:"mean"`
		CI95 jsonFloat `json:"ci95"`
	}
	return json.Marshal(struct {
		Accuracy summary `json:"accuracy"`
		CE       summary `json:"ce"`
	}{summary{jsonFloat(c.Accuracy.Mean), jsonFloat(c.Accuracy.CI95)}, summary{jsonFloat(c.CE.Mean), jsonFloat(c.CE.CI95)}})
}

type classMethodSummary struct {
	Existing classSummary `json:"existing"`
	New      classSummary `json:"new"`
	// Per-client values: metric key → seed → client (plot experiment).
	PerClient perClient `json:"per_client"`
	// Weighted is the FedVI paper's metric (FedVI-family methods only).
	Weighted *weightedGroups `json:"accuracy_weighted,omitempty"`
}

// weightedGroups are the weighted accuracies of both groups.
type weightedGroups struct {
	Existing weightedSummary `json:"existing"`
	New      weightedSummary `json:"new"`
}

// fmnistReport is the --json output of pacpfl experiment fmnist (the
// issue's schema; split for labels5, alpha and clients for dirichlet).
type fmnistReport struct {
	Dataset   string                         `json:"dataset"`
	Partition string                         `json:"partition"`
	Split     string                         `json:"split,omitempty"`
	Alpha     float64                        `json:"alpha,omitempty"`
	Clients   int                            `json:"clients,omitempty"`
	Seeds     []uint64                       `json:"seeds"`
	Methods   map[string]*classMethodSummary `json:"methods"`
}

func fmnistUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: pacpfl experiment fmnist [--partition labels5 --split small|medium|large | --partition dirichlet --alpha 0.4 --clients N] [--methods pacpfl,vanilla,pooled,genfl,fedvi,fedvi-fedavg,fedvi-fedavg-ft] [--seeds 5] [--seed-base N] [--json FILE] [train flags] [--fedvi-* flags]")
}

// runExperimentFMNIST is pacpfl experiment fmnist: PAC-PFL, Vanilla and
// Pooled with BNN clients on the same splits over several seeds.
func runExperimentFMNIST(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("experiment fmnist", stderr)
	var f trainFlags
	var bf bnnFlags
	addTrainFlags(fs, &f)
	addBNNFlags(fs, &bf)
	seeds := fs.Int("seeds", 5, "number of seeds")
	seedBase := fs.Uint64("seed-base", 1, "first seed; seeds are seed-base, seed-base+1, …")
	methods := stringList(slices.Clone(bnnMethods))
	fs.Var(&methods, "methods", "comma-separated methods to run: pacpfl, vanilla, pooled; also genfl (GenFL's PFL, seed 004; existing clients only), fedvi (seed 002), fedvi-fedavg and fedvi-fedavg-ft (FedAvg and FedAvg with local fine-tuning on FedVI's network)")
	var vf fedviFlags
	addFedVIFlags(fs, &vf)
	quiet := fs.Bool("quiet", false, "no progress output")
	jsonPath := fs.String("json", "", "also write the results as JSON to `FILE`")
	// The comparison computes no bounds, and its seeds are --seeds and
	// --seed-base: those flags would be accepted and ignored.
	fs = dropFlags(fs, append([]string{"seed", "bound-loss", "p-min", "weight-draws"}, boundFlags...)...)
	if st, ok := parseFlags(fs, args, false); !ok {
		return st
	}
	fs.Visit(func(fl *flag.Flag) {
		if fl.Name == "data" || fl.Name == "model" {
			bf.model = "given" // refused below: the data set is the positional argument
		}
	})
	if bf.model == "given" {
		return fail(stderr, "experiment", usagef("--model and --data do not apply to experiment fmnist (BNN clients on Fashion-MNIST)"))
	}
	bf.data = dataFMNIST
	if err := bf.resolve(fs); err != nil {
		return fail(stderr, "experiment", err)
	}
	if err := f.afterParse(fs, *jsonPath); err != nil {
		return fail(stderr, "experiment", err)
	}
	if err := checkSeeds(*seeds, *seedBase); err != nil {
		return fail(stderr, "experiment", err)
	}
	// A repeated method would pool its runs as if they were more seeds and
	// print a confidence interval that is too narrow.
	if err := checkNames("--methods", methods, slices.Concat(bnnMethods, []string{genfl.MethodGenFL}, fedviMethods)); err != nil {
		return fail(stderr, "experiment", err)
	}
	if err := vf.check(); err != nil {
		return fail(stderr, "experiment", err)
	}
	bf.bnnDefaults(&f)
	if err := bf.check(&f); err != nil {
		return fail(stderr, "experiment", err)
	}
	stdout, jsonOut := reportStreams(*jsonPath, stdout, stderr)
	// Bounds are not part of the comparison.
	f.boundSamples = 0
	start := time.Now()
	im, err := bf.images()
	if err != nil {
		return fail(stderr, "experiment", err)
	}
	rep := fmnistReport{Dataset: dataFMNIST, Partition: bf.partition, Methods: map[string]*classMethodSummary{}}
	if bf.partition == partLabels5 {
		rep.Split = bf.split
	} else {
		rep.Alpha, rep.Clients = bf.alpha, f.clients
	}
	vals := map[string]map[string][]float64{} // method → metric → per-seed values
	secs := map[string]float64{}
	perClients := map[string]perClient{}
	weighted := map[string]*fedviWeighted{}
	var fedavgRun fedviRun
	var notes []string
	for s := 0; s < *seeds; s++ {
		seed := *seedBase + uint64(s)
		rep.Seeds = append(rep.Seeds, seed)
		ds, err := bf.dataset(im, &f, seed)
		if err != nil {
			return fail(stderr, "experiment", err)
		}
		for _, n := range ds.Notes {
			if !slices.Contains(notes, n) {
				notes = append(notes, n)
				fmt.Fprintf(stderr, "note: %s\n", n)
			}
		}
		for _, m := range methods {
			var res *fl.MethodResult
			if slices.Contains(fedviMethods, m) {
				var r *fedvi.Result
				res, r, err = runFedVIMethod(m, ds, &vf, &fedavgRun, seed, *quiet, stderr, s, *seeds)
				if err == nil {
					if weighted[m] == nil {
						weighted[m] = &fedviWeighted{}
					}
					weighted[m].add(r)
				}
			} else {
				res, err = runBNNMethod(m, ds, &f, &bf, seed, *quiet, stderr, s, *seeds)
			}
			if err != nil {
				return fail(stderr, "experiment", fmt.Errorf("%s, seed %d: %w", m, seed, err))
			}
			if vals[m] == nil {
				vals[m] = map[string][]float64{}
			}
			v := vals[m]
			ex, nw := newClassMetrics(res.ExistingClass), newClassMetrics(res.NewClass)
			v["existing_accuracy"] = append(v["existing_accuracy"], float64(ex.Accuracy))
			v["existing_ce"] = append(v["existing_ce"], float64(ex.CE))
			v["new_accuracy"] = append(v["new_accuracy"], float64(nw.Accuracy))
			v["new_ce"] = append(v["new_ce"], float64(nw.CE))
			perClients[m] = perClients[m].add(res)
			secs[m] += res.Seconds
			if !*quiet {
				fmt.Fprintf(stderr, "experiment: seed %d %-8s existing accuracy %.2f%% CE %.4f | new accuracy %.2f%% CE %.4f (%.0fs)\n",
					seed, m, ex.Accuracy, ex.CE, nw.Accuracy, nw.CE, res.Seconds)
			}
		}
	}
	for _, m := range methods {
		v := vals[m]
		ms := &classMethodSummary{
			Existing:  classSummary{fl.Summarise(v["existing_accuracy"]), fl.Summarise(v["existing_ce"])},
			New:       classSummary{fl.Summarise(v["new_accuracy"]), fl.Summarise(v["new_ce"])},
			PerClient: perClients[m],
		}
		if *seeds == 1 {
			// One seed has no spread to estimate: "± 0.00" would claim
			// no uncertainty at all.
			for _, s := range []*fl.Summary{&ms.Existing.Accuracy, &ms.Existing.CE, &ms.New.Accuracy, &ms.New.CE} {
				s.CI95 = math.NaN()
			}
		}
		if w := weighted[m]; w != nil {
			ex, nw := w.summaries(*seeds == 1)
			ms.Weighted = &weightedGroups{Existing: ex, New: nw}
		}
		rep.Methods[m] = ms
	}
	printFMNISTTable(stdout, &rep, methods, secs)
	printFedVITable(stdout, &rep, methods)
	fmt.Fprintf(stdout, "\n%d seeds (%d..%d), %s, wall time %.0fs\n", *seeds, *seedBase, *seedBase+uint64(*seeds)-1, bf.describe(&f), time.Since(start).Seconds())
	if *jsonPath != "" {
		if err := writeJSON(jsonOut, *jsonPath, rep); err != nil {
			return fail(stderr, "experiment", err)
		}
	}
	return exitOK
}

// runBNNMethod runs one method on one seed's split with the flags' settings.
func runBNNMethod(m string, ds *data.Dataset, f *trainFlags, bf *bnnFlags, seed uint64, quiet bool, stderr io.Writer, s, seeds int) (*fl.MethodResult, error) {
	model := bf.bnnModel()
	switch m {
	case fl.MethodPACPFL:
		o, err := bf.options(f, ds, seed)
		if err != nil {
			return nil, err
		}
		prog := newProgress(stderr, fmt.Sprintf("%s seed %d/%d", m, s+1, seeds), o.Server.Rounds, quiet)
		o.Server.Progress = prog.update
		r, err := fl.RunPACPFLBNN(ds, model, o)
		prog.done()
		return r, err
	case fl.MethodVanilla:
		return fl.RunVanillaBNN(ds, model, seed)
	case fl.MethodPooled:
		return fl.RunPooledBNN(ds, model, seed)
	case genfl.MethodGenFL:
		return runGenFLMethod(ds, seed, quiet, stderr)
	}
	return nil, usagef("unknown method %q", m)
}

func fmtAccuracy(s fl.Summary) string {
	if math.IsNaN(s.Mean) {
		return "–"
	}
	if math.IsNaN(s.CI95) {
		return fmt.Sprintf("%.2f ± –", s.Mean)
	}
	return fmt.Sprintf("%.2f ± %.2f", s.Mean, s.CI95)
}

func fmtCE(s fl.Summary) string {
	if math.IsNaN(s.Mean) {
		return "–"
	}
	if math.IsNaN(s.CI95) {
		return fmt.Sprintf("%.3f ± –", s.Mean)
	}
	return fmt.Sprintf("%.3f ± %.3f", s.Mean, s.CI95)
}

func printFMNISTTable(w io.Writer, rep *fmnistReport, methods []string, secs map[string]float64) {
	what := fmt.Sprintf("split %s", rep.Split)
	if rep.Partition == partDirichlet {
		what = fmt.Sprintf("α = %g, %d clients", rep.Alpha, rep.Clients)
	}
	fmt.Fprintf(w, "Fashion-MNIST, %s, %s: accuracy (%%) and CE (42), mean ± 95%% CI over %d seeds\n\n", rep.Partition, what, len(rep.Seeds))
	fmt.Fprintln(w, "| method | accuracy existing | accuracy new | CE existing | CE new | seconds |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, m := range methods {
		r := rep.Methods[m]
		fmt.Fprintf(w, "| %s (ours) | %s | %s | %s | %s | %.0f |\n", methodLabel[m], fmtAccuracy(r.Existing.Accuracy), fmtAccuracy(r.New.Accuracy),
			fmtCE(r.Existing.CE), fmtCE(r.New.CE), secs[m])
	}
	if rep.Partition != partLabels5 {
		return
	}
	for _, p := range pFedBayesFMNIST {
		fmt.Fprintf(w, "| %s (pFedBayes paper, MLP) | %s | – | – | – | – |\n", p.method, fmtAccuracy(p.acc[rep.Split]))
	}
	fmt.Fprintln(w, "\nThe pFedBayes paper's figures (its Table 1, personalised models, 5 runs) are mean ± the spread it reports; it gives no CE and no new clients.")
}

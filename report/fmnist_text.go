package report

import (
	"fmt"
	"io"
	"math"

	"github.com/pacpfl/pacpfl/fl/pfedbayes"
	"github.com/pacpfl/pacpfl/papers"
)

// WriteText writes the report's tables as pacpfl experiment fmnist prints
// them: the methods' rows (in the order of methods, named by label) beside
// the pFedBayes paper's (labels5), then the FedVI paper's weighted
// accuracy for the methods that have it, beside that paper's figures.
func (r *FMNIST) WriteText(w io.Writer, methods []string, label func(method string) string) {
	r.writeTable(w, methods, label)
	r.writeWeighted(w, methods, label)
}

// WriteFedBaselines writes the note on pFedBayes, FedAvg and FedProx after
// the tables: the network and the schedule of o, which they share.
func WriteFedBaselines(w io.Writer, o pfedbayes.Options) {
	a := o.Arch.WithDefaults()
	fmt.Fprintf(w, "\npFedBayes, FedAvg, FedProx: network %s (%d weights), %d rounds, R = %d local steps of b = %d\n",
		a, a.NumWeights(), o.Rounds, o.LocalSteps, o.Batch)
}

// WriteFooter writes the line that closes the text: the seeds, the split
// (NewFMNIST's), its new clients and the wall time of the run.
func (r *FMNIST) WriteFooter(w io.Writer, seconds float64) {
	var first, last uint64
	if n := len(r.Seeds); n > 0 {
		first, last = r.Seeds[0], r.Seeds[n-1]
	}
	fmt.Fprintf(w, "\n%d seeds (%d..%d), fmnist %s, %d new clients, wall time %.0fs\n", len(r.Seeds), first, last,
		r.split, r.split.Dirichlet.New, seconds)
}

func (r *FMNIST) writeTable(w io.Writer, methods []string, label func(string) string) {
	what := fmt.Sprintf("split %s", r.Split)
	if r.Partition == "dirichlet" {
		what = fmt.Sprintf("α = %g, %d clients", r.Alpha, r.Clients)
	}
	window := ""
	for _, m := range methods {
		if b := r.Methods[m].BestRounds; b != "" {
			window = b
		}
	}
	best := "best of rounds " + window
	if window == "" {
		best = "best over rounds"
	}
	fmt.Fprintf(w, "Fashion-MNIST, %s, %s: accuracy (%%) and CE (42), mean ± 95%% CI over %d seeds\n\n", r.Partition,
		what, len(r.Seeds))
	fmt.Fprintf(w, "| method | accuracy existing | existing, %s | global model | global, %s | accuracy new | CE "+
		"existing | CE new | seconds | s/round |\n", best, best)
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	opt := func(s *Summary) string {
		if s == nil {
			return "–"
		}
		return text2(*s)
	}
	for _, m := range methods {
		x := r.Methods[m]
		glob, globBest := "–", "–"
		if x.Global != nil {
			glob, globBest = text2(x.Global.Accuracy), opt(x.Global.Best)
		}
		perRound := "–"
		if x.RoundSeconds > 0 {
			perRound = fmt.Sprintf("%.3g", x.RoundSeconds)
		}
		fmt.Fprintf(w, "| %s (ours) | %s | %s | %s | %s | %s | %s | %s | %.0f | %s |\n", label(m),
			text2(x.Existing.Accuracy), opt(x.Existing.Best),
			glob, globBest, text2(x.New.Accuracy), x.Existing.CE.Text("%.3f"), x.New.CE.Text("%.3f"), x.Seconds,
			perRound)
	}
	if r.Partition != "labels5" {
		return
	}
	for _, p := range papers.PFedBayesTable1() {
		pm, gm := "–", "–"
		if p.PM != nil {
			pm = text2(NewSummary(p.PM[r.Split]))
		}
		if p.GM != nil {
			gm = text2(NewSummary(p.GM[r.Split]))
		}
		fmt.Fprintf(w, "| %s (pFedBayes paper, MLP) | – | %s | – | %s | – | – | – | – | – |\n", p.Method, pm, gm)
	}
	fmt.Fprintln(w, "\nThe pFedBayes paper's figures (its Table 1, 5 runs) are the best accuracy over rounds 700–800 "+
		"of its personalised models (existing) and its global model, mean ± the spread it reports; it gives no CE, "+
		"no final-round figures and no new clients.")
	fmt.Fprintln(w, "Ours: \"accuracy existing\" is the personalised models after the last round (FedAvg+FT: the "+
		"final global model fine-tuned on each client), \"global model\" the federated methods' global model on the "+
		"same test sets, \"accuracy new\" the global model (fine-tuned for FedAvg+FT) on the new clients; s/round is "+
		"the training time per round (evaluations excluded).")
}

// writeWeighted writes the FedVI paper's metric for the methods that have
// it (the FedVI family; every method on the dirichlet partition), with the
// paper's FEMNIST figures for reference. A method evaluated only after
// training has one round: its final figure.
func (r *FMNIST) writeWeighted(w io.Writer, methods []string, label func(string) string) {
	var rows []string
	for _, m := range methods {
		if x := r.Methods[m]; x != nil && x.Weighted != nil {
			rows = append(rows, m)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "\nAccuracy (%) weighted by the clients' test-set sizes (the FedVI paper's metric): after the "+
		"final round, and the mean over the last rounds")
	fmt.Fprintln(w, "\n| method | participating, final | participating, last rounds | non-participating, final | "+
		"non-participating, last rounds |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, m := range rows {
		x := r.Methods[m].Weighted
		row := label(m) + " (ours)"
		if x.GlobalModel {
			row += ", global model on the participating clients"
		}
		fmt.Fprintf(w, "| %s | %s | %s (%d) | %s | %s (%d) |\n", row,
			text2(x.Existing.Final), text2(x.Existing.LastRounds), x.Existing.LastRoundsNum,
			text2(x.New.Final), text2(x.New.LastRounds), x.New.LastRoundsNum)
	}
	paper := func(v float64) string {
		if math.IsNaN(v) {
			return "–"
		}
		return fmt.Sprintf("%.1f", v)
	}
	for _, p := range papers.FedVIFEMNIST() {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", p.Label, paper(p.Final), paper(p.LastRounds), paper(p.NewFinal),
			paper(p.NewLast))
	}
	fmt.Fprintln(w, "\nThe FedVI paper's figures are on FEMNIST (not packaged here), FedVI's over its last 100 of "+
		"1500 rounds; its FedAvg row was not run on FedVI's CNN")
	fmt.Fprintln(w, "but copied from Marfoq et al. (MobileNet-v2), whereas ours share FedVI's network and optimiser. "+
		"Fashion-MNIST stands in.")
}

package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/pacpfl/pacpfl/asm"
)

// The golden outputs pin what every subcommand prints and writes for a fixed
// list of small, seeded invocations, so that moving code out of package main
// cannot change a byte of it unnoticed. Regenerate with
//
//	go test ./cmd/pacpfl -run TestGolden -update
//
// and say in the commit why an output changed.
var update = flag.Bool("update", false, "rewrite testdata/golden from the current outputs")

// goldenCase is one invocation. In args, $DIR is a fresh directory (the
// files the command writes go there and become part of the golden output),
// $FMNIST a small Fashion-MNIST look-alike, $SITES examples/sites.csv and
// $GPCSV, $BNNCSV small CSV files for gp eval and bnn eval.
type goldenCase struct {
	name string
	args []string
	// after runs further invocations on the first one's files (predict on a
	// saved model, plot on a report); their outputs join the golden file.
	after [][]string
}

var goldenPoly = []string{"--clients", "4", "--new-clients", "2", "-T", "5", "--k", "2", "--baseline-steps", "5",
	"--quiet"}

var goldenFMNIST = []string{"--max-images", "1200", "--hidden", "8", "--rounds", "3", "--posterior-steps", "3",
	"--alpha-samples", "3", "--posterior-particles", "2", "--samples", "2", "--k", "2", "--quiet"}

func goldenCases() []goldenCase {
	cat := func(a ...[]string) []string {
		var r []string
		for _, x := range a {
			r = append(r, x...)
		}
		return r
	}
	return []goldenCase{
		{name: "train", args: cat(
			[]string{"train", "--clients", "4", "--new-clients", "2", "-T", "5", "--k", "2", "--bound-samples", "2",
				"--certify", "--json", "$DIR/train.json"}),
			after: [][]string{{"plot", "training", "--json", "$DIR/train.json", "--out", "$DIR/training.svg"}}},
		{name: "train-dp", args: []string{"train", "--clients", "4", "--new-clients", "1", "-T", "3", "--k", "2",
			"--dp-epsilon", "4", "--dp-noise-seed", "3",
			"--quiet", "--json", "$DIR/train.json"}},
		{name: "train-bnn",
			args: cat([]string{"train", "--model", "bnn", "--data-dir", "$FMNIST", "--bound-samples", "2",
				"--weight-draws", "2", "--json", "$DIR/train.json"}, goldenFMNIST)},
		{name: "train-csv",
			args: []string{"train", "--data", "$SITES", "--client-column", "site", "--target-column", "load",
				"--features", "temperature", "--split-column", "split", "--new-clients", "site10", "-T", "5", "--k",
				"2", "--certify", "--explain",
				"--json", "$DIR/train.json", "--save", "$DIR/model.json"},
			after: [][]string{
				{"predict", "--model", "$DIR/model.json", "--data", "$SITES", "--context-column", "split", "--out",
					"$DIR/pred.csv"},
				{"plot", "predictive", "--model", "$DIR/model.json", "--data", "$SITES", "--client", "site10",
					"--context-column", "split", "--out", "$DIR/pred.svg"},
			}},
		{name: "experiment-polynomial",
			args:  cat([]string{"experiment", "polynomial", "--seeds", "2", "--json", "$DIR/e.json"}, goldenPoly),
			after: [][]string{{"plot", "experiment", "--json", "$DIR/e.json", "--out", "$DIR/e.svg"}}},
		{name: "experiment-ksweep",
			args: []string{"experiment", "polynomial", "--k-sweep", "1,3", "--seeds", "2", "--clients", "4",
				"--new-clients", "2", "-T", "5", "--quiet", "--json", "$DIR/k.json"},
			after: [][]string{{"plot", "sweep", "--json", "$DIR/k.json", "--out", "$DIR/k.svg"}}},
		{name: "experiment-dpsweep", args: []string{"experiment", "polynomial", "--dp-sweep", "2,8", "--dp-noise-seed",
			"3", "--seeds", "1", "--clients", "4",
			"--new-clients", "1", "-T", "3", "--k", "2", "--quiet", "--json", "$DIR/dp.json"}},
		{name: "experiment-pv",
			args: []string{"experiment", "pv", "--variant", "s", "--seeds", "1", "--clients", "3", "--new-clients", "2",
				"-T", "5", "--k", "2", "--baseline-steps", "5", "--quiet", "--json", "$DIR/pv.json"}},
		{name: "experiment-fmnist", args: cat([]string{"experiment", "fmnist", "--data-dir", "$FMNIST", "--seeds", "1",
			"--methods", "pacpfl,vanilla,pooled,pfedbayes,fedavg,fedprox,fedavg-ft", "--fed-rounds", "2",
			"--fed-local-steps", "1",
			"--fed-batch", "8", "--json", "$DIR/f.json"}, goldenFMNIST)},
		{name: "experiment-fedvi", args: []string{"experiment", "fmnist", "--data-dir", "$FMNIST", "--partition",
			"dirichlet", "--clients", "10",
			"--new-clients", "2", "--max-images", "240", "--methods", "fedvi,fedvi-fedavg,fedvi-fedavg-ft", "--seeds",
			"1", "--fedvi-rounds", "2",
			"--fedvi-eval-last", "1", "--fedvi-batch", "16", "--fedvi-ft-epochs", "1", "--quiet", "--json",
			"$DIR/f.json"}},
		{name: "experiment-genfl",
			args: cat([]string{"experiment", "genfl", "--data-dir", "$FMNIST", "--seeds", "1", "--json", "$DIR/g.json"},
				tinyGenFLFlags)},
		{name: "tune-mtl", args: []string{"tune", "polynomial", "--method", "mtl", "--clients", "4", "--folds", "2",
			"--quiet", "--json", "$DIR/t.json"}},
		{name: "data-generate", args: []string{"data", "generate", "--kind", "pv", "--clients", "3", "--new-clients",
			"1", "--samples", "20",
			"--seed", "5", "--out", "$DIR/pv.csv"}},
		{name: "gp-eval",
			args: []string{"gp", "eval", "--data", "$GPCSV", "--init-seed", "4", "--hidden", "3", "--json"}},
		{name: "bnn-eval",
			args: []string{"bnn", "eval", "--data", "$BNNCSV", "--arch", "mlp", "--hidden", "4", "--classes", "3",
				"--init-seed", "7", "--samples", "3", "--json"}},
		{name: "bound", args: []string{"bound", "kl-inverse", "0.1", "2"}},
	}
}

// goldenTimes match what differs between two runs of one invocation: wall
// times and rates, and the machine a run names.
var goldenTimes = []*regexp.Regexp{
	regexp.MustCompile(`"[a-z_]*(seconds|_ms|wall|elapsed|per_second)[a-z_]*": ?[-0-9.eE+]+`),
	regexp.MustCompile(`"cpu": "[^"]*"`),
	regexp.MustCompile(`\b[0-9]+(\.[0-9]+)? ?(s|ms|µs|min)\b`),
	regexp.MustCompile(`\b[0-9.]+(e[-+][0-9]+)? evaluations/s`),
	regexp.MustCompile(`on [^,]*\(family [0-9]+ model [0-9]+\), GOMAXPROCS [0-9]+`),
}

// goldenTimeColumns are the headers of Markdown table columns that hold
// wall times.
var goldenTimeColumns = map[string]bool{"seconds": true, "s/round": true}

func goldenNormalise(s, dir, fmnist, sites string) string {
	s = strings.ReplaceAll(s, dir, "$DIR")
	s = strings.ReplaceAll(s, fmnist, "$FMNIST")
	s = strings.ReplaceAll(s, sites, "$SITES")
	for _, re := range goldenTimes {
		s = re.ReplaceAllStringFunc(s, func(m string) string {
			if i := strings.IndexByte(m, ':'); i >= 0 && strings.HasPrefix(m, `"`) {
				return m[:i+1] + " <time>"
			}
			return "<time>"
		})
	}
	lines := strings.Split(s, "\n")
	var timeCols []int
	for i, l := range lines {
		if !strings.HasPrefix(l, "|") {
			timeCols = nil
			continue
		}
		cells := strings.Split(l, "|")
		if timeCols == nil {
			timeCols = []int{}
			for c, h := range cells {
				if goldenTimeColumns[strings.TrimSpace(h)] {
					timeCols = append(timeCols, c)
				}
			}
			continue
		}
		for _, c := range timeCols {
			if c < len(cells) && !strings.HasPrefix(strings.TrimSpace(cells[c]), "-") {
				cells[c] = " <time> "
			}
		}
		lines[i] = strings.Join(cells, "|")
	}
	return strings.Join(lines, "\n")
}

func TestGolden(t *testing.T) {
	skipIfRepeat(t)
	if testing.Short() {
		t.Skip("golden outputs: long")
	}
	// Go fuses a*b+c into one FMA on arm64 (the spec allows it), so the last
	// bits of every number differ there; amd64 at the pure-Go level gives
	// the same bits on every CPU.
	if runtime.GOARCH != "amd64" {
		t.Skip("golden outputs are amd64's")
	}
	if err := asm.Configure("generic"); err != nil {
		t.Fatal(err)
	}
	defer asm.Configure("")
	fmnist := writeFakeFMNIST(t, 140)
	// Relative (the test runs in its package's directory): the model file
	// records the data's path, so an absolute one would differ between
	// checkouts.
	sites := filepath.Join("..", "..", "examples", "sites.csv")
	gpcsv := writeTemp(t, "gp.csv", gpCSV)
	bnncsv := writeTemp(t, "bnn.csv", "0,0.5,-1\n2,1.5,0.25\n1,-0.75,2\n0,0.1,0.2\n")
	for _, c := range goldenCases() {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			var got strings.Builder
			for _, args := range append([][]string{c.args}, c.after...) {
				args = append([]string(nil), args...)
				for i, a := range args {
					a = strings.ReplaceAll(a, "$DIR", dir)
					a = strings.ReplaceAll(a, "$FMNIST", fmnist)
					a = strings.ReplaceAll(a, "$GPCSV", gpcsv)
					a = strings.ReplaceAll(a, "$BNNCSV", bnncsv)
					args[i] = strings.ReplaceAll(a, "$SITES", sites)
				}
				st, out, errs := runCLI(args...)
				fmt.Fprintf(&got, "$ pacpfl %s\nexit %d\n-- stdout --\n%s-- stderr --\n%s", strings.Join(args, " "), st,
					out, errs)
			}
			files, _ := os.ReadDir(dir)
			names := make([]string, 0, len(files))
			for _, f := range files {
				names = append(names, f.Name())
			}
			sort.Strings(names)
			for _, n := range names {
				b, err := os.ReadFile(filepath.Join(dir, n))
				if err != nil {
					t.Fatal(err)
				}
				if strings.HasSuffix(n, ".png") {
					b = []byte(fmt.Sprintf("%d bytes\n", len(b)))
				}
				fmt.Fprintf(&got, "-- file %s --\n%s", n, b)
			}
			text := goldenNormalise(got.String(), dir, fmnist, sites)
			text = strings.NewReplacer(gpcsv, "$GPCSV", bnncsv, "$BNNCSV").Replace(text)
			path := filepath.Join("testdata", "golden", c.name+".txt")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if text != string(want) {
				t.Errorf("output differs from %s:\n%s", path, firstDiff(string(want), text))
			}
		})
	}
}

// firstDiff shows the first differing line of want and got with its
// neighbours.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n want %q\n  got %q", i+1, a, b)
		}
	}
	return "(equal lines; different line endings)"
}

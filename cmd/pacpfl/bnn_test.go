package main

import (
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacpfl/pacpfl/fl"
)

// writeFakeFMNIST writes a small Fashion-MNIST look-alike (the four IDX
// files, raw bytes under the .gz names, which the reader accepts): 28×28
// images of 10 classes, perLabel images per class split 6:1 between the
// training and test files, each a class prototype plus noise.
func writeFakeFMNIST(t *testing.T, perLabel int) string {
	t.Helper()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	proto := make([]float64, 10*784)
	for i := range proto {
		proto[i] = 255 * rng.Float64()
	}
	write := func(name string, dims []uint32, payload []byte) {
		var b []byte
		b = append(b, 0, 0, 8, byte(len(dims)))
		for _, d := range dims {
			b = binary.BigEndian.AppendUint32(b, d)
		}
		if err := os.WriteFile(filepath.Join(dir, name), append(b, payload...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for f, part := range []string{"train", "t10k"} {
		var pix, lab []byte
		for c := range 10 {
			n := perLabel * 6 / 7
			if f == 1 {
				n = perLabel - n
			}
			for range n {
				for p := range 784 {
					pix = append(pix, byte(math.Max(0, math.Min(255, proto[c*784+p]+70*rng.NormFloat64()))))
				}
				lab = append(lab, byte(c))
			}
		}
		n := uint32(len(lab))
		write(part+"-images-idx3-ubyte.gz", []uint32{n, 28, 28}, pix)
		write(part+"-labels-idx1-ubyte.gz", []uint32{n}, lab)
	}
	return dir
}

// The fake set has 140 images per label; capped at 1,200 images the labels5
// split gives each client 1 training and 19 test images per label.
var tinyBNNFlags = []string{"--max-images", "1200", "--hidden", "16", "--rounds", "6", "--posterior-steps", "4",
	"--alpha-samples", "5", "--posterior-particles", "2", "--samples", "2", "--k", "2", "--quiet"}

func TestTrainBNNShortRun(t *testing.T) {
	dir := writeFakeFMNIST(t, 140)
	path := filepath.Join(t.TempDir(), "out.json")
	args := append([]string{"train", "--model", "bnn", "--data-dir", dir, "--bound-samples", "2", "--weight-draws", "3",
		"--json", path}, tinyBNNFlags...)
	code, out, errOut := runCLI(args...)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"existing clients: accuracy", "new clients:      accuracy", "server-level (Thm 4.2)",
		"new-client (Lemma 4.6)", "mlp 784-16-10"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "note: labels5: at most 1200 images") {
		t.Errorf("the size note is missing from stderr %q", errOut)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Dataset, Partition, Split string
		Existing, New             struct{ Accuracy, CE float64 }
		Bounds                    *struct{ Server, NewClient float64 }
		History                   []float64            `json:"lml_history"`
		PerClient                 map[string][]float64 `json:"per_client"`
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Dataset != "fmnist" || rep.Partition != "labels5" || rep.Split != "small" || rep.Bounds == nil ||
		len(rep.History) != 6 ||
		!(rep.Existing.Accuracy >= 0 && rep.Existing.Accuracy <= 100) ||
		len(rep.PerClient["existing_accuracy"]) != 10 || len(rep.PerClient["new_ce"]) != 2 {
		t.Fatalf("bad JSON report: %s", raw)
	}
}

// Every flag is checked before any work: bad values, flags of the other
// model and a missing data directory are usage errors (exit 2).
func TestTrainBNNBadInput(t *testing.T) {
	dir := writeFakeFMNIST(t, 140)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "bnn", "--arch", "resnet"}, "unknown architecture"},
		{[]string{"--model", "svm"}, "unknown --model"},
		{[]string{"--model", "gp", "--data", "fmnist"}, "--model gp runs on --data polynomial"},
		{[]string{"--model", "bnn", "--data", "polynomial"}, "--model bnn runs on --data fmnist"},
		{[]string{"--arch", "mlp"}, "--arch does not apply to --model gp"},
		{[]string{"--model", "bnn", "--extra", "3"}, "--extra does not apply to --model bnn"},
		{[]string{"--model", "bnn", "--sigma-p", "1"}, "--sigma-p does not apply"},
		{[]string{"--model", "bnn", "--split", "huge"}, "unknown --split"},
		{[]string{"--model", "bnn", "--partition", "dirichlet", "--split", "small"},
			"--split is for --partition labels5"},
		{[]string{"--model", "bnn", "--partition", "dirichlet", "--alpha", "0"}, "--alpha 0"},
		{[]string{"--model", "bnn", "--alpha", "0.3"}, "--alpha and --clients are for --partition dirichlet"},
		{[]string{"--model", "bnn", "--partition", "iid"}, "unknown --partition"},
		{[]string{"--model", "bnn", "--samples", "0"}, "--samples 0"},
		{[]string{"--model", "bnn", "--hidden", "-1"}, "must be ≥ 1"},
		{[]string{"--model", "bnn", "--sigma-mu", "-1"}, "--sigma-mu"},
		{[]string{"--model", "bnn", "--posterior-lr", "NaN"}, "learning rate"},
		{[]string{"--model", "bnn", "--bound-loss", "hinge"}, "unknown --bound-loss"},
		{[]string{"--model", "bnn", "--p-min", "1"}, "--p-min 1"},
		{[]string{"--model", "bnn", "--k", "0"}, "--k 0"},
		{[]string{"--model", "bnn", "--tau", "2"}, "τ"},
		{[]string{"--model", "bnn", "--new-clients", "-1"}, "--new-clients -1"},
		{[]string{"--model", "bnn", "--max-images", "-5"}, "--max-images -5"},
		{[]string{"--model", "bnn", "--max-images", "100"}, "MaxImages 100"},
		{[]string{"--model", "bnn", "--pixels", "centred"}, `--pixels "centred": want unit or symmetric`},
		{[]string{"--model", "bnn", "--pixels", ""}, `--pixels "": want unit or symmetric`},
		{[]string{"--model", "gp", "--pixels", "symmetric"}, "--pixels"},
		{[]string{"--model", "bnn", "--data-dir", filepath.Join(dir, "nope")}, "apt-get install dataset-fashion-mnist"},
	} {
		args := append([]string{"train", "--quiet", "--rounds", "1"}, c.args...)
		if a := strings.Join(c.args, " "); strings.Contains(a, "--model bnn") && !strings.Contains(a, "--data-dir") {
			args = append(args, "--data-dir", dir)
		}
		code, _, errOut := runCLI(args...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 naming %q", c.args, code, errOut, c.want)
		}
	}
}

// pacpfl experiment fmnist: the table with the pFedBayes figures, and the
// JSON report exactly in the schema.
func TestExperimentFMNIST(t *testing.T) {
	dir := writeFakeFMNIST(t, 140)
	path := filepath.Join(t.TempDir(), "exp.json")
	args := append([]string{"experiment", "fmnist", "--data-dir", dir, "--seeds", "2", "--seed-base", "4", "--json",
		path}, tinyBNNFlags...)
	code, out, errOut := runCLI(args...)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"| PAC-PFL (ours) |", "| Vanilla (ours) |", "| Pooled (ours) |",
		"| pFedBayes (pFedBayes paper, MLP) | – | 89.05 ± 0.17 | – | 80.17 ± 0.19 |"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep map[string]any
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	if got := sortedKeys(rep); fmt.Sprint(got) != "[dataset methods partition seeds split]" {
		t.Errorf("top-level keys %v", got)
	}
	if rep["dataset"] != "fmnist" || rep["partition"] != "labels5" || rep["split"] != "small" ||
		fmt.Sprint(rep["seeds"]) != "[4 5]" {
		t.Errorf("report header: %s", raw)
	}
	methods := rep["methods"].(map[string]any)
	if fmt.Sprint(sortedKeys(methods)) != "[pacpfl pooled vanilla]" {
		t.Errorf("methods %v", sortedKeys(methods))
	}
	for name, m := range methods {
		groups := m.(map[string]any)
		if fmt.Sprint(sortedKeys(groups)) != "[existing new per_client]" {
			t.Errorf("%s: groups %v", name, sortedKeys(groups))
		}
		// Per client, per seed: their means over the clients average to
		// the group's figure (plot experiment draws them).
		per := groups["per_client"].(map[string]any)
		if fmt.Sprint(sortedKeys(per)) != "[existing_accuracy existing_ce new_accuracy new_ce]" {
			t.Errorf("%s: per-client metrics %v", name, sortedKeys(per))
		}
		for key, seeds := range per {
			if len(seeds.([]any)) != 2 {
				t.Fatalf("%s %s: %d seeds, want 2", name, key, len(seeds.([]any)))
			}
			sum := 0.0
			for _, vals := range seeds.([]any) {
				var xs []float64
				for _, v := range vals.([]any) {
					xs = append(xs, v.(float64))
				}
				sum += fl.Mean(xs)
			}
			group, metric, _ := strings.Cut(key, "_")
			want := groups[group].(map[string]any)[metric].(map[string]any)["mean"].(float64)
			if math.Abs(sum/2-want) > 1e-9*math.Max(1, math.Abs(want)) {
				t.Errorf("%s %s: the per-client values average to %v, the report says %v", name, key, sum/2, want)
			}
		}
		for _, gname := range []string{"existing", "new"} {
			metrics := groups[gname].(map[string]any)
			if fmt.Sprint(sortedKeys(metrics)) != "[accuracy ce]" {
				t.Errorf("%s: metrics %v", name, sortedKeys(metrics))
			}
			acc := metrics["accuracy"].(map[string]any)
			if mean, ok := acc["mean"].(float64); !ok || mean < 0 || mean > 100 || acc["ci95"] == nil {
				t.Errorf("%s: accuracy %v (percent, with a CI over 2 seeds)", name, acc)
			}
		}
	}
	// Methods are checked before any work.
	for _, bad := range [][]string{{"--methods", "pacpfl,pfedgp"}, {"--methods", "vanilla,vanilla"}, {"--seeds", "0"},
		{"--seed", "3"}, {"--model", "gp"}} {
		code, _, errOut := runCLI(append([]string{"experiment", "fmnist", "--data-dir", dir}, bad...)...)
		if code != exitUsage {
			t.Errorf("%v: exit %d (%q), want 2", bad, code, errOut)
		}
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// pacpfl bnn eval: the estimate and its gradient are recomputed here from the
// printed φ and ε with a hand-written MLP, following only the documented
// layout (finite differences for the gradient).
func TestBNNEvalRecomputable(t *testing.T) {
	const H, C, D, L = 3, 3, 4, 2
	csv := filepath.Join(t.TempDir(), "d.csv")
	rng := rand.New(rand.NewPCG(5, 6))
	var sb strings.Builder
	sb.WriteString("label,f1,f2,f3,f4\n")
	type row struct {
		y int
		x []float64
	}
	var rows []row
	for range 9 {
		r := row{y: rng.IntN(C)}
		for range D {
			r.x = append(r.x, rng.NormFloat64())
		}
		rows = append(rows, r)
		fmt.Fprintf(&sb, "%d,%s\n", r.y, strings.Trim(strings.Join(strings.Fields(fmt.Sprint(r.x)), ","), "[]"))
	}
	if err := os.WriteFile(csv, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI("bnn", "eval", "--data", csv, "--arch", "mlp", "--hidden", fmt.Sprint(H), "--classes",
		fmt.Sprint(C),
		"--init-seed", "7", "--samples", fmt.Sprint(L), "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res struct {
		LML        float64
		NumWeights int `json:"num_weights"`
		Phi, Grad  []float64
		Eps        [][]float64
		Layout     []struct {
			Name   string
			Shape  []int
			Offset int
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	nw := res.NumWeights
	if nw != H*D+H+C*H+C || len(res.Phi) != 2*nw || len(res.Eps) != L || len(res.Eps[0]) != nw ||
		len(res.Grad) != 2*nw {
		t.Fatalf("sizes: |θ| %d, φ %d, ε %d×%d, grad %d", nw, len(res.Phi), len(res.Eps), len(res.Eps[0]),
			len(res.Grad))
	}
	off := map[string]int{}
	for _, b := range res.Layout {
		off[b.Name] = b.Offset
	}
	estimate := func(phi []float64) float64 {
		s := make([]float64, L)
		for j := range L {
			th := make([]float64, nw)
			for i := range th {
				th[i] = phi[i] + math.Exp(phi[nw+i]/2)*res.Eps[j][i]
			}
			w1, b1, w2, b2 := off["mu.dense1.weight"], off["mu.dense1.bias"], off["mu.dense2.weight"],
				off["mu.dense2.bias"]
			for _, r := range rows {
				h := make([]float64, H)
				for o := range H {
					a := th[b1+o]
					for i := range D {
						a += th[w1+o*D+i] * r.x[i]
					}
					h[o] = math.Max(a, 0)
				}
				z := make([]float64, C)
				mx := math.Inf(-1)
				for c := range C {
					z[c] = th[b2+c]
					for o := range H {
						z[c] += th[w2+c*H+o] * h[o]
					}
					mx = math.Max(mx, z[c])
				}
				sum := 0.0
				for _, v := range z {
					sum += math.Exp(v - mx)
				}
				s[j] += z[r.y] - mx - math.Log(sum)
			}
		}
		mx := math.Max(s[0], s[1])
		return mx + math.Log(math.Exp(s[0]-mx)+math.Exp(s[1]-mx)) - math.Log(L)
	}
	if v := estimate(res.Phi); math.Abs(v-res.LML) > 1e-9*math.Abs(v) {
		t.Fatalf("printed lml %.15g, recomputed %.15g", res.LML, v)
	}
	for i := range res.Phi {
		p := append([]float64(nil), res.Phi...)
		const h = 1e-6
		p[i] += h
		fp := estimate(p)
		p[i] -= 2 * h
		fd := (fp - estimate(p)) / (2 * h)
		if math.Abs(fd-res.Grad[i]) > 1e-5*math.Max(1, math.Abs(fd)) {
			t.Errorf("grad[%d]: printed %.10g, finite differences %.10g", i, res.Grad[i], fd)
		}
	}
	for _, bad := range [][]string{{"--data", csv}, {"--init-seed", "1"},
		{"--data", csv, "--init-seed", "1", "--arch", "vgg"},
		{"--data", csv, "--init-seed", "1", "--classes", "1"}, {"--data", csv, "--init-seed", "1", "--image", "4x1"}} {
		if code, _, _ := runCLI(append([]string{"bnn", "eval"}, bad...)...); code != exitUsage {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
	if code, _, errOut := runCLI("bnn", "eval", "--data", csv, "--init-seed", "1", "--classes",
		"2"); code != exitError || !strings.Contains(errOut, "label 2") {
		t.Errorf("label outside the classes: exit %d, %q", code, errOut)
	}
}

func TestBenchBNN(t *testing.T) {
	code, out, errOut := runCLI("bench", "bnn", "--arch", "mlp", "--reps", "1", "--batch", "4", "--k", "2", "--samples",
		"2")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"client_update_k2", "lml38_one_particle", "net_fwd_bwd_L2", "elementwise share"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if code, _, _ := runCLI("bench", "bnn", "--k", "0"); code != exitUsage {
		t.Errorf("--k 0: exit %d", code)
	}
	if code, _, _ := runCLI("bench", "bnn", "--arch", "lstm"); code != exitUsage {
		t.Errorf("--arch lstm: exit %d", code)
	}
}

// experiment fmnist's help gives the defaults that bnnDefaults and
// dirichletDefaults set for --clients, --new-clients and --max-images on
// each partition (not the Polynomial data set's), and train's help names
// both models'.
func TestFMNISTClientFlagsHelp(t *testing.T) {
	_, out, _ := runCLI("experiment", "fmnist", "-h")
	help := func(name string) string {
		i := strings.Index(out, "  -"+name+" int")
		require.GreaterOrEqual(t, i, 0, name)
		h := out[i : i+strings.Index(out[i:], ")\n")+1]
		assert.NotContains(t, h, "Polynomial", name)
		return h
	}
	for _, part := range []string{partLabels5, partDirichlet} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		f, bf := newTrainFlags(), newBNNFlags()
		f.registerTraining(fs, true)
		bf.registerAll(fs)
		fmnistClientFlags(fs)
		require.NoError(t, fs.Parse([]string{"--partition", part}))
		bf.set = map[string]bool{"partition": true}
		bf.bnnDefaults(&f)
		bf.dirichletDefaults(&f)
		assert.Contains(t, help("new-clients"), fmt.Sprintf("%d for %s", f.poly.New, part))
		if part == partLabels5 {
			assert.Equal(t, 0, bf.dir.MaxImages)
			assert.Contains(t, help("max-images"), "0 for labels5")
			continue
		}
		assert.Equal(t, strconv.Itoa(f.poly.Existing), fs.Lookup("clients").DefValue)
		assert.Contains(t, help("clients"), "(default "+strconv.Itoa(f.poly.Existing)+")")
		assert.Contains(t, help("max-images"), fmt.Sprintf("%d for dirichlet", bf.dir.MaxImages))
		assert.Equal(t, []int{300, 100, 60000}, []int{f.poly.Existing, f.poly.New, bf.dir.MaxImages},
			"the split of docs/math.md's FedVI runs")
	}
	// experiment fmnist applies them before it checks the flags: on
	// dirichlet the server may sample at most the 300 participating clients.
	st, _, errs := runCLI("experiment", "fmnist", "--partition", "dirichlet", "--clients-per-round", "301",
		"--data-dir", t.TempDir())
	assert.Equal(t, exitUsage, st)
	assert.Contains(t, errs, "--clients-per-round 301 exceeds the 300 existing clients")
	st, _, errs = runCLI("experiment", "fmnist", "--partition", "dirichlet", "--clients-per-round", "300", "--data-dir",
		t.TempDir())
	assert.Equal(t, exitUsage, st)
	assert.Contains(t, errs, "train-images-idx3-ubyte.gz is missing", "300 accepted; the data read next")
	// PAC-PFL's --clients-per-round (default 10) binds only when PAC-PFL
	// runs: FedVI's rows on 8 clients go on to read the data.
	st, _, errs = runCLI("experiment", "fmnist", "--partition", "dirichlet", "--clients", "8", "--methods", "fedvi",
		"--data-dir", t.TempDir())
	assert.Equal(t, exitUsage, st)
	assert.Contains(t, errs, "train-images-idx3-ubyte.gz is missing")
	st, _, errs = runCLI("experiment", "fmnist", "--partition", "dirichlet", "--clients", "8", "--methods",
		"fedvi,pacpfl", "--data-dir", t.TempDir())
	assert.Equal(t, exitUsage, st)
	assert.Contains(t, errs, "--clients-per-round 10 exceeds the 8 existing clients")
	st, _, errs = runCLI("experiment", "fmnist", "--partition", "dirichlet", "--clients", "8", "--methods", "fedvi",
		"--rounds", "-1", "--data-dir", t.TempDir())
	assert.Equal(t, exitUsage, st)
	assert.Contains(t, errs, "--rounds -1 must be ≥ 0", "the server flags' values are still checked")
	// Given flags win over the partition's defaults.
	var f trainFlags
	bf := bnnFlags{set: map[string]bool{"clients": true, "new-clients": true, "max-images": true}}
	bf.partition, bf.dir.MaxImages = partDirichlet, 7
	f.poly.Existing, f.poly.New = 5, 1
	bf.dirichletDefaults(&f)
	assert.Equal(t, []int{5, 1, 7}, []int{f.poly.Existing, f.poly.New, bf.dir.MaxImages})
	_, out, _ = runCLI("train", "-h")
	i := strings.Index(out, "  -clients int")
	require.GreaterOrEqual(t, i, 0)
	assert.Contains(t, out[i:i+strings.Index(out[i:], ")\n")],
		"--partition dirichlet (default "+strconv.Itoa(bnnClients))
}

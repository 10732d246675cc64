package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/lml"
	"github.com/pacpfl/pacpfl/modelfile"
	"github.com/pacpfl/pacpfl/predict"
)

// federated is a small CSV of 4 clients and a new one, each a noisy sine
// of its own phase (regression) or its sign (classification), split into
// training and test rows by the split column.
func federated(t *testing.T, task data.Task) *data.Federated {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	var b strings.Builder
	b.WriteString("client,x1,y,split\n")
	for c := 1; c <= 5; c++ {
		for j := range 24 {
			x := 4*rng.Float64() - 2
			v := math.Sin(2*x+float64(c)) + 0.1*rng.NormFloat64()
			y := fmt.Sprintf("%.6f", v)
			if task == data.Classification {
				y = map[bool]string{true: "up", false: "down"}[v > 0]
			}
			split := "train"
			if j%4 == 0 {
				split = "test"
			}
			fmt.Fprintf(&b, "client%03d,%.6f,%s,%s\n", c, x, y, split)
		}
	}
	rec, err := data.ReadCSV(strings.NewReader(b.String()), "t.csv",
		data.CSVSpec{ClientColumn: "client", TargetColumn: "y", SplitColumn: "split", Task: task})
	if err != nil {
		t.Fatal(err)
	}
	fed, err := rec.Federate(data.FederateConfig{NewClients: []string{"client005"}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return fed
}

func gpOptions() *GPOptions {
	o := fl.DefaultPACPFLOptions()
	o.Server.K, o.Server.Rounds, o.Server.LR = 2, 6, 0.01
	o.Bounds.PriorSamples, o.Bounds.FuncSamples, o.Bounds.Learned = 4, 4, nil
	o.Bounds.A, o.Bounds.B = -3, 3
	return &GPOptions{Options: o}
}

// A GP run's model predicts every client as the run reports it (the saved
// model's predictor, the same bits), is the server's training of the same
// clients, and carries the bounds asked for.
func TestRunGP(t *testing.T) {
	fed := federated(t, data.Regression)
	o := Options{Source: "t.csv", ClientColumn: "client", Seed: 9, SaveClients: true, GP: gpOptions()}
	res, err := Run(context.Background(), fed, o)
	if err != nil {
		t.Fatal(err)
	}
	m := res.Model
	if m.Kind != modelfile.KindGP || m.Task != modelfile.TaskRegression || len(m.Clients) != 4 || m.K != 2 ||
		m.Training["data"] != "t.csv" || m.Training["rounds"] != "6" {
		t.Fatalf("model %+v", m)
	}
	// The saved file predicts what the run reported, to the bit.
	b, err := modelfile.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := modelfile.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := predict.New(m2)
	if err != nil {
		t.Fatal(err)
	}
	cs := make([]predict.Client, len(fed.Existing))
	for i, c := range fed.Existing {
		cs[i] = predict.Client{ID: fed.ExistingIDs[i], X: c.X, Y: c.Y, XTest: c.XTest}
	}
	outs, err := pr.PredictClients(cs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range outs {
		a, b := res.Existing[i].Mixture, outs[i].Mixture
		if a == nil || b == nil || len(a.Means) == 0 || fmt.Sprint(a.Means) != fmt.Sprint(b.Means) ||
			fmt.Sprint(a.Vars) != fmt.Sprint(b.Vars) {
			t.Errorf("client %d: the run's predictions differ from the saved model's", i)
		}
	}
	if len(res.New) != 1 {
		t.Errorf("%d new-client outputs", len(res.New))
	}
	// The training is the server's on the same clients.
	g := &fl.GPModel{Model: lml.DefaultModel(fed.D), Beta: o.GP.Options.Beta}
	want, err := fl.RunPACPFL(fed.Dataset, g, o.GP.Options, fl.MethodPACPFL)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(want.Train.Particles) != fmt.Sprint(res.Train.Particles) {
		t.Error("particles differ from fl.RunPACPFL's")
	}
	if res.Bounds.Bounds == nil {
		t.Error("no bounds computed")
	}
}

// A BNN run on a classification file records its MLP and predicts class
// probabilities.
func TestRunBNN(t *testing.T) {
	fed := federated(t, data.Classification)
	bo := fl.DefaultBNNOptions()
	bo.Server.K, bo.Server.Rounds, bo.Server.ClientsPerRound, bo.Server.Batch = 2, 3, 2, 8
	bo.Bounds.PriorSamples = 0
	model := fl.NewBNNModel(lml.BNN{})
	model.Posterior = lml.BNNPosteriorOptions{Particles: 2, Steps: 3, LR: 1e-2, Batch: 8, AlphaSamples: 4}
	res, err := Run(context.Background(), fed,
		Options{ClientColumn: "client", Seed: 2, BNN: &BNNOptions{Options: bo, Model: model, Hidden: 5}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Model.Kind != modelfile.KindBNN || res.Model.BNN.Hidden != 5 || res.Model.BNN.InC != fed.D ||
		res.Model.BNN.Classes != 2 {
		t.Errorf("BNN model %+v", res.Model.BNN)
	}
	if p := res.Existing[0].Probs; len(p) != 2*len(fed.Existing[0].YTest) {
		t.Errorf("%d probabilities for %d test rows", len(p), len(fed.Existing[0].YTest))
	}
	// The test-set certificate on the 0–1 error, against the errors
	// counted on the predictions.
	errs, n := 0, 0
	for i, c := range fed.Existing {
		p := res.Existing[i].Probs
		for j, y := range c.YTest {
			pred := 0.0 // the arg max, the lower class on a tie
			if p[2*j+1] > p[2*j] {
				pred = 1
			}
			if pred != y {
				errs++
			}
		}
		n += len(c.YTest)
	}
	ts := res.Certification.TestSet
	if ts == nil || ts.Loss != "zero_one" || ts.Existing.N != n ||
		math.Abs(ts.Existing.Mean-float64(errs)/float64(n)) > 1e-12 ||
		!(ts.Existing.Bound >= ts.Existing.Mean && ts.Existing.Bound <= 1) {
		t.Errorf("0–1 certificate %+v, want %d errors in %d test rows", ts, errs, n)
	}
}

func TestRunRefuses(t *testing.T) {
	fed := federated(t, data.Regression)
	if _, err := Run(context.Background(), fed, Options{}); err == nil {
		t.Error("no model options accepted")
	}
	if _, err := Run(context.Background(), fed, Options{GP: gpOptions(), BNN: &BNNOptions{}}); err == nil {
		t.Error("both model options accepted")
	}
	bad := gpOptions()
	bad.Options.Server.K = 0
	var ce *ConfigError
	if _, err := Run(context.Background(), fed, Options{GP: bad}); !errors.As(err, &ce) {
		t.Errorf("k = 0: %v, want a ConfigError", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	o := gpOptions()
	o.Options.Server.Rounds = 100
	o.Options.Server.Progress = func(e fl.RoundEvent) {
		if e.Round == 2 {
			cancel()
		}
	}
	if _, err := Run(ctx, fed, Options{GP: o}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled at round 2: %v", err)
	}
}

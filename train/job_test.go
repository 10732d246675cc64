package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/option"
	"github.com/pacpfl/pacpfl/report"
)

// smallPolynomial is a Polynomial data set small enough for a test run.
func smallPolynomial(t *testing.T) *data.Dataset {
	t.Helper()
	c := data.DefaultPolynomial()
	c.Existing, c.New, c.Extra, c.Seed = 4, 1, 0, 5
	ds, err := data.Polynomial(c)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// A GP job trains and reports what fl.RunPACPFL does on the same data and
// options, and its JSON report records the run's settings.
func TestJobGPIsRunPACPFL(t *testing.T) {
	ds := smallPolynomial(t)
	o := gpOptions().Options
	o.Bounds.PriorSamples = 0
	inf := fl.GPInference{Mode: fl.InferenceExact, Seed: 3}
	job := &Job{GP: &GPJob{Data: ds, Options: o, Inference: inf,
		Info: SyntheticInfo{Dataset: "polynomial", Seed: 3, Aggregate: "sum", DPClip: 10, DPMechanism: "laplace"}}}
	out, err := job.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	g := fl.NewGPModel(ds.D)
	g.Inference = inf
	want, err := fl.RunPACPFL(ds, g, o, fl.MethodPACPFL)
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Train.Particles) == 0 || len(out.Result.Train.Particles) != len(want.Train.Particles) {
		t.Fatalf("particles: %d, want %d", len(out.Result.Train.Particles), len(want.Train.Particles))
	}
	for i, p := range want.Train.Particles {
		if math.Float64bits(out.Result.Train.Particles[i]) != math.Float64bits(p) {
			t.Fatalf("particle %d: %v, want %v", i, out.Result.Train.Particles[i], p)
		}
	}
	text, js := out.Report(2.5)
	rep, ok := js.(report.Train)
	if !ok {
		t.Fatalf("JSON report %T, want report.Train", js)
	}
	if rep.Dataset != "polynomial" || rep.Seed != 3 || rep.TotalSeconds != 2.5 || rep.Config["k"] != o.Server.K ||
		rep.Config["clients"] != 4 || rep.Config["gp_inference"] != fl.InferenceExact || rep.Config["dp_clip"] != 10.0 {
		t.Fatalf("report %+v", rep)
	}
	if text.Existing.Clients != 4 || text.New.Clients != 1 || text.Private || text.NoRounds {
		t.Fatalf("text report %+v", text)
	}
}

// A CSV job is train.Run on its data and options, and reports as the
// run's Result does with the command's time.
func TestJobCSVIsRun(t *testing.T) {
	fed := federated(t, data.Regression)
	o := Options{Source: "t.csv", ClientColumn: "client", Seed: 9, GP: gpOptions()}
	info := ReportInfo{Source: "t.csv", Task: "regression", ClientColumn: "client", Seed: 9}
	job := &Job{CSV: &CSVJob{Data: fed, Options: o, Info: info}}
	out, err := job.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Run(context.Background(), fed, o)
	if err != nil {
		t.Fatal(err)
	}
	em, nm := out.CSV.Metrics()
	wem, wnm := want.Metrics()
	for _, p := range [][2]float64{{em.MeanFirst, wem.MeanFirst}, {em.MeanSecond, wem.MeanSecond},
		{nm.MeanFirst, wnm.MeanFirst}, {nm.MeanSecond, wnm.MeanSecond}} {
		if math.Float64bits(p[0]) != math.Float64bits(p[1]) {
			t.Fatalf("metrics %v, want %v", p[0], p[1])
		}
	}
	_, js := out.Report(7)
	rep := js.(report.Train)
	if rep.TotalSeconds != 7 || float64(rep.Existing.RSMSE) != wem.MeanFirst || rep.Config["data"] != "t.csv" {
		t.Fatalf("report %+v", rep)
	}
}

// Remote clients replace the job's own: the run trains with what remote
// returns, and fails with its error.
func TestJobRemoteClients(t *testing.T) {
	ds := smallPolynomial(t)
	o := gpOptions().Options
	o.Bounds.PriorSamples = 0
	job := &Job{GP: &GPJob{Data: ds, Options: o, Inference: fl.GPInference{Mode: fl.InferenceExact}}}
	boom := errors.New("no clients")
	if _, err := job.Run(context.Background(), func() ([]fl.Client, error) { return nil, boom }); !errors.Is(
		err,
		boom,
	) {
		t.Fatalf("error %v, want %v", err, boom)
	}
}

// A job stops between two rounds once its context is done, with the
// context's error, and a job without exactly one mode is refused.
func TestJobStopsAndRefuses(t *testing.T) {
	ds := smallPolynomial(t)
	o := gpOptions().Options
	o.Bounds.PriorSamples = 0
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	job := &Job{GP: &GPJob{Data: ds, Options: o, Inference: fl.GPInference{Mode: fl.InferenceExact}}}
	if _, err := job.Run(ctx, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	for _, bad := range []*Job{{}, {GP: job.GP, CSV: &CSVJob{}}, {CSV: &CSVJob{}}} {
		if _, err := bad.Run(context.Background(), nil); err == nil {
			t.Fatalf("job %+v: no error", bad)
		}
	}
}

// NewCSVJob reads the file, tells what was dropped, and builds the job of
// the task with the options of the federated data.
func TestNewCSVJob(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "d.csv")
	var b strings.Builder
	b.WriteString("client,x,y\n")
	for i := range 40 {
		fmt.Fprintf(&b, "c%d,%d,%g\n", i%4, i, math.Sin(float64(i)))
	}
	b.WriteString("c0,NA,1\n")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := data.CSVSpec{ClientColumn: "client", TargetColumn: "y", Task: data.Regression, DropMissing: true}
	var notes strings.Builder
	src := CSVSource{Path: path, Spec: spec, Federate: data.FederateConfig{TestFraction: 0.25, Seed: 4}, Notes: &notes}
	var clients int
	job, err := NewCSVJob(src, func(ds *data.Dataset) (*GPOptions, error) {
		clients = len(ds.Existing)
		return gpOptions(), nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if clients != 4 || job.CSV == nil || job.CSV.Options.GP == nil || job.CSV.Info.Seed != 4 ||
		job.CSV.Info.TestFraction != 0.25 || job.CSV.Options.Source != path || job.CSV.Records.Dropped != 1 {
		t.Fatalf("job %+v", job.CSV)
	}
	if notes.String() != "note: 1 row(s) with a missing value dropped (--drop-missing)\n" {
		t.Fatalf("notes %q", notes.String())
	}
	boom := errors.New("bad options")
	if _, err := NewCSVJob(src, func(*data.Dataset) (*GPOptions, error) { return nil, boom }, nil); !errors.Is(
		err,
		boom,
	) {
		t.Fatalf("error %v, want %v", err, boom)
	}
	src.Spec.Task = data.Classification
	_, err = NewCSVJob(src, nil, nil)
	var le *LabelsError
	var fe *option.FieldError
	if !errors.As(err, &le) || !errors.As(err, &fe) || fe.Fields[0] != "Spec.Task" ||
		!strings.HasSuffix(fe.Message("-t"), "(-t regression)") {
		t.Fatalf("error %v, want a LabelsError", err)
	}
}

// A GP job with Certify reports the certificates of fl.CertifyGP on the
// same model and seed, in the text and in the JSON report; a data set
// the certificates cannot cover says why.
func TestJobGPCertify(t *testing.T) {
	ds := smallPolynomial(t)
	o := gpOptions().Options
	o.Bounds.PriorSamples, o.Bounds.Learned = 0, nil
	inf := fl.GPInference{Mode: fl.InferenceExact}
	co := fl.GPCertifyOptions{Certify: fl.CertifyOptions{Draws: 20, Widths: []float64{0.01},
		PriorWidths: []float64{0.1}, Scales: []float64{1}}, TestDraws: 2}
	job := &Job{GP: &GPJob{Data: ds, Options: o, Inference: inf, Info: SyntheticInfo{Seed: 7}, Certify: &co}}
	out, err := job.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	c := out.Certification
	if c == nil || c.Certificates == nil || c.Unavailable != "" || !(c.Seconds > 0) {
		t.Fatalf("certification %+v", c)
	}
	g := fl.NewGPModel(ds.D)
	g.Inference = inf
	co.Seed = 7
	want, err := fl.CertifyGP(ds, g, o, out.Result.Train.Particles, co)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Certificates; got.Existing != want.Existing || got.TestSet != nil ||
		got.ExistingMeasured != want.ExistingMeasured {
		t.Fatalf("certificates %+v, want %+v", got, want)
	}
	// The test-set certificates are CertifyGP's, reported once.
	if !reflect.DeepEqual(c.TestSet, want.TestSet) || c.TestSet.New == nil {
		t.Fatalf("test-set certificates %+v, want %+v", c.TestSet, want.TestSet)
	}
	text, js := out.Report(1)
	if rep := js.(report.Train); rep.Certification != c || text.Certification != c {
		t.Fatalf("the reports do not carry the certification")
	}
	// One existing client: no client is left for A.
	c1 := data.DefaultPolynomial()
	c1.Existing, c1.New, c1.Extra = 1, 1, 0
	one, err := data.Polynomial(c1)
	if err != nil {
		t.Fatal(err)
	}
	job = &Job{GP: &GPJob{Data: one, Options: o, Inference: inf, Certify: &co}}
	job.GP.Options.Server.ClientsPerRound = 1
	if out, err = job.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if c := out.Certification; c.Certificates != nil || !strings.Contains(c.Unavailable, "no client in A") ||
		c.TestSet == nil {
		t.Fatalf("certification of one client %+v", c)
	}
	// Without Certify, the test-set certificates alone.
	job = &Job{GP: &GPJob{Data: ds, Options: o, Inference: inf, Info: SyntheticInfo{Seed: 7}}}
	if out, err = job.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if c := out.Certification; c == nil || c.Certificates != nil || c.Unavailable != "" ||
		!reflect.DeepEqual(c.TestSet, want.TestSet) {
		t.Fatalf("default certification %+v, want the test-set certificates %+v", c, want.TestSet)
	}
}

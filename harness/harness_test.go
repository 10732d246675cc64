package harness

import (
	"context"
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
)

// fakeMethod returns a result made from the seed and its name's length, and
// reports rounds of progress.
type fakeMethod struct {
	name   string
	rounds int
	err    error
	calls  *[]string
}

func (f fakeMethod) Name() string { return f.name }

func (f fakeMethod) Run(ctx context.Context, ds *data.Dataset, seed uint64, obs Observer) (*fl.MethodResult, error) {
	if f.calls != nil {
		*f.calls = append(*f.calls, f.name)
	}
	if f.err != nil {
		return nil, f.err
	}
	for r := 1; r <= f.rounds; r++ {
		obs.Observe(Event{Kind: Round, Round: r, Rounds: f.rounds, Value: -float64(r)})
	}
	x := float64(seed) + float64(len(f.name))/10
	return &fl.MethodResult{
		Method: f.name,
		Existing: fl.GroupMetrics{RSMSE: []float64{x, x + 1}, CE: []float64{x / 10, math.NaN()}, MeanRSMSE: x + 0.5,
			MeanCE: x / 10},
		New:     fl.GroupMetrics{RSMSE: []float64{2 * x}, CE: []float64{x / 20}, MeanRSMSE: 2 * x, MeanCE: x / 20},
		Seconds: float64(seed),
	}, nil
}

func fakeData(built *[]uint64) func(uint64) (*data.Dataset, error) {
	return func(seed uint64) (*data.Dataset, error) {
		*built = append(*built, seed)
		return &data.Dataset{}, nil
	}
}

func TestRunSummarisesEachMethodOverTheSeeds(t *testing.T) {
	var built []uint64
	var events []Event
	var calls []string
	var seen []*data.Dataset
	build := fakeData(&built)
	e := Experiment{
		Data: func(seed uint64) (*data.Dataset, error) {
			ds, err := build(seed)
			seen = append(seen, ds)
			return ds, err
		},
		Methods: []Method{fakeMethod{name: "a", rounds: 2, calls: &calls}, fakeMethod{name: "bbb", calls: &calls}},
		Seeds:   []uint64{3, 5, 10},
	}
	rep, err := Run(context.Background(), e, ObserverFunc(func(ev Event) { events = append(events, ev) }))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(built, e.Seeds) {
		t.Errorf("data built for seeds %v, want each of %v once", built, e.Seeds)
	}
	if want := []string{"a", "bbb", "a", "bbb", "a", "bbb"}; !reflect.DeepEqual(calls, want) {
		t.Errorf("runs %v, want seed by seed %v", calls, want)
	}
	if !reflect.DeepEqual(rep.Seeds, e.Seeds) || len(rep.Methods) != 2 || rep.Methods[0].Name != "a" ||
		rep.Methods[1].Name != "bbb" {
		t.Fatalf("report seeds %v, methods %d", rep.Seeds, len(rep.Methods))
	}
	for _, mr := range rep.Methods {
		var ex, exCE, nw []float64
		var secs float64
		for i, s := range e.Seeds {
			x := float64(s) + float64(len(mr.Name))/10
			ex, exCE, nw = append(ex, x+0.5), append(exCE, x/10), append(nw, 2*x)
			secs += float64(s)
			if got := mr.PerClient[ExistingRSMSE][i]; !reflect.DeepEqual(got, []float64{x, x + 1}) {
				t.Errorf("%s seed %d: per-client existing RSMSE %v", mr.Name, s, got)
			}
			if got := mr.PerClient[ExistingCE][i]; len(got) != 2 || !math.IsNaN(got[1]) {
				t.Errorf("%s seed %d: per-client existing CE %v, want the NaN kept", mr.Name, s, got)
			}
		}
		if !reflect.DeepEqual(mr.PerSeed[ExistingRSMSE], ex) || !reflect.DeepEqual(mr.PerSeed[NewRSMSE], nw) ||
			!reflect.DeepEqual(mr.PerSeed[ExistingCE], exCE) {
			t.Errorf("%s: per-seed values %v", mr.Name, mr.PerSeed)
		}
		if got, want := mr.Summary[ExistingRSMSE], fl.Summarise(ex); got != want {
			t.Errorf("%s: summary %+v, want %+v", mr.Name, got, want)
		}
		if got := mr.Summary[NewRSMSE]; !(got.CI95 > 0) {
			t.Errorf("%s: three seeds gave no interval: %+v", mr.Name, got)
		}
		if mr.Seconds != secs || len(mr.Results) != 3 {
			t.Errorf("%s: seconds %v (want %v), %d results", mr.Name, mr.Seconds, secs, len(mr.Results))
		}
		if _, ok := mr.PerSeed[ExistingModePurity]; ok {
			t.Errorf("%s: a mode purity without a mixture", mr.Name)
		}
	}
	// Per seed: its data, a's two rounds, a done, bbb done; every event
	// names its run.
	if len(events) != 3*5 {
		t.Fatalf("%d events, want 15", len(events))
	}
	for si := range 3 {
		if events[5*si].Kind != DataReady {
			t.Errorf("event %d: %+v, want seed %d's data first", 5*si, events[5*si], si)
		}
	}
	var ready []Event
	events = slices.DeleteFunc(events, func(ev Event) bool {
		if ev.Kind == DataReady {
			ready = append(ready, ev)
		}
		return ev.Kind == DataReady
	})
	for i, ev := range ready {
		if ev.Data != seen[i] || ev.Seed != e.Seeds[i] || ev.SeedIndex != i || ev.Seeds != 3 || ev.Method != "" {
			t.Errorf("data event %d: %+v", i, ev)
		}
	}
	if len(ready) != 3 || len(events) != 12 {
		t.Fatalf("%d data events, %d others", len(ready), len(events))
	}
	for i, ev := range events {
		si := i / 4
		want := Event{Kind: Round, Method: "a", Seed: e.Seeds[si], SeedIndex: si, Seeds: 3, Round: i%4 + 1, Rounds: 2,
			Value: -float64(i%4 + 1)}
		switch i % 4 {
		case 2:
			want = Event{Kind: Done, Method: "a", Seed: e.Seeds[si], SeedIndex: si, Seeds: 3}
		case 3:
			want = Event{Kind: Done, Method: "bbb", Seed: e.Seeds[si], SeedIndex: si, Seeds: 3}
		}
		if want.Kind == Done {
			if ev.Result == nil || ev.Result.Method != want.Method || !math.IsNaN(ev.Value) {
				t.Errorf("event %d: %+v, want the result of %s", i, ev, want.Method)
			}
			// The seed's data set, the one the methods ran on.
			if ev.Data == nil || ev.Data != seen[si] {
				t.Errorf("event %d: data %p, the seed's %p", i, ev.Data, seen[si])
			}
			ev.Result, ev.Value, ev.Data = nil, 0, nil
		}
		if ev != want {
			t.Errorf("event %d: %+v, want %+v", i, ev, want)
		}
	}
}

func TestRunOneSeedHasNoInterval(t *testing.T) {
	var built []uint64
	rep, err := Run(context.Background(),
		Experiment{Data: fakeData(&built), Methods: []Method{fakeMethod{name: "a"}}, Seeds: []uint64{1}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for key, s := range rep.Methods[0].Summary {
		if !math.IsNaN(s.CI95) || math.IsNaN(s.Mean) {
			t.Errorf("%s: %+v, want a mean and no interval", key, s)
		}
	}
}

func TestRunRefusesBadExperiments(t *testing.T) {
	var built []uint64
	d := fakeData(&built)
	a := fakeMethod{name: "a"}
	for _, c := range []struct {
		e    Experiment
		want string
	}{
		{Experiment{Methods: []Method{a}, Seeds: []uint64{1}}, "no data"},
		{Experiment{Data: d, Seeds: []uint64{1}}, "no methods"},
		{Experiment{Data: d, Methods: []Method{a}}, "no seeds"},
		{Experiment{Data: d, Methods: []Method{a, nil}, Seeds: []uint64{1}}, "method 1 is nil"},
		{Experiment{Data: d, Methods: []Method{a, fakeMethod{name: "a"}}, Seeds: []uint64{1}}, `"a" appears twice`},
		{Experiment{Data: d, Methods: []Method{a}, Seeds: []uint64{1, 2, 1}}, "seed 1 appears twice"},
	} {
		_, err := Run(context.Background(), c.e, nil)
		if !errors.Is(err, ErrBadExperiment) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want ErrBadExperiment naming %q", err, c.want)
		}
	}
	if len(built) != 0 {
		t.Errorf("data built for a bad experiment: %v", built)
	}
}

func TestRunStopsAtTheFirstError(t *testing.T) {
	var built []uint64
	var calls []string
	boom := errors.New("boom")
	e := Experiment{Data: fakeData(&built), Methods: []Method{fakeMethod{name: "a", calls: &calls},
		fakeMethod{name: "b", err: boom, calls: &calls}, fakeMethod{name: "c", calls: &calls}}, Seeds: []uint64{7, 8}}
	_, err := Run(context.Background(), e, nil)
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "b, seed 7") {
		t.Errorf("error %v, want boom wrapped with the method and the seed", err)
	}
	if !reflect.DeepEqual(calls, []string{"a", "b"}) {
		t.Errorf("runs %v after the error", calls)
	}
	dataErr := errors.New("no file")
	_, err = Run(context.Background(), Experiment{Data: func(uint64) (*data.Dataset, error) { return nil, dataErr },
		Methods: []Method{fakeMethod{name: "a"}}, Seeds: []uint64{4}}, nil)
	if !errors.Is(err, dataErr) || !strings.Contains(err.Error(), "seed 4") {
		t.Errorf("error %v, want the data error with its seed", err)
	}
}

// nilResult returns neither a result nor an error.
type nilResult struct{}

func (nilResult) Name() string { return "nil" }
func (nilResult) Run(context.Context, *data.Dataset, uint64, Observer) (*fl.MethodResult, error) {
	return nil, nil
}

func TestRunRefusesAMissingResult(t *testing.T) {
	var built []uint64
	_, err := Run(context.Background(),
		Experiment{Data: fakeData(&built), Methods: []Method{nilResult{}}, Seeds: []uint64{1}}, nil)
	if err == nil || !strings.Contains(err.Error(), "no result") {
		t.Errorf("error %v, want one about the missing result", err)
	}
}

func TestRunEndsWhenTheContextIsDone(t *testing.T) {
	var built []uint64
	var calls []string
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e := Experiment{Data: fakeData(&built), Methods: []Method{fakeMethod{name: "a", calls: &calls},
		fakeMethod{name: "b", calls: &calls}}, Seeds: []uint64{1, 2}}
	// Cancelled once the first run is done: no other run starts.
	_, err := Run(ctx, e, ObserverFunc(func(ev Event) {
		if ev.Kind == Done {
			cancel()
		}
	}))
	if !errors.Is(err, context.Canceled) || !reflect.DeepEqual(calls, []string{"a"}) {
		t.Errorf("error %v after runs %v, want context.Canceled after a", err, calls)
	}
	// A method that returns the context's error: returned as it is.
	calls = nil
	ctx2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	_, err = Run(ctx2, e, nil)
	if !errors.Is(err, context.Canceled) || len(calls) != 0 {
		t.Errorf("error %v after runs %v, want context.Canceled before any run", err, calls)
	}
}

// vanilla adapts fl.RunVanilla.
type vanilla struct{ o fl.VanillaOptions }

func (vanilla) Name() string { return fl.MethodVanilla }
func (v vanilla) Run(_ context.Context, ds *data.Dataset, seed uint64, _ Observer) (*fl.MethodResult, error) {
	o := v.o
	o.Seed = seed
	return fl.RunVanilla(ds, fl.NewGPModel(ds.D), o)
}

// The harness changes no bit of a real method's results.
func TestRunMatchesTheMethodRunDirectly(t *testing.T) {
	o := fl.DefaultVanillaOptions()
	o.Steps = 3
	mk := func(seed uint64) (*data.Dataset, error) {
		c := data.DefaultPolynomial()
		c.Existing, c.New, c.Test, c.Extra = 3, 2, 20, 2
		c.Seed = seed
		return data.Polynomial(c)
	}
	seeds := []uint64{2, 9}
	rep, err := Run(context.Background(), Experiment{Data: mk, Methods: []Method{vanilla{o}}, Seeds: seeds}, nil)
	if err != nil {
		t.Fatal(err)
	}
	mr := rep.Method(fl.MethodVanilla)
	if mr == nil || rep.Method("other") != nil {
		t.Fatal("Report.Method does not find the methods by name")
	}
	var ex []float64
	for i, s := range seeds {
		ds, err := mk(s)
		if err != nil {
			t.Fatal(err)
		}
		o.Seed = s
		want, err := fl.RunVanilla(ds, fl.NewGPModel(ds.D), o)
		if err != nil {
			t.Fatal(err)
		}
		got := mr.Results[i]
		if !reflect.DeepEqual(got.Existing, want.Existing) || !reflect.DeepEqual(got.New, want.New) {
			t.Errorf("seed %d: harness %+v, direct %+v", s, got.Existing, want.Existing)
		}
		if !reflect.DeepEqual(mr.PerClient[NewCE][i], want.New.CE) {
			t.Errorf("seed %d: per-client new CE %v, want %v", s, mr.PerClient[NewCE][i], want.New.CE)
		}
		ex = append(ex, want.Existing.MeanRSMSE)
	}
	if got, want := mr.Summary[ExistingRSMSE], fl.Summarise(ex); got != want {
		t.Errorf("summary %+v, want %+v", got, want)
	}
}

func TestSeedValuesOfAMixtureAndOfClassification(t *testing.T) {
	res := &fl.MethodResult{
		Existing: fl.GroupMetrics{MeanRSMSE: 1, MeanCE: 2, Weights: [][]float64{{0.5, 0.5}},
			Modes: &fl.ModeSpecialisation{Purity: 0.9, Chance: 0.5}},
		New: fl.GroupMetrics{MeanRSMSE: 3, MeanCE: 4, Modes: &fl.ModeSpecialisation{Purity: 0.8, Chance: 0.6}},
	}
	want := map[string]float64{ExistingRSMSE: 1, ExistingCE: 2, NewRSMSE: 3, NewCE: 4, ExistingModePurity: 0.9,
		NewModePurity: 0.8, ExistingModeChance: 0.5, NewModeChance: 0.6}
	if got := SeedValues(res); !reflect.DeepEqual(got, want) {
		t.Errorf("mixture: %v, want %v", got, want)
	}
	res.Existing.Weights = [][]float64{{1}} // one prior: no specialisation to measure
	if got := SeedValues(res); len(got) != 4 {
		t.Errorf("one prior: %v, want the four group averages only", got)
	}
	ex, best := 81.5, 80.0
	cls := &fl.MethodResult{
		ExistingClass: &fl.ClassGroupMetrics{Accuracy: []float64{80, 83}, CE: []float64{0.1, 0.2}, MeanAccuracy: 81.5,
			MeanCE: 0.15},
		GlobalClass: &fl.ClassGroupMetrics{MeanAccuracy: 70, MeanCE: 0.3},
		Best:        &fl.BestAccuracy{Existing: &ex, Global: &best},
	}
	got := SeedValues(cls)
	if got[ExistingAccuracy] != 81.5 || got[ExistingCE] != 0.15 || !math.IsNaN(got[NewAccuracy]) ||
		!math.IsNaN(got[NewCE]) ||
		got[GlobalAccuracy] != 70 || got[GlobalCE] != 0.3 || got[BestExisting] != 81.5 || got[BestGlobal] != 80 ||
		len(got) != 8 {
		t.Errorf("classification: %v", got)
	}
	pc := ClientValues(cls)
	if !reflect.DeepEqual(pc[ExistingAccuracy], []float64{80, 83}) || pc[NewAccuracy] == nil ||
		len(pc[NewAccuracy]) != 0 || len(pc) != 4 {
		t.Errorf("classification per client: %v", pc)
	}
	// A global model only (FedAvg): still classification, not a
	// regression result of zeros.
	global := &fl.MethodResult{GlobalClass: &fl.ClassGroupMetrics{MeanAccuracy: 70, MeanCE: 0.3}}
	got = SeedValues(global)
	if got[GlobalAccuracy] != 70 || !math.IsNaN(got[ExistingAccuracy]) {
		t.Errorf("global model only: %v", got)
	}
	if _, ok := got[ExistingRSMSE]; ok {
		t.Errorf("global model only is taken for regression: %v", got)
	}
}

func TestSeeds(t *testing.T) {
	if got := Seeds(3, 5); len(got) != 3 || got[0] != 5 || got[2] != 7 {
		t.Fatalf("Seeds(3, 5) = %v", got)
	}
	if got := Seeds(-1, 5); len(got) != 0 {
		t.Fatalf("Seeds(-1, 5) = %v", got)
	}
}

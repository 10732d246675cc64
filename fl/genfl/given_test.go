package genfl

import (
	"slices"
	"strings"
	"testing"

	"github.com/pacpfl/pacpfl/fl"
)

// A given prior runs PFL and FL-SOB exactly as a learnt one does from the
// point where the prior is known: the same shares (S²_k for the posterior
// and the bound), the same personalisation, bounds and test errors; the
// run copies the prior.
func TestGivenPriorRunsAsLearnt(t *testing.T) {
	_, train, test := netUsers(t, 5)
	learnt := netOptions(LearntPriorKind, Pairs, new([]fl.RoundEvent))
	want, err := RunPFL(train, test, learnt)
	if err != nil {
		t.Fatal(err)
	}
	given := netOptions(GivenPriorKind, Pairs, new([]fl.RoundEvent))
	given.Given = &Prior{Mu: slices.Clone(want.Prior.Mu), Sigma: want.Prior.Sigma}
	got, err := RunPFL(train, test, given)
	if err != nil {
		t.Fatal(err)
	}
	if got.Prior == given.Given || !slices.Equal(got.Prior.Mu, want.Prior.Mu) || got.PriorTest != want.PriorTest {
		t.Errorf("given prior: %v (test %v), want a copy of the learnt one (test %v)", got.Prior.Sigma, got.PriorTest,
			want.PriorTest)
	}
	for k := range want.Clients {
		g, w := got.Clients[k], want.Clients[k]
		if noTimes(g.Bound) != noTimes(w.Bound) || g.TestError != w.TestError || g.TrainError != w.TrainError {
			t.Errorf("user %d: %+v, with the learnt prior %+v", k, g, w)
		}
	}
	wantS, err := RunFLSOB(train, test, learnt)
	if err != nil {
		t.Fatal(err)
	}
	gotS, err := RunFLSOB(train, test, given)
	if err != nil {
		t.Fatal(err)
	}
	if noTimes(gotS.Bound) != noTimes(wantS.Bound) || gotS.TestError != wantS.TestError {
		t.Errorf("FL-SOB: %+v, with the learnt prior %+v", gotS.Bound, wantS.Bound)
	}

	// A different given prior changes the bounds: the prior is used.
	moved := netOptions(GivenPriorKind, Pairs, new([]fl.RoundEvent))
	moved.Given = &Prior{Mu: slices.Clone(want.Prior.Mu), Sigma: 2 * want.Prior.Sigma}
	other, err := RunPFL(train, test, moved)
	if err != nil {
		t.Fatal(err)
	}
	if noTimes(other.Clients[0].Bound) == noTimes(want.Clients[0].Bound) {
		t.Error("a prior twice as wide gave the same bound")
	}
}

func TestGivenPriorChecked(t *testing.T) {
	_, train, test := netUsers(t, 3)
	o := netOptions(GivenPriorKind, Pairs, new([]fl.RoundEvent))
	for _, c := range []struct {
		name  string
		set   func(*Options)
		wants string
	}{
		{"missing", func(o *Options) { o.Given = nil }, "without Options.Given"},
		{"short", func(o *Options) { o.Given = &Prior{Mu: make([]float64, 3), Sigma: 0.1} }, "means for a network"},
		{"sigma", func(o *Options) { o.Given = &Prior{Mu: make([]float64, o.Arch.NumParams())} }, "σ_prior"},
		{"kind", func(o *Options) {
			o.Prior = LearntPriorKind
			o.Given = &Prior{Mu: make([]float64, o.Arch.NumParams()), Sigma: 0.1}
		}, "a given prior with prior kind learnt"},
	} {
		oc := o
		c.set(&oc)
		err := oc.Validate()
		if err == nil || !strings.Contains(err.Error(), c.wants) {
			t.Errorf("%s: Validate %v, want %q", c.name, err, c.wants)
		}
		if c.name == "kind" {
			continue
		}
		if _, err := RunPFL(train, test, oc); err == nil || !strings.Contains(err.Error(), c.wants) {
			t.Errorf("%s: RunPFL %v, want %q", c.name, err, c.wants)
		}
	}
	if GivenPriorKind.String() != "given" {
		t.Errorf("GivenPriorKind is %q", GivenPriorKind)
	}
}

// A given prior that saw none of the users' data (GivenUnseen) uses each
// whole sample, as a data-free prior does: the random prior given back
// gives the random-prior run's bounds and errors.
func TestGivenUnseenPriorUsesWholeSample(t *testing.T) {
	_, train, test := netUsers(t, 4)
	random := netOptions(RandomPriorKind, Pairs, new([]fl.RoundEvent))
	want, err := RunPFL(train, test, random)
	if err != nil {
		t.Fatal(err)
	}
	given := random
	given.Prior, given.GivenUnseen = GivenPriorKind, true
	given.Given = &Prior{Mu: slices.Clone(want.Prior.Mu), Sigma: want.Prior.Sigma}
	got, err := RunPFL(train, test, given)
	if err != nil {
		t.Fatal(err)
	}
	for k := range want.Clients {
		g, w := got.Clients[k], want.Clients[k]
		if noTimes(g.Bound) != noTimes(w.Bound) || g.TestError != w.TestError || g.Bound.M != train[k].M() {
			t.Errorf("user %d: %+v (m %d), with the random prior %+v", k, g.Bound, g.Bound.M, w.Bound)
		}
	}
	halves := given
	halves.GivenUnseen = false
	h, err := RunPFL(train, test, halves)
	if err != nil {
		t.Fatal(err)
	}
	if h.Clients[0].Bound.M != train[0].M()-train[0].M()/2 {
		t.Errorf("a given prior without GivenUnseen bounds on %d examples, want the second half", h.Clients[0].Bound.M)
	}
	bad := random
	bad.GivenUnseen = true
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "a given prior with prior kind random") {
		t.Errorf("GivenUnseen with a random prior: %v", err)
	}
}

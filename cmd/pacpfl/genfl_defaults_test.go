package main

import (
	"flag"
	"io"
	"reflect"
	"testing"

	"github.com/pacpfl/pacpfl/fl/genfl"
)

// The flags of experiment genfl, left at their defaults, give the seed's
// settings of genfl.DefaultOptions (with the workers and the flags' own
// overrides), so the library and the CLI cannot drift apart.
func TestGenFLFlagDefaultsAreTheLibrarys(t *testing.T) {
	for _, c := range []struct {
		args  []string
		prior genfl.PriorKind
		est   genfl.Estimator
	}{
		{nil, genfl.LearntPriorKind, genfl.Pairs},
		{[]string{"--prior", "random"}, genfl.RandomPriorKind, genfl.Pairs},
		{[]string{"--estimator", "full"}, genfl.LearntPriorKind, genfl.Full},
		{[]string{"--prior", "random", "--estimator", "full"}, genfl.RandomPriorKind, genfl.Full},
	} {
		fs := flag.NewFlagSet("genfl", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var g genflFlags
		addGenFLFlags(fs, &g)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		got, err := g.options(7)
		if err != nil {
			t.Fatal(err)
		}
		want := genfl.DefaultOptions(c.prior, c.est, 7)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%v:\nflags   %+v\nlibrary %+v", c.args, got, want)
		}
	}
	// A flag given overrides the default it names, and only it.
	fs := flag.NewFlagSet("genfl", flag.ContinueOnError)
	var g genflFlags
	addGenFLFlags(fs, &g)
	if err := fs.Parse(
		[]string{"--rounds", "3", "--kl-penalty", "0.5", "--mc-samples", "99", "--hidden", "20"}); err != nil {
		t.Fatal(err)
	}
	got, err := g.options(7)
	if err != nil {
		t.Fatal(err)
	}
	want := genfl.DefaultOptions(genfl.LearntPriorKind, genfl.Pairs, 7)
	want.PosteriorFed.Rounds, want.Objective.KLPenalty, want.MC.N, want.Arch.Hidden = 3, 0.5, 99, []int{20}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("overrides:\nflags   %+v\nlibrary %+v", got, want)
	}
}

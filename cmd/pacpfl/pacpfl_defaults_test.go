package main

import (
	"reflect"
	"testing"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/methods"
)

// The training flags' defaults are the library's: experiment's PAC-PFL and
// pFedGP with no flags given are methods.DefaultPACPFL and DefaultPFedGP of
// the data set's preset (the seeds, set per run, aside).
func TestPACPFLFlagDefaultsAreTheLibrarys(t *testing.T) {
	for _, c := range []struct {
		ds     string
		preset methods.Preset
	}{{"polynomial", methods.Polynomial}, {"pv", methods.PV}} {
		fs := newFlagSet("experiment "+c.ds, nil)
		f := regressionFlags(c.ds)
		f.registerSVGD(fs)
		f.registerTemp(fs)
		f.registerDP(fs)
		f.registerData(fs)
		f.net.register(fs)
		f.registerInference(fs)
		f.registerComparison(fs)
		pv := addPVFlags(fs, c.ds)
		if err := fs.Parse(nil); err != nil {
			t.Fatal(err)
		}
		if err := pv.apply(&f); err != nil {
			t.Fatal(err)
		}
		if err := f.afterParse(fs, ""); err != nil {
			t.Fatal(err)
		}
		f.pfedgpMean = "zero"
		f.poly.Existing, f.poly.New = 5, 2
		ds, err := f.dataset(3)
		if err != nil {
			t.Fatal(err)
		}
		pm, err := methods.DefaultPACPFL(c.preset)
		if err != nil {
			t.Fatal(err)
		}
		gm, err := methods.DefaultPFedGP(c.preset)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range []struct {
			name string
			want fl.PACPFLOptions
		}{{fl.MethodPACPFL, pm.Options}, {fl.MethodPFedGP, gm.Options}} {
			hms, err := f.regressionMethods([]string{w.name}, ds, 3)
			if err != nil {
				t.Fatal(err)
			}
			hm := hms[0]
			var got fl.PACPFLOptions
			switch m := hm.(type) {
			case methods.PACPFL:
				got = m.Options
			case methods.PFedGP:
				got = m.Options
			default:
				t.Fatalf("%s: a %T", w.name, hm)
			}
			if hm.Name() != w.name {
				t.Errorf("%s: named %q", w.name, hm.Name())
			}
			got.Server.Seed, got.Bounds.Seed = 0, 0
			// The flag spells out the default number of draws (0 in the
			// library means it).
			if l := got.Bounds.Learned; l != nil && l.Samples == fl.DefaultLearnedSamples {
				got.Bounds.Learned = &fl.LearnedBoundOptions{Widths: l.Widths}
			}
			// pFedGP computes no bounds (its prior is not PAC-PFL's).
			if w.name == fl.MethodPFedGP {
				got.Bounds = w.want.Bounds
			}
			if !reflect.DeepEqual(got, w.want) {
				t.Errorf("%s %s:\nflags   %+v\nlibrary %+v", c.ds, w.name, got, w.want)
			}
		}
	}
}

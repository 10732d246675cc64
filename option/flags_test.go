package option

import (
	"flag"
	"testing"
)

type inner struct {
	LR    float64
	Steps int
	Names []string
}

type scale string

type outer struct {
	K      int
	Fed    inner
	Prior  inner
	Scale  scale
	hidden int
	Free   int
}

// list is a flag.Value of its own, bound like flag.Var of a pointer.
type list []string

func (s *list) String() string     { return "" }
func (s *list) Set(v string) error { *s = append(*s, v); return nil }

// FlagNames reads the fields' flags off their bindings, whatever the
// field's nesting and type, and prefers a long name to its alias.
func TestFlagNames(t *testing.T) {
	var o outer
	var other int
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.IntVar(&o.K, "k", 0, "")
	fs.IntVar(&o.K, "particles", 0, "")
	fs.Float64Var(&o.Fed.LR, "lr", 0, "")
	fs.IntVar(&o.Prior.Steps, "prior-steps", 0, "")
	fs.Var((*list)(&o.Fed.Names), "name", "")
	fs.StringVar((*string)(&o.Scale), "scale", "", "")
	fs.IntVar(&o.hidden, "hidden", 0, "")
	fs.IntVar(&other, "other", 0, "")
	fs.Bool("free", false, "")
	got := FlagNames(fs, &o)
	want := map[string]string{"K": "particles", "Fed.LR": "lr", "Prior.Steps": "prior-steps", "Fed.Names": "name",
		"Scale": "scale"}
	if len(got) != len(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	// The first field of a struct shares its address: the kinds tell them
	// apart.
	var p struct{ In struct{ N float64 } }
	fs = flag.NewFlagSet("y", flag.ContinueOnError)
	fs.Float64Var(&p.In.N, "n", 0, "")
	if got := FlagNames(fs, &p); len(got) != 1 || got["In.N"] != "n" {
		t.Errorf("nested first field: %v", got)
	}
}

package fl

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"slices"
	"testing"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/lml"
)

// InducingFor is the documented rule, recomputed here from its words (so
// that a tool outside Go can follow them), and the Z a sparse client trains
// with.
func TestInducingForIsTheClientsZ(t *testing.T) {
	ds, err := data.Polynomial(smallPoly(3))
	if err != nil {
		t.Fatal(err)
	}
	gi := GPInference{Mode: InferenceSparse, Inducing: 5, Seed: 77}
	c := &ds.Existing[2]
	got, err := gi.InducingFor(c.X, ds.D, 5)
	if err != nil {
		t.Fatal(err)
	}
	h := fnv.New64a()
	for _, v := range c.X {
		h.Write(binary.LittleEndian.AppendUint64(nil, math.Float64bits(v)))
	}
	want, err := lml.SelectInducing(c.X, ds.D, 5, 77^h.Sum64())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("InducingFor %v, the documented rule gives %v", got, want)
	}
	g := NewGPModel(ds.D)
	g.Inference = gi
	cl, err := g.NewClient(c)
	if err != nil {
		t.Fatal(err)
	}
	sc, ok := cl.(*sparseClient)
	if !ok {
		t.Fatalf("client %T, want a sparse client", cl)
	}
	if !slices.Equal(sc.z, got) {
		t.Errorf("the sparse client trains with Z %v, InducingFor gives %v", sc.z, got)
	}
}

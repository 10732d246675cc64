package methods

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/genfl"
	"github.com/pacpfl/pacpfl/lml"
)

func tinyPACPFLPriorBound() PACPFLPriorBound {
	m := DefaultPACPFLPriorBound()
	m.PACPFL.Model = tinyBNNModel
	m.PACPFL.Options.Server = fl.Config{K: 2, Rounds: 4, ClientsPerRound: 3, Batch: 16, LR: 1e-2, Optimizer: "adam",
		Tau: 0.5}
	m.PACPFL.Options.Bounds.PriorSamples = 0
	m.GenFL.PersonalEpochs, m.GenFL.TestDraws, m.GenFL.ClientMC.N = 1, 2, 500
	return m
}

// The weights of a PAC-PFL particle mean the same network in GenFL's MLP:
// a prior mean built in lml.BNN's layout that copies pixel c to hidden
// unit c and hidden unit c to class c classifies by the brightest of the
// first three pixels without an error; read in any other order it errs.
func TestPACPFLPriorLayout(t *testing.T) {
	b := tinyBNNArch.WithDefaults()
	phi := make([]float64, b.NumParams())
	off := map[string]int{}
	for _, blk := range b.WeightLayout() {
		off[blk.Name] = blk.Offset
	}
	for c := range 3 {
		phi[off["dense1.weight"]+c*b.D()+c] = 1    // [H, D]: hidden c ← pixel c
		phi[off["dense2.weight"]+c*b.Hidden+c] = 1 // [C, H]: class c ← hidden c
	}
	p, err := PACPFLPrior(b, phi, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	arch, _ := PACPFLArch(b)
	x := make([]float64, 30*b.D())
	y := make([]int, 30)
	for i := range y {
		y[i] = i % 3
		for j := range 3 {
			x[i*b.D()+j] = 0.1 * float64(j)
		}
		x[i*b.D()+y[i]] = 1
	}
	c := genfl.Client{X: x, Y: y}
	if e, err := genfl.MeanError(p.Mu, arch, []genfl.Client{c}); err != nil || e != 0 {
		t.Fatalf("error of the copied network %v (%v), want 0", e, err)
	}
	// The first layer written as if it were [D, H] is another network.
	tr := slices.Clone(p.Mu)
	for c := range 3 {
		tr[off["dense1.weight"]+c*b.D()+c] = 0
	}
	for c := range 3 {
		tr[off["dense1.weight"]+c*b.Hidden+c] = 1
	}
	if e, _ := genfl.MeanError(tr, arch, []genfl.Client{c}); e == 0 {
		t.Error("a moved weight still classified without an error: the check cannot fail")
	}

	for _, bad := range []struct {
		b    lml.BNN
		phi  []float64
		want string
	}{
		{lml.BNN{Arch: lml.ArchBCNN}, phi, "MLP"},
		{b, phi[:10], "particle of 10 values"},
		{b, append([]float64{math.NaN()}, phi[1:]...), "prior mean 0 is NaN"},
	} {
		_, err := PACPFLPrior(bad.b, bad.phi, 0.1)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("PACPFLPrior: %v, want %q", err, bad.want)
		}
	}
	if _, err := PACPFLPrior(b, phi, 0); err == nil {
		t.Error("σ_P = 0 accepted")
	}
}

// The prior is trained on the first halves only: changing the second
// halves (the bound's sample) and the new clients' data leaves PAC-PFL's
// particles as they were,
// changing a first half moves them; and the result's means are the runs'.
func TestPACPFLPriorBoundSeparatesData(t *testing.T) {
	m := tinyPACPFLPriorBound()
	ds := tinyImages(t, 5)
	ctx := context.Background()
	run := func(ds *data.Dataset) *PACPFLPriorResult {
		t.Helper()
		r, err := m.Run(ctx, ds, 7, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r.Detail.(*PACPFLPriorResult)
	}
	want := run(ds)
	if len(want.Runs) != 2 || want.Train.K != 2 {
		t.Fatalf("%d runs for %d particles, want 2", len(want.Runs), want.Train.K)
	}
	for i := range want.Bound {
		b := (want.Runs[0].Clients[i].Bound.Bound + want.Runs[1].Clients[i].Bound.Bound) / 2
		if math.Abs(want.Bound[i]-b) > 1e-15 || !(want.Bound[i] > 0 && want.Bound[i] <= 1) {
			t.Errorf("client %d: bound %v, the runs' mean %v", i, want.Bound[i], b)
		}
		if d := want.Runs[0].Clients[i].Bound.Delta; math.Abs(d-want.Delta/2) > 1e-15 {
			t.Errorf("client %d: δ of a particle's bound %v, want δ/k = %v", i, d, want.Delta/2)
		}
	}

	// New clients: PAC-PFL never saw them; each whole sample is the bound's.
	if len(want.NewRuns) != 2 || len(want.NewBound) != len(ds.New) {
		t.Fatalf("%d new-client runs, %d new bounds for %d new clients", len(want.NewRuns), len(want.NewBound),
			len(ds.New))
	}
	for i, c := range ds.New {
		b := want.NewRuns[0].Clients[i].Bound
		if b.M != c.M() || !(want.NewBound[i] > 0 && want.NewBound[i] <= 1) {
			t.Errorf("new client %d: bound %v on %d examples, want its %d", i, want.NewBound[i], b.M, c.M())
		}
	}
	if p := want.NewPFL(); len(p.Clients) != len(ds.New) || p.Clients[0].Bound.Bound != want.NewBound[0] {
		t.Errorf("NewPFL: %d clients, first bound %v", len(p.Clients), p.Clients[0].Bound.Bound)
	}

	second := cloneDataset(ds)
	for i := range second.New {
		c := &second.New[i]
		for j := range c.Y {
			c.Y[j] = float64((int(c.Y[j]) + 1) % 3)
		}
	}
	for i := range second.Existing {
		c := &second.Existing[i]
		for j := c.M() / 2; j < c.M(); j++ {
			c.Y[j] = float64((int(c.Y[j]) + 1) % 3)
		}
	}
	got := run(second)
	if !slices.Equal(got.Train.Particles, want.Train.Particles) {
		t.Error("the second halves (the bound's sample) changed PAC-PFL's prior")
	}
	if slices.Equal(got.Bound, want.Bound) || slices.Equal(got.NewBound, want.NewBound) {
		t.Error("new labels on the bound's sample left every bound as it was")
	}

	first := cloneDataset(ds)
	c := &first.Existing[0]
	c.Y[0] = float64((int(c.Y[0]) + 1) % 3)
	if slices.Equal(run(first).Train.Particles, want.Train.Particles) {
		t.Error("a first-half label did not reach PAC-PFL's prior: the check cannot fail")
	}
}

func cloneDataset(ds *data.Dataset) *data.Dataset {
	c := *ds
	clone := func(cs []data.ClientData) []data.ClientData {
		out := make([]data.ClientData, len(cs))
		for i, e := range cs {
			e.X, e.Y = slices.Clone(e.X), slices.Clone(e.Y)
			out[i] = e
		}
		return out
	}
	c.Existing, c.New = clone(ds.Existing), clone(ds.New)
	return &c
}

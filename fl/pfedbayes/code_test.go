package pfedbayes

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl/internal/meanfield"
)

// handAdam is one scalar's Adam (PyTorch's update) written out.
type handAdam struct{ m, v float64 }

func (a *handAdam) step(g, eta float64, t int) float64 {
	a.m = 0.9*a.m + 0.1*g
	a.v = 0.999*a.v + 0.001*g*g
	mh := a.m / (1 - math.Pow(0.9, float64(t)))
	vh := a.v / (1 - math.Pow(0.999, float64(t)))
	return eta * mh / (math.Sqrt(vh) + 1e-8) // the textbook form
}

// Two local iterations of the Code variant against a hand computation, with
// SGD and with Adam: P = 2 personalised steps on (ζ/R)·KL − Σ ln p with
// draws of standard deviation s, each with σ_i fresh and the σ_w of the
// last global step's start; then the global step on (ζ/R)·KL at the current
// μ_i and the σ_i of the last personalised step's start.
func TestCodeStepByHand(t *testing.T) {
	const nw = 3*2 + 3 + 2*3 + 2
	r := rand.New(rand.NewPCG(3, 9))
	vi0, vw0 := make([]float64, 2*nw), make([]float64, 2*nw)
	for j := 0; j < nw; j++ {
		vi0[j], vw0[j] = r.NormFloat64(), r.NormFloat64()
		vi0[nw+j], vw0[nw+j] = -1+0.5*r.NormFloat64(), -1+0.5*r.NormFloat64()
	}
	x := []float64{0.5, -1, 1.5, 0.25, -0.7, 0.9}
	y := []float64{1, 0, 1}
	const s = 0.3 // large enough that the ρ_i data term shows
	o := Options{Zeta: 3, LR1: 0.01, LR2: 0.02, MC: 1, LocalSteps: 4, PersonalSteps: 2, NoiseStd: s, Variant: Code}
	kw := o.Zeta / float64(o.LocalSteps)
	m := float64(len(y))
	sp := func(u float64) float64 { return math.Log1p(math.Exp(u)) }
	sg := func(u float64) float64 { return 1 / (1 + math.Exp(-u)) }
	for _, adam := range []bool{false, true} {
		w, err := newWorker(tinyArch)
		if err != nil {
			t.Fatal(err)
		}
		vi, vw := slices.Clone(vi0), slices.Clone(vw0)
		w.beginCode(vi, vw)
		if adam {
			fresh := func() *adamState { return &adamState{m: make([]float64, 2*nw), s: make([]float64, 2*nw)} }
			w.adamQ, w.adamW = fresh(), fresh()
		}
		w.nrm = meanfield.NewNormals(rand.New(rand.NewPCG(11, 1)))
		probe := meanfield.NewNormals(rand.New(rand.NewPCG(11, 1)))
		mi, ri := slices.Clone(vi0[:nw]), slices.Clone(vi0[nw:])
		mw, rw := slices.Clone(vw0[:nw]), slices.Clone(vw0[nw:])
		aq, aw := make([]handAdam, 2*nw), make([]handAdam, 2*nw)
		tq, tw := 0, 0
		upd := func(v *float64, a *handAdam, g, eta float64, t int) {
			if adam {
				*v -= a.step(g, eta, t)
			} else {
				*v -= eta * g
			}
		}
		swStale := make([]float64, nw) // σ_w at the round's start
		for j := range swStale {
			swStale[j] = sp(rw[j])
		}
		sqLast := make([]float64, nw)
		for it := 0; it < 2; it++ {
			for p := 0; p < o.PersonalSteps; p++ {
				tq++
				th, e := make([]float64, nw), make([]float64, nw)
				for j := range th {
					sqLast[j] = sp(ri[j])
					e[j] = s * probe.Norm()
					th[j] = mi[j] + sqLast[j]*e[j]
				}
				g := handGrad(th, x, y)
				for j := 0; j < nw; j++ {
					sq, sw := sqLast[j], swStale[j]
					gm := m*g[j] + kw*(mi[j]-mw[j])/(sw*sw)
					gr := (m*g[j]*e[j] + kw*(sq/(sw*sw)-1/sq)) * sg(ri[j])
					upd(&mi[j], &aq[j], gm, o.LR1, tq)
					upd(&ri[j], &aq[nw+j], gr, o.LR1, tq)
				}
			}
			tw++
			for j := 0; j < nw; j++ {
				sw := sp(rw[j])
				swStale[j] = sw
				d := mi[j] - mw[j]
				gm := kw * (-d / (sw * sw))
				gr := kw * (1/sw - (sqLast[j]*sqLast[j]+d*d)/(sw*sw*sw)) * sg(rw[j])
				upd(&mw[j], &aw[j], gm, o.LR2, tw)
				upd(&rw[j], &aw[nw+j], gr, o.LR2, tw)
			}
			if _, err := w.codeStep(x, y, &o); err != nil {
				t.Fatal(err)
			}
			for j := 0; j < nw; j++ {
				for _, c := range []struct {
					name      string
					got, want float64
				}{{"μ_i", vi[j], mi[j]}, {"ρ_i", vi[nw+j], ri[j]}, {"μ_w", vw[j], mw[j]}, {"ρ_w", vw[nw+j], rw[j]}} {
					if math.Abs(c.got-c.want) > 1e-12*math.Max(1, math.Abs(c.want)) {
						t.Fatalf("adam %v, iteration %d: %s[%d] = %.15g, by hand %.15g", adam, it, c.name, j, c.got,
							c.want)
					}
				}
			}
		}
		if a := testing.AllocsPerRun(20, func() {
			if _, err := w.codeStep(x, y, &o); err != nil {
				t.Fatal(err)
			}
		}); a != 0 {
			t.Errorf("adam %v: a code-variant iteration allocates %v times", adam, a)
		}
	}
}

// The Code variant's batches walk the rows in order, the last of a pass
// holding what is left, and go on where the last round stopped.
func TestBatchCursor(t *testing.T) {
	c := data.ClientData{X: []float64{0, 0, 1, 1, 2, 2, 3, 3, 4, 4}, Y: []float64{0, 1, 2, 3, 4}}
	var bc batchCursor
	var got [][]float64
	for range 5 {
		_, y := bc.batch(&c, 2, 2)
		got = append(got, y)
	}
	want := [][]float64{{0, 1}, {2, 3}, {4}, {0, 1}, {2, 3}}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Fatalf("batches %v, want %v", got, want)
		}
	}
	x, _ := bc.batch(&c, 2, 2)
	if !slices.Equal(x, []float64{4, 4}) {
		t.Errorf("rows %v of the last batch", x)
	}
}

// A Code-variant run depends on its seed only (GOMAXPROCS 1 and 2), only
// the S selected clients train (the others keep v⁰ after one round), and
// the server's model is their size-weighted mean (β = 1).
func TestCodeRun(t *testing.T) {
	ds := data.Blobs(4, 30, 20, 3)
	ds.Existing[1].X, ds.Existing[1].Y = ds.Existing[1].X[:10*2], ds.Existing[1].Y[:10] // unequal sizes
	o := CodeOptions()
	o.Arch, o.Batch, o.LocalSteps, o.Rounds, o.ClientsPerRound, o.EvalLast, o.Seed = tinyArch, 8, 3, 4, 3, 2, 5
	run := func(procs int, o Options) *Result {
		prev := runtime.GOMAXPROCS(procs)
		defer runtime.GOMAXPROCS(prev)
		r, err := Run(ds, o)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a, b := run(1, o), run(2, o)
	if !slices.Equal(a.Global, b.Global) || fmt.Sprint(a.History) != fmt.Sprint(b.History) {
		t.Fatalf("GOMAXPROCS 1 and 2 differ: %v vs %v", a.History, b.History)
	}
	for i := range a.Clients {
		if !slices.Equal(a.Clients[i], b.Clients[i]) {
			t.Fatalf("client %d's state differs", i)
		}
	}
	p := o
	p.Variant, p.PersonalSteps = Paper, 1
	if c := run(2, p); slices.Equal(c.Global, a.Global) {
		t.Error("the paper variant gave the code variant's model")
	}
	// One round: the untrained client keeps v⁰; the server holds the
	// size-weighted mean of the three trained clients' localised models.
	o.Rounds, o.EvalLast = 1, 1
	r := run(2, o)
	o.Rounds = 0
	v0 := run(2, o).Global
	var idle []int
	for i, c := range r.Clients {
		if slices.Equal(c, v0) {
			idle = append(idle, i)
		}
	}
	if len(idle) != 1 {
		t.Fatalf("clients %v untouched by a round with S = 3 of 4", idle)
	}
	// Replay the three updates by hand from v⁰ with the round's streams.
	nw := tinyArch.NumWeights()
	mean := make([]float64, 2*nw)
	var total float64
	for i := range ds.Existing {
		if i == idle[0] {
			continue
		}
		w, err := newWorker(tinyArch)
		if err != nil {
			t.Fatal(err)
		}
		st := clientState{v: slices.Clone(v0)}
		z := func() *adamState { return &adamState{m: make([]float64, 2*nw), s: make([]float64, 2*nw)} }
		st.adamQ, st.adamW = z(), z()
		out := make([]float64, 2*nw)
		rng := rand.New(rand.NewPCG(o.Seed, data.StreamID(tagRound, 0, uint64(i))))
		if err := w.clientUpdate(&ds.Existing[i], &st, v0, out, &o, rng); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(st.v, r.Clients[i]) {
			t.Fatalf("client %d's replayed state differs", i)
		}
		n := float64(ds.Existing[i].M())
		total += n
		for j, v := range out {
			mean[j] += n * v
		}
	}
	for j := range mean {
		if math.Abs(mean[j]/total-r.Global[j]) > 1e-14*math.Max(1, math.Abs(r.Global[j])) {
			t.Fatalf("global[%d] = %v, the size-weighted mean %v", j, r.Global[j], mean[j]/total)
		}
	}
}

func TestParseVariant(t *testing.T) {
	for _, v := range []Variant{Paper, Code} {
		if got, err := ParseVariant(v.String()); err != nil || got != v {
			t.Errorf("%v: %v, %v", v, got, err)
		}
	}
	if _, err := ParseVariant("torch"); err == nil {
		t.Error("an unknown variant accepted")
	}
	o := DefaultOptions()
	o.PersonalSteps = 5
	if err := o.Validate(); err == nil {
		t.Error("5 personalised steps accepted by the paper variant")
	}
	o = CodeOptions()
	o.NoiseStd = 0
	if err := o.Validate(); err == nil {
		t.Error("noise std 0 accepted")
	}
}
